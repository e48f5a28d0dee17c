"""PostgresSaver / AsyncPostgresSaver beyond the conformance suite: LangGraph interop both ways
on one database, blob sharing, filter-key injection, the errors a user meets, many threads."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import operator
import sys
import threading
import uuid
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver as LGBaseSaver
from langgraph.checkpoint.base import CheckpointTuple as LGCheckpointTuple
from langgraph.checkpoint.base import create_checkpoint as lg_create_checkpoint
from langgraph.checkpoint.base import empty_checkpoint as lg_package_empty_checkpoint
from langgraph.checkpoint.postgres import PostgresSaver as LGPostgresSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt
from psycopg.conninfo import make_conninfo
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from lgcheckpoint import graph as our_graph
from lgcheckpoint.checkpoint.base import (
    TASKS, PutWrites, empty_checkpoint, next_string_version,
)
from lgcheckpoint.checkpoint.id import uuid6
from lgcheckpoint.checkpoint.postgres import PostgresSaver, sql
from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver
from lgcheckpoint.errors import InvalidCheckpointError, SaverNotSetUpError, UnsafeTypeError

pytestmark = pytest.mark.postgres


# --- helpers -------------------------------------------------------------------------------------
@pytest.fixture
def saver(postgres_uri):
    """Our saver on the session database, tables set up and emptied."""
    with PostgresSaver.from_conn_string(postgres_uri) as saver:
        saver.setup()
        saver.conn.execute("TRUNCATE checkpoints, checkpoint_blobs, checkpoint_writes")
        yield saver


def cfg(thread_id: str = "t", ns: str = "", checkpoint_id: str | None = None) -> dict:
    conf = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def make_checkpoint(**values: Any) -> dict:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = {k: next_string_version(None) for k in values}
    return checkpoint


def put_chain(
    saver, thread_id: str = "t", n: int = 3, value=lambda step: step, **meta: Any
) -> list[dict]:
    """n checkpoints in a row, each the parent of the next, with a changing 'step' channel."""
    saved, parent, versions = [], cfg(thread_id), {}
    for step in range(n):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"step": value(step)}
        versions = {"step": saver.get_next_version(versions.get("step"))}
        checkpoint["channel_versions"] = dict(versions)
        parent = saver.put(parent, checkpoint, {"source": "loop", "step": step, **meta}, versions)
        saved.append(parent)
    return saved


def count(saver, table: str, where: str = "TRUE", params: tuple = ()) -> int:
    return saver.conn.execute(f"SELECT count(*) FROM {table} WHERE {where}", params).fetchone()[0]


def plain(value: Any) -> Any:
    """Compare tuples across libraries: their Interrupt and ours differ only in class."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if type(value).__name__ == "Interrupt":
        return ("Interrupt", value.value, value.id)
    return value


class OnLangGraph(LGBaseSaver):
    """Lets a LangGraph graph run on our saver (LangGraph insists on its own base class)."""

    def __init__(self, ours: PostgresSaver) -> None:
        super().__init__()
        self.ours = ours

    def get_tuple(self, config):
        found = self.ours.get_tuple(config)
        return LGCheckpointTuple(*found) if found else None

    def list(self, config, **kwargs):
        return (LGCheckpointTuple(*t) for t in self.ours.list(config, **kwargs))

    def put(self, config, checkpoint, metadata, new_versions):
        return self.ours.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes, task_id, task_path=""):
        self.ours.put_writes(config, writes, task_id, task_path)

    def get_next_version(self, current, channel):
        return self.ours.get_next_version(current)


class State(TypedDict):
    text: str  # a long str: LangGraph keeps it inline in every checkpoint, we keep it in one blob
    doc: dict
    n: int
    log: Annotated[list[str], operator.add]


def langgraph_graph():
    """Fan-out (several writes in one step), a subgraph (a second namespace) and an interrupt."""
    inner = StateGraph(State)
    inner.add_node("inner", lambda s: {"log": ["inner"]})
    inner.add_edge(START, "inner")

    def approve(state: State) -> dict:
        return {"doc": {**state["doc"], "ok": interrupt("approve?")}, "log": ["approve"]}

    g = StateGraph(State)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"n": s["n"] * 2, "log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_node("sub", inner.compile())
    g.add_node("approve", approve)
    for edge in [
        (START, "a"),
        ("a", "b"),
        ("a", "c"),
        ("b", "sub"),
        ("sub", "approve"),
        ("approve", END),
    ]:
        g.add_edge(*edge)
    return g


START_STATE = {"text": "hello " * 100, "doc": {"k": 1}, "n": 1, "log": []}
assert len(START_STATE["text"]) > sql.INLINE_MAX_CHARS


def reference_final_state(resume: Any) -> dict:
    """What LangGraph alone ends with, on its in-memory saver."""
    from langgraph.checkpoint.memory import InMemorySaver

    app = langgraph_graph().compile(checkpointer=InMemorySaver())
    app.invoke(START_STATE, cfg("reference"))
    return app.invoke(Command(resume=resume), cfg("reference"))


def history(saver, thread_id: str) -> list:
    return plain([tuple(t) for t in saver.list({"configurable": {"thread_id": thread_id}})])


# --- interop with LangGraph's PostgresSaver on one database --------------------------------------
def test_reads_a_thread_langgraph_wrote(saver, postgres_uri):
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        app = langgraph_graph().compile(checkpointer=lg)
        app.invoke(START_STATE, cfg("lg"))
        app.invoke(Command(resume=True), cfg("lg"))
        theirs = history(lg, "lg")
    assert len(theirs) > 8 and any(t[0]["configurable"]["checkpoint_ns"] for t in theirs)
    assert history(saver, "lg") == theirs
    assert any(t[4] for t in theirs)  # pending writes were compared too


def write_pre_v4_thread(lg, thread_id: str) -> None:
    """Rows as LangGraph's checkpoint package writes them: v=2, Sends as the parent's writes."""
    first = lg_package_empty_checkpoint()
    first["channel_values"], first["channel_versions"] = {"x": 1}, {"x": next_string_version(1)}
    config = lg.put(cfg(thread_id), first, {}, first["channel_versions"])
    lg.put_writes(config, [(TASKS, "send-1"), (TASKS, "send-2")], "task-1")
    lg.put_writes(config, [(TASKS, "send-3")], "task-2")
    lg.put(config, lg_create_checkpoint(first, None, 1), {}, {})


def test_a_pre_v4_checkpoint_reads_its_parents_sends_as_langgraph_does(saver, postgres_uri):
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        write_pre_v4_thread(lg, "old")
        theirs = history(lg, "old")
        their_latest = plain(tuple(lg.get_tuple(cfg("old"))))
    ours = history(saver, "old")
    assert ours == theirs and plain(tuple(saver.get_tuple(cfg("old")))) == their_latest
    child, root = ours
    assert child[1]["channel_values"][TASKS] == ["send-1", "send-2", "send-3"]
    assert child[1]["channel_versions"][TASKS] == root[1]["channel_versions"]["x"]  # newest
    assert TASKS not in root[1]["channel_values"]  # the root has no parent to take Sends from


async def test_async_saver_reads_pre_v4_sends_the_same(saver, postgres_uri):
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        write_pre_v4_thread(lg, "old")
    async with AsyncPostgresSaver.from_conn_string(postgres_uri) as asaver:
        found = [tuple(t) async for t in asaver.alist(cfg("old"))]
        latest = await asaver.aget_tuple(cfg("old"))
    assert plain(found) == history(saver, "old")
    assert latest.checkpoint["channel_values"][TASKS] == ["send-1", "send-2", "send-3"]


def test_a_v4_checkpoint_never_takes_its_parents_sends(saver):
    first = saver.put(cfg("new"), make_checkpoint(x=1), {}, {"x": next_string_version(None)})
    saver.put_writes(first, [(TASKS, "send-1")], "task-1")
    child = {**make_checkpoint(), "v": 4, "id": str(uuid6(clock_seq=1))}
    saver.put(first, child, {}, {})
    assert TASKS not in saver.get_tuple(cfg("new")).checkpoint["channel_values"]


def test_setup_runs_the_migrations_of_the_class_attribute(postgres_uri):
    class Extended(PostgresSaver):
        MIGRATIONS = [*PostgresSaver.MIGRATIONS,
                      "CREATE TABLE IF NOT EXISTS extended_marker (id INTEGER);"]

    with Extended.from_conn_string(postgres_uri) as saver:
        saver.conn.execute("DROP TABLE IF EXISTS extended_marker")
        saver.setup()
        assert count(saver, "extended_marker") == 0  # the table exists: the query ran
        saver.conn.execute("DROP TABLE extended_marker")
        saver.conn.execute("DELETE FROM checkpoint_migrations WHERE v = %s",
                           (len(Extended.MIGRATIONS) - 1,))


def test_langgraph_reads_what_we_wrote_and_resumes_it(saver, postgres_uri):
    app = langgraph_graph().compile(checkpointer=OnLangGraph(saver))
    interrupted = app.invoke(START_STATE, cfg("ours"))
    assert "__interrupt__" in interrupted
    # both forms LangGraph must read: n inline in the JSONB, doc and the long text as blobs
    assert count(saver, "checkpoints", "checkpoint -> 'channel_values' ? 'n'") > 0
    assert (
        count(saver, "checkpoints", "checkpoint -> 'channel_values' ?| array['text', 'doc']") == 0
    )
    text_versions = (
        "(SELECT DISTINCT checkpoint -> 'channel_versions' ->> 'text' AS v FROM checkpoints "
        "WHERE checkpoint_ns = '') AS versions"
    )
    assert (
        count(saver, "checkpoint_blobs", "channel = 'text' AND checkpoint_ns = ''")
        == count(saver, text_versions, "v IS NOT NULL")
        < count(saver, "checkpoints", "checkpoint_ns = ''")
    )
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        assert history(lg, "ours") == history(saver, "ours")
        final = (
            langgraph_graph().compile(checkpointer=lg).invoke(Command(resume="yes"), cfg("ours"))
        )
    assert final == reference_final_state("yes") and final["doc"] == {"k": 1, "ok": "yes"}


def test_thread_started_by_langgraph_goes_on_with_ours(saver, postgres_uri):
    """An unchanged str that LangGraph kept inline (no blob) survives into our checkpoints."""
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        langgraph_graph().compile(checkpointer=lg).invoke(START_STATE, cfg("mixed"))
    final = (
        langgraph_graph()
        .compile(checkpointer=OnLangGraph(saver))
        .invoke(Command(resume=1), cfg("mixed"))
    )
    assert final == reference_final_state(1) and final["text"] == START_STATE["text"]
    latest = saver.get_tuple(cfg("mixed"))
    assert latest.checkpoint["channel_values"]["text"] == START_STATE["text"]
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        assert plain(tuple(lg.get_tuple(cfg("mixed")))) == plain(tuple(latest))


# --- storage: small primitives inline, the rest one blob per version ------------------------------
@pytest.mark.parametrize("big", ["x" * 100_000, {"rows": list(range(10_000))}], ids=["str", "dict"])
def test_an_unchanged_channel_is_stored_once(saver, postgres_uri, big):
    def fill(target, thread_id: str, n: int = 20) -> None:
        parent, versions = cfg(thread_id), {}
        for step in range(n):
            changed = ["step"] if step else ["step", "big"]
            for channel in changed:
                versions[channel] = target.get_next_version(versions.get(channel), None)
            checkpoint = empty_checkpoint()
            checkpoint["channel_values"] = {"big": big, "step": step}
            checkpoint["channel_versions"] = dict(versions)
            parent = target.put(
                parent, checkpoint, {"step": step}, {c: versions[c] for c in changed}
            )

    fill(saver, "ours")
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        fill(lg, "theirs")
    assert count(saver, "checkpoint_blobs", "thread_id = 'ours' AND channel = 'big'") == 1
    assert count(saver, "checkpoint_blobs", "thread_id = 'ours' AND channel = 'step'") == 0
    assert (
        count(
            saver, "checkpoints", "thread_id = 'ours' AND checkpoint -> 'channel_values' ? 'step'"
        )
        == 20
    )
    inline = "thread_id = 'theirs' AND checkpoint -> 'channel_values' ? 'big'"
    assert count(saver, "checkpoints", inline) == (20 if isinstance(big, str) else 0)
    assert saver.get_tuple(cfg("ours")).checkpoint["channel_values"] == {"big": big, "step": 19}


def test_a_backslash_in_a_channel_name_round_trips(saver):
    checkpoint = make_checkpoint(**{"a\\b": 1, "c\\x00d": "v", "ünï": [1]})
    saver.put(cfg(), checkpoint, {}, checkpoint["channel_versions"])
    assert saver.get_tuple(cfg()).checkpoint["channel_values"] == {
        "a\\b": 1,
        "c\\x00d": "v",
        "ünï": [1],
    }


class Color(enum.IntEnum):
    RED = 1


EDGE_VALUES = {  # channel -> (value, kept inline in the JSONB?)
    "none": (None, True),
    "flag": (True, True),
    "int": (-(2**63), True),
    "float": (0.1, True),
    "short": ("é" * sql.INLINE_MAX_CHARS, True),
    "long": ("x" * (sql.INLINE_MAX_CHARS + 1), False),
    "big_int": (2**70, True),
    "exp_float": (1e16, False),
    "neg_zero": (-0.0, False),
    "nan": (float("nan"), False),
    "inf": (float("-inf"), False),
    "nul": ("a\x00b", False),
    "enum": (Color.RED, False),
    "dict": ({"k": 1}, False),
}


def same(a: Any, b: Any) -> bool:
    """Equal, of the same type, and the same float (so nan == nan and -0.0 != 0.0)."""
    return type(a) is type(b) and repr(a) == repr(b)


def test_values_json_cannot_keep_exactly_go_to_blobs_and_both_libraries_read_them(
    saver, postgres_uri
):
    values = {channel: value for channel, (value, _) in EDGE_VALUES.items()}
    checkpoint = make_checkpoint(**values)
    saver.put(cfg("edge"), checkpoint, {}, checkpoint["channel_versions"])
    inline = saver.conn.execute(
        "SELECT checkpoint -> 'channel_values' FROM checkpoints"
    ).fetchone()[0]
    assert sorted(inline) == sorted(ch for ch, (_, kept) in EDGE_VALUES.items() if kept)
    ours = (
        saver.with_allowlist([(__name__, "Color")])
        .get_tuple(cfg("edge"))
        .checkpoint["channel_values"]
    )
    assert all(same(ours[channel], value) for channel, value in values.items())
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        theirs = lg.get_tuple(cfg("edge")).checkpoint["channel_values"]
    assert all(
        same(theirs[channel], value) for channel, value in values.items() if channel != "enum"
    )
    assert theirs["enum"] == 1


@pytest.mark.parametrize("n", [1, sql.VALUES_MAX_ROWS, sql.VALUES_MAX_ROWS + 1, 3000])
def test_any_number_of_blobs_and_writes_in_one_statement(saver, n):
    """Up to VALUES_MAX_ROWS rows bind one parameter per field, more go as arrays: same rows."""
    values = {f"ch{i}": [i] for i in range(n)}
    checkpoint = make_checkpoint(**values)
    saved = saver.put(cfg(), checkpoint, {}, checkpoint["channel_versions"])
    writes = [(f"ch{i}", {"w": i}) for i in range(n)]
    saver.put_writes(saved, writes, "task")
    both = PutWrites(saved, [("__error__", "boom"), *writes], "task2", "")
    following = {**make_checkpoint(**values), "channel_versions": checkpoint["channel_versions"]}
    latest = saver.put_writes_and_checkpoint(both, saved, following, {}, {})
    assert saver.get_tuple(saved).pending_writes == [("task", c, v) for c, v in writes] + [
        ("task2", "__error__", "boom")
    ] + [("task2", c, v) for c, v in writes]
    assert saver.get_tuple(latest).checkpoint["channel_values"] == values
    assert count(saver, "checkpoint_blobs") == n


def test_prune_and_delete_for_runs_drop_only_unshared_blobs(saver):
    saved = put_chain(saver, "p", n=4, value=lambda step: {"step": step}, run_id="r1")
    saver.put_writes(saved[-1], [("step", 9)], "task")
    saver.prune(["p"])
    assert count(saver, "checkpoints", "thread_id = 'p'") == 1
    assert count(saver, "checkpoint_blobs", "thread_id = 'p'") == 1
    kept = saver.get_tuple(cfg("p"))
    assert kept.parent_config is None and kept.pending_writes == [("task", "step", 9)]

    put_chain(saver, "runs", n=2, value=lambda step: [step], run_id="keep")
    last = saver.get_tuple(cfg("runs"))
    checkpoint = {**last.checkpoint, "id": empty_checkpoint()["id"]}  # same versions: shares blobs
    saver.put(last.config, checkpoint, {"run_id": "drop"}, {})
    saver.delete_for_runs(["keep"])
    assert [t.metadata["run_id"] for t in saver.list(cfg("runs"))] == ["drop"]
    assert saver.get_tuple(cfg("runs")).checkpoint["channel_values"] == {"step": [1]}
    assert saver.get_tuple(cfg("runs")).parent_config is None
    assert count(saver, "checkpoint_blobs", "thread_id = 'runs'") == 1


def test_prune_keep_latest_drops_finished_subgraph_calls_like_langgraph(postgres_uri):
    """Same rows in two schemas, pruned by each library: the same checkpoints survive."""
    root_ids = [empty_checkpoint()["id"], empty_checkpoint()["id"]]
    layout = [  # (namespace, root checkpoint it started from)
        ("sub:done", root_ids[0]),
        ("sub:live", root_ids[1]),
        ("persist", root_ids[0]),
        ("sub:unsaved", "no-such-root"),
    ]

    def fill_and_prune(saver_class, schema):
        uri = make_conninfo(postgres_uri, options=f"-csearch_path={schema}")
        with psycopg.connect(postgres_uri, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}")
        with saver_class.from_conn_string(uri) as target:
            target.setup()
            parent = cfg("t")
            for checkpoint_id in root_ids:
                checkpoint = {**make_checkpoint(step=1), "id": checkpoint_id}
                parent = target.put(
                    parent, checkpoint, {"parents": {}}, checkpoint["channel_versions"]
                )
            for ns, root in layout:
                parent = cfg("t", ns)
                for _ in range(2):
                    checkpoint = make_checkpoint(inner=ns)
                    parent = target.put(
                        parent, checkpoint, {"parents": {"": root}}, checkpoint["channel_versions"]
                    )
                target.put_writes(parent, [("inner", 1)], "task")
            target.prune(["t"])
            return sorted(
                (
                    t.config["configurable"]["checkpoint_ns"],
                    t.checkpoint["channel_values"].get("inner"),
                    len(t.pending_writes),
                    t.parent_config is None,
                )
                for t in target.list({"configurable": {"thread_id": "t"}})
            )

    ours = fill_and_prune(PostgresSaver, "prune_ours")
    assert ours == fill_and_prune(LGPostgresSaver, "prune_langgraph")
    assert [ns for ns, *_ in ours] == ["", "persist", "sub:live", "sub:unsaved"]


# --- filter keys are data, never SQL -------------------------------------------------------------
ATTACKS = [
    "x') OR '1'='1",
    "source' OR 1=1 --",
    "a') UNION SELECT 'forged', '', 'forged', NULL, '{}'::jsonb, '{}'::jsonb, NULL, NULL --",
    "'; DROP TABLE checkpoints; --",
    'quote"double',
    "$.source",
    "k" * 10_000,
]


@pytest.mark.parametrize("key", ATTACKS)
def test_attack_keys_match_nothing_and_run_nothing(saver, key):
    put_chain(saver, "victim", n=3, value=lambda step: [step])
    assert list(saver.list(None, filter={key: "1"})) == []
    assert list(saver.list(None, filter={key: "loop", "source": "loop"})) == []
    assert saver.get_tuple(cfg(key)) is None
    saver.delete_thread(key)
    assert count(saver, "checkpoints") == 3 and count(saver, "checkpoint_blobs") == 3


@pytest.mark.parametrize("key", ATTACKS)
def test_odd_keys_filter_like_plain_ones(saver, key):
    put_chain(saver, "a", n=2, **{key: "yes"})
    put_chain(saver, "b", n=2, **{key: "no"})
    found = list(saver.list(None, filter={key: "yes"}))
    assert [t.config["configurable"]["thread_id"] for t in found] == ["a", "a"]
    assert list(saver.list(cfg(key))) == []  # the key as a thread id names no thread


@pytest.mark.parametrize(
    "filter", [{"a\x00b": "loop"}, {"source": "lo\x00op"}, {"x": {"y\x00": 1}}]
)
def test_nul_in_a_filter_is_refused_before_any_sql(saver, filter):
    put_chain(saver, "victim", n=1)
    with pytest.raises(ValueError, match="NUL"):
        list(saver.list(None, filter=filter))


def test_filter_values_compare_by_json_type(saver):
    for i, value in enumerate([1, True, "1", 1.5, None, {"k": [1, 2]}]):
        put_chain(saver, f"t{i}", n=1, v=value)

    def threads(value):
        return sorted(
            t.config["configurable"]["thread_id"] for t in saver.list(None, filter={"v": value})
        )

    assert threads(1) == ["t0"] and threads(True) == ["t1"] and threads("1") == ["t2"]
    assert threads(1.5) == ["t3"] and threads(None) == ["t4"] and threads({"k": [1, 2]}) == ["t5"]


# --- errors a user meets --------------------------------------------------------------------------
def test_config_mistakes_say_what_to_do(saver):
    # (thread_id, checkpoint_id and prune's arguments: tests/test_saver_contract.py)
    with pytest.raises(ValueError, match="limit"):
        list(saver.list(None, limit=-1))
    with pytest.raises(TypeError, match="Connection"):
        PostgresSaver("postgresql://not-a-connection")


def test_connection_mistakes_say_what_to_do(postgres_uri):
    with psycopg.connect(
        postgres_uri
    ) as conn:  # autocommit off: our transactions would never commit
        with pytest.raises(ValueError, match="autocommit"):
            PostgresSaver(conn).get_tuple(cfg())
    with PostgresSaver.from_conn_string(postgres_uri) as saver:
        pass
    with pytest.raises(psycopg.OperationalError, match="closed"):
        saver.get_tuple(cfg())


def test_missing_tables_say_run_setup(postgres_uri):
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS empty_schema CASCADE; CREATE SCHEMA empty_schema")
    uri = make_conninfo(postgres_uri, options="-csearch_path=empty_schema")
    with PostgresSaver.from_conn_string(uri) as saver:
        with pytest.raises(SaverNotSetUpError, match=r"setup\(\)"):
            saver.get_tuple(cfg())
        with pytest.raises(SaverNotSetUpError, match=r"setup\(\)"):
            saver.put(cfg(), make_checkpoint(a=1), {}, {})


def test_corrupt_rows_raise_invalid_checkpoint_naming_the_row(saver):
    saved = put_chain(saver, "bad", n=1, value=lambda step: [step])
    saver.put_writes(saved[0], [("out", "fine")], "task-1")
    saver.conn.execute(
        "UPDATE checkpoint_blobs SET blob = '\\xc1c1c1'::bytea WHERE thread_id = 'bad'"
    )
    with pytest.raises(InvalidCheckpointError, match="channel 'step' of thread 'bad'"):
        saver.get_tuple(cfg("bad"))
    saver.conn.execute("UPDATE checkpoint_blobs SET type = 'no-such-type' WHERE thread_id = 'bad'")
    with pytest.raises(InvalidCheckpointError, match="'step'"):
        list(saver.list(cfg("bad")))
    saver.conn.execute("DELETE FROM checkpoint_blobs WHERE thread_id = 'bad'")
    saver.conn.execute("UPDATE checkpoint_writes SET blob = '\\xc1'::bytea WHERE thread_id = 'bad'")
    with pytest.raises(InvalidCheckpointError, match="write to 'out' by task 'task-1'"):
        saver.get_tuple(cfg("bad"))


@dataclasses.dataclass
class Secret:
    token: str


def test_a_type_not_allowed_is_refused_naming_the_row(saver, postgres_uri):
    """LangGraph writes any class; our serializer builds only allow-listed ones, naming the row."""
    with LGPostgresSaver.from_conn_string(postgres_uri) as lg:
        checkpoint = make_checkpoint(box=Secret("x"))
        lg.put(cfg("unsafe"), checkpoint, {}, checkpoint["channel_versions"])
    with pytest.raises(UnsafeTypeError, match=r"(?s)channel 'box' of thread 'unsafe'.*Secret"):
        saver.get_tuple(cfg("unsafe"))
    allowed = saver.with_allowlist([(__name__, "Secret")])
    assert allowed.get_tuple(cfg("unsafe")).checkpoint["channel_values"] == {"box": Secret("x")}


@pytest.mark.parametrize(
    "metadata", [{"k\x00": 1}, {"nested": {"v": "a\x00"}}, {"x": float("nan")}, {"o": object()}]
)
def test_a_failed_put_leaves_nothing_half_written(saver, metadata):
    """The blobs go out first in the pipeline; the checkpoint row then fails: both roll back."""
    checkpoint = make_checkpoint(a="value", b={"k": 1})
    with pytest.raises((ValueError, TypeError), match="metadata"):
        saver.put(cfg("half"), checkpoint, metadata, checkpoint["channel_versions"])
    assert count(saver, "checkpoint_blobs") == 0 and count(saver, "checkpoints") == 0
    saver.put(cfg("half"), checkpoint, {}, checkpoint["channel_versions"])  # the connection is fine
    assert saver.get_tuple(cfg("half")).checkpoint["channel_values"] == {
        "a": "value",
        "b": {"k": 1},
    }


def test_a_put_that_postgres_rejects_leaves_nothing(saver):
    """A lone surrogate passes json.dumps but not Postgres's JSONB parser: the blobs go too."""
    checkpoint = make_checkpoint(a="value", b={"k": 1})
    with pytest.raises(psycopg.DataError, match="surrogate"):
        saver.put(cfg("half"), checkpoint, {"note": "\ud800"}, checkpoint["channel_versions"])
    assert count(saver, "checkpoint_blobs") == 0 and count(saver, "checkpoints") == 0


def test_special_writes_are_redone_ordinary_writes_are_kept(saver):
    saved = put_chain(saver, n=1)[0]
    saver.put_writes(saved, [("out", 1)], "task")
    saver.put_writes(saved, [("out", 2)], "task")  # a replayed task: its first writes stand
    saver.put_writes(saved, [("__error__", "first")], "task")
    saver.put_writes(saved, [("__error__", "second")], "task")  # a retry's error replaces the old
    assert saver.get_tuple(saved).pending_writes == [
        ("task", "__error__", "second"),
        ("task", "out", 1),
    ]


# --- many threads, one saver ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["connection", "pool"])
def test_eight_threads_write_at_once(saver, postgres_uri, kind):
    pool = ConnectionPool(
        postgres_uri, min_size=2, max_size=4, kwargs={"autocommit": True}, open=True
    )
    shared = saver if kind == "connection" else PostgresSaver(pool)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for saved in put_chain(shared, f"worker-{i}", n=10):
                shared.put_writes(saved, [("out", i)], f"task-{i}")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=30)
    pool.close()
    assert not errors
    assert count(saver, "checkpoints") == 80 and count(saver, "checkpoint_writes") == 80
    for i in range(8):
        latest = saver.get_tuple(cfg(f"worker-{i}"))
        assert latest.checkpoint["channel_values"] == {"step": 9}
        assert latest.pending_writes == [(f"task-{i}", "out", i)]
        assert len(list(saver.list(cfg(f"worker-{i}")))) == 10


def test_two_savers_sharing_one_connection_each_get_their_own_rows(saver):
    """Each saver reuses its own cursor: a statement of the other never replaces its result."""
    for name in ("a", "b"):
        put_chain(saver, name, n=2, value=lambda step, name=name: [name, step])
    other = PostgresSaver(saver.conn)
    errors: list[BaseException] = []

    def read(target, name: str) -> None:
        try:
            for _ in range(200):
                assert target.get_tuple(cfg(name)).checkpoint["channel_values"] == {
                    "step": [name, 1]
                }
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    readers = [threading.Thread(target=read, args=args) for args in ((saver, "a"), (other, "b"))]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, between a statement and its fetch too
    try:
        for r in readers:
            r.start()
        for r in readers:
            r.join(timeout=30)
    finally:
        sys.setswitchinterval(interval)
    assert not errors


# --- one commit per super-step ----------------------------------------------------------------
def two_step_graph(checkpointer):
    """a then b, each alone in its step, on our runtime."""
    g = our_graph.StateGraph(State)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"n": s["n"] + 1, "log": ["b"]})
    g.add_edge(our_graph.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", our_graph.END)
    return g.compile(checkpointer=checkpointer)


def check_one_statement_per_step(statements: list[str], history: list) -> None:
    """Input checkpoint, then one statement (writes CTE + checkpoint) per step; writes kept."""
    assert len(statements) == 4 and ["task_writes" in q for q in statements] == [False] + [True] * 3
    logs = [[v for _, c, v in t.pending_writes if c == "log"] for t in history]
    assert logs == [[], [["b"]], [["a"]], [[]]]
    assert history[0].checkpoint["channel_values"]["log"] == ["a", "b"]


def test_a_step_with_one_task_is_one_statement(saver, monkeypatch):
    statements: list[str] = []
    execute = saver._execute
    monkeypatch.setattr(saver, "_execute",
                        lambda s, *config: (statements.append(s.query), execute(s, *config)))
    two_step_graph(saver).invoke({**START_STATE, "n": 0}, cfg(), durability="sync")
    check_one_statement_per_step(statements, list(saver.list(cfg())))


async def test_async_saver_a_step_with_one_task_is_one_statement(saver, postgres_uri):
    statements: list[str] = []
    async with AsyncPostgresSaver.from_conn_string(postgres_uri) as asaver:
        execute = asaver._execute

        async def counted(statement, *config):
            statements.append(statement.query)
            await execute(statement, *config)

        asaver._execute = counted
        await two_step_graph(asaver).ainvoke({**START_STATE, "n": 0}, cfg(), durability="sync")
    check_one_statement_per_step(statements, list(saver.list(cfg())))


# --- the async saver ------------------------------------------------------------------------------
async def test_async_saver_reads_what_the_sync_one_wrote(saver, postgres_uri):
    saved = put_chain(saver, "shared", n=3)
    saver.put_writes(saved[-1], [("out", "x")], "task")
    async with AsyncPostgresSaver.from_conn_string(postgres_uri) as asaver:
        found = [t async for t in asaver.alist(cfg("shared"))]
        assert found == list(saver.list(cfg("shared")))
        assert await asaver.aget_tuple(cfg("shared")) == saver.get_tuple(cfg("shared"))
        # its sync verbs work from another thread, and refuse on the loop they would block
        assert await asyncio.to_thread(asaver.get_tuple, cfg("shared")) == found[0]
        with pytest.raises(RuntimeError, match="event loop"):
            asaver.get_tuple(cfg("shared"))


@pytest.mark.parametrize("kind", ["connection", "pool"])
async def test_async_saver_eight_tasks_at_once(saver, postgres_uri, kind):
    async def work(asaver, i: int) -> None:
        parent, versions = cfg(f"task-{i}"), {}
        for step in range(10):
            versions = {"step": asaver.get_next_version(versions.get("step"))}
            checkpoint = {**make_checkpoint(step=step), "channel_versions": dict(versions)}
            parent = await asaver.aput(parent, checkpoint, {"step": step}, versions)
            await asaver.aput_writes(parent, [("out", i)], f"t{i}")

    if kind == "connection":
        async with AsyncPostgresSaver.from_conn_string(postgres_uri) as asaver:
            await asyncio.gather(*(work(asaver, i) for i in range(8)))
    else:
        pool = AsyncConnectionPool(
            postgres_uri, max_size=4, kwargs={"autocommit": True}, open=False
        )
        async with pool:
            await asyncio.gather(*(work(AsyncPostgresSaver(pool), i) for i in range(8)))
    assert count(saver, "checkpoints") == 80 and count(saver, "checkpoint_writes") == 80
    for i in range(8):
        latest = saver.get_tuple(cfg(f"task-{i}"))
        assert latest.checkpoint["channel_values"] == {"step": 9}
        assert latest.pending_writes == [(f"t{i}", "out", i)]


async def test_async_saver_errors(postgres_uri):
    with pytest.raises(TypeError, match="AsyncConnection"):
        AsyncPostgresSaver(psycopg.connect(postgres_uri, autocommit=True))
    async with AsyncPostgresSaver.from_conn_string(postgres_uri) as asaver:
        await asaver.setup()
        with pytest.raises(ValueError, match="thread_id"):
            await asaver.aget_tuple({"configurable": {}})
        thread = str(uuid.uuid4())
        with pytest.raises(ValueError, match="metadata"):
            await asaver.aput(cfg(thread), make_checkpoint(a="v"), {"k\x00": 1}, {"a": "1"})
        assert await asaver.aget_tuple(cfg(thread)) is None
    with pytest.raises(psycopg.OperationalError, match="closed"):
        await asaver.aget_tuple(cfg())


def test_from_conn_string_leaves_no_session_behind(postgres_uri):
    """The thread guard's lock session closes with from_conn_string: DROP DATABASE can follow."""
    from psycopg.conninfo import conninfo_to_dict

    from lgcheckpoint.checkpoint.postgres import PostgresSaver
    from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver

    class S(TypedDict):
        n: int

    builder = our_graph.StateGraph(S)
    builder.add_node("a", lambda s: {"n": s["n"] + 1})
    builder.add_edge(our_graph.START, "a")
    with PostgresSaver.from_conn_string(postgres_uri) as saver:
        saver.setup()
        builder.compile(checkpointer=saver).invoke({"n": 0}, {"configurable": {"thread_id": "s"}})

    async def run_async() -> None:
        async with AsyncPostgresSaver.from_conn_string(postgres_uri) as saver:
            await builder.compile(checkpointer=saver).ainvoke(
                {"n": 0}, {"configurable": {"thread_id": "a"}})

    asyncio.run(run_async())
    name = conninfo_to_dict(postgres_uri)["dbname"]
    with psycopg.connect(postgres_uri.replace(name, "postgres"), autocommit=True) as conn:
        others = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s",
                              (name,)).fetchone()[0]
    assert others == 0, "a session stayed open after from_conn_string closed"


# --- list() in pages -----------------------------------------------------------------------------
def cid(i: int) -> str:
    """A checkpoint id that sorts by ``i`` (same length, hex digits)."""
    return f"{i:08x}-0000-6000-8000-000000000000"


def put_at(saver, thread_id: str, ns: str, i: int, **meta: Any) -> None:
    """A checkpoint with id ``cid(i)``, whatever else shares that id."""
    checkpoint = {**make_checkpoint(step=i), "id": cid(i)}
    saver.put(cfg(thread_id, ns), checkpoint, {"step": i, **meta}, checkpoint["channel_versions"])


def key(found) -> tuple[str, str, str]:
    """A tuple's place in list()'s order: (checkpoint id, thread, namespace)."""
    conf = found.config["configurable"]
    return conf["checkpoint_id"], conf["thread_id"], conf["checkpoint_ns"]


@pytest.fixture(params=["sync", "async"])
async def front(request, saver, postgres_uri):
    """The sync saver or an async one on the same tables, counting the statements list() runs."""
    if request.param == "sync":
        reader = saver
        yield counting(reader)
    else:
        async with AsyncPostgresSaver.from_conn_string(postgres_uri) as reader:
            yield counting(reader)


def counting(reader):
    """``reader`` with its statements recorded in ``reader.statements``."""
    fetch, reader.statements = reader._fetch, []

    def counted(statement, *config):
        reader.statements.append(statement)
        return fetch(statement, *config)

    reader._fetch = counted
    return reader


async def listed(reader, config, **kwargs) -> list:
    """list() or alist(), as a list, with the statement count started afresh."""
    reader.statements.clear()
    if isinstance(reader, AsyncPostgresSaver):
        return [t async for t in reader.alist(config, **kwargs)]
    return list(reader.list(config, **kwargs))


def statements_for(rows: int, limit: int | None = None) -> int:
    """Statements list() runs to yield ``rows`` rows: the first page; if it was full and more is
    wanted, the keys of the rest once, then a page of rows per PAGE_SIZE keys."""
    if rows < sql.PAGE_SIZE or (limit is not None and limit <= sql.PAGE_SIZE):
        return 1
    return 2 + -(-(rows - sql.PAGE_SIZE) // sql.PAGE_SIZE)


@pytest.mark.parametrize("n", [63, 64, 65, 129])
async def test_list_reads_a_thread_in_pages_and_meets_at_the_edges(saver, front, n):
    for i in range(n):
        put_at(saver, "t", "", i)
    saver.put_writes(cfg("t", "", cid(0)), [("out", "oldest")], "task")  # on the last page
    newest_first = [(cid(i), "t", "") for i in reversed(range(n))]
    for config in (cfg("t"), {"configurable": {"thread_id": "t"}}):
        found = await listed(front, config)
        assert [key(t) for t in found] == newest_first
        assert len(front.statements) == statements_for(n)
        assert found[-1].pending_writes == [("task", "out", "oldest")]


@pytest.mark.parametrize("limit", [0, 1, 64, 65, 100, 129, 500])
async def test_list_limit_is_applied_in_sql(saver, front, limit):
    for i in range(129):
        put_at(saver, "t", "", i)
    found = await listed(front, cfg("t"), limit=limit)
    wanted = min(limit, 129)
    assert [key(t)[0] for t in found] == [cid(i) for i in reversed(range(129))][:limit]
    assert len(front.statements) == statements_for(wanted, limit)
    first, *rest = front.statements
    assert first.query.startswith(sql.SELECT_SQL) and first.params[-1] == min(limit, sql.PAGE_SIZE)
    if rest:
        keys, *rows = rest
        assert keys.query.startswith(sql.KEYS_SQL) and keys.params[-1] == limit - sql.PAGE_SIZE
        # pages of PAGE_SIZE keys, the last one only the keys left
        left = wanted - sql.PAGE_SIZE
        assert [len(s.params[0]) for s in rows] == [
            min(sql.PAGE_SIZE, left - start) for start in range(0, left, sql.PAGE_SIZE)]


def tied_threads(saver, ids: int = 50) -> list[tuple[str, str, str]]:
    """Three threads x two namespaces sharing every checkpoint id; their rows in list() order."""
    rows = []
    for i in range(ids):
        for thread_id in ("t0", "t1", "t2"):
            for ns in ("", "sub:1"):
                put_at(saver, thread_id, ns, i, user=thread_id)
                rows.append((cid(i), thread_id, ns))
    return sorted(rows, reverse=True)


async def test_list_across_threads_orders_ties_by_thread_and_namespace(saver, front):
    expected = tied_threads(saver)  # 300 rows; 64 splits a group of six equal ids
    found = await listed(front, None)
    assert [key(t) for t in found] == expected
    assert len(front.statements) == statements_for(len(expected))
    assert [key(t) for t in await listed(front, None, limit=130)] == expected[:130]
    # one thread, both namespaces (no namespace in the config)
    found = await listed(front, {"configurable": {"thread_id": "t1"}})
    assert [key(t) for t in found] == [k for k in expected if k[1] == "t1"]


async def test_list_across_threads_finds_its_keys_once(saver, front):
    """200 rows of 100 threads: the first page, the keys of the rest in one statement (one sort),
    then pages of rows by key."""
    for i in range(200):
        put_at(saver, f"t{i % 100}", "", i, source="loop" if i % 4 else "input")
    for filter, page_sizes in ((None, [64, 64, 8]), ({"source": "loop"}, [64, 22])):
        found = await listed(front, None, filter=filter)
        assert [key(t)[0] for t in found] == [cid(i) for i in reversed(range(200))
                                               if filter is None or i % 4]
        first, keys, *pages_read = front.statements
        assert first.query.startswith(sql.SELECT_SQL) and keys.query.startswith(sql.KEYS_SQL)
        assert not any(s.query.startswith(sql.KEYS_SQL) for s in pages_read)
        assert [len(s.params[0]) for s in pages_read] == page_sizes


async def test_list_before_and_filter_page_together(saver, front):
    expected = tied_threads(saver)
    before = cfg("t0", "", cid(40))
    wanted = [k for k in expected if k[1] == "t1" and k[0] < cid(40)]  # 80 rows: two pages
    found = await listed(front, None, filter={"user": "t1"}, before=before)
    assert [key(t) for t in found] == wanted
    assert {key(t) for t in found} == {(cid(i), "t1", ns) for i in range(40)
                                       for ns in ("", "sub:1")}
    found = await listed(front, cfg("t2", "sub:1"), filter={"user": "t2"}, before=before, limit=70)
    assert [key(t) for t in found] == [(cid(i), "t2", "sub:1") for i in reversed(range(40))]


async def test_list_between_pages_skips_deleted_rows_and_repeats_nothing(saver, front):
    """Nothing repeats, nothing newer than the rows yielded appears, a deleted row is skipped."""
    for i in range(200):
        put_at(saver, ("a", "b")[i % 2], "", i)
    found = []
    rows = front.alist(None) if isinstance(front, AsyncPostgresSaver) else front.list(None)
    while True:
        try:
            t = await anext(rows) if isinstance(front, AsyncPostgresSaver) else next(rows)
        except (StopIteration, StopAsyncIteration):
            break
        found.append(t)
        if len(found) == sql.PAGE_SIZE:  # the first page was yielded, the others not yet read
            saver.delete_thread("b")
            put_at(saver, "a", "", 1000)  # newer than the rows yielded: never listed
            put_at(saver, "a", "", 1)  # older, and saved before the rest's keys are read: listed
    first_page = [cid(i) for i in reversed(range(200))][:sql.PAGE_SIZE]
    later = sorted({cid(i) for i in range(0, 200, 2) if cid(i) < first_page[-1]} | {cid(1)},
                   reverse=True)
    assert [key(t)[0] for t in found] == first_page + later
