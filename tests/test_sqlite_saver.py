"""SqliteSaver / AsyncSqliteSaver beyond the conformance suite: LangGraph interop on one file,
threads and processes, filter-key injection, and the errors a user meets."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import operator
import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from typing import Annotated, TypedDict

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver as LGSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from lgcheckpoint import graph as our_graph
from lgcheckpoint.checkpoint.base import empty_checkpoint, next_string_version
from lgcheckpoint.checkpoint.id import uuid6
from lgcheckpoint.checkpoint.sqlite import SqliteSaver, housekeeping, sql
from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgcheckpoint.errors import InvalidCheckpointError


# --- helpers -------------------------------------------------------------------------------------
def cfg(thread_id: str = "t", ns: str = "", checkpoint_id: str | None = None) -> dict:
    conf = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def make_checkpoint(**values) -> dict:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = values
    checkpoint["channel_versions"] = {k: next_string_version(None) for k in values}
    return checkpoint


def put_chain(saver, thread_id: str = "t", ns: str = "", n: int = 3, **meta) -> list[dict]:
    """n checkpoints in a row, each the parent of the next; returns their configs."""
    saved, parent = [], cfg(thread_id, ns)
    for step in range(n):
        metadata = {"source": "loop", "step": step, **meta}
        parent = saver.put(parent, make_checkpoint(step=step), metadata, {})
        saved.append(parent)
    return saved


def plain(value):
    """Only what must differ: LangGraph's dataclasses (Interrupt) vs ours become (name, fields)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return type(value).__name__, {f.name: plain(getattr(value, f.name)) for f in fields}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def count(path: str, table: str = "checkpoints") -> int:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


class State(TypedDict):
    n: int
    log: Annotated[list[str], operator.add]


def langgraph_graph():
    """A fan-out (several writes per step), a subgraph (a second namespace) and an interrupt."""
    inner = StateGraph(State)
    inner.add_node("inner", lambda s: {"log": ["inner"]})
    inner.add_edge(START, "inner")
    g = StateGraph(State)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"n": s["n"] * 2, "log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_node("sub", inner.compile())
    g.add_node("ask", lambda s: {"log": [interrupt({"question": "go on?"})]})
    for edge in [(START, "a"), ("a", "b"), ("a", "c"), ("b", "sub"), ("sub", "ask"), ("ask", END)]:
        g.add_edge(*edge)
    return g


# --- interop with LangGraph's SqliteSaver on one file --------------------------------------------
def test_reads_a_thread_langgraph_wrote(sqlite_path):
    with LGSqliteSaver.from_conn_string(sqlite_path) as lg:
        graph = langgraph_graph().compile(checkpointer=lg, interrupt_before=["sub"])
        for thread in ("t1", "t2"):
            graph.invoke({"n": 1, "log": []}, cfg(thread))
        graph.invoke(None, cfg("t1"))  # on past interrupt_before: a subgraph, then interrupt()
        graph.invoke(Command(resume="yes"), cfg("t1"))  # __resume__ and __interrupt__ writes
        theirs = plain(list(lg.list(None)))
        their_latest = lg.get_tuple(cfg("t1"))
        their_gets = plain([lg.get_tuple(t.config) for t in list(lg.list(None))])
        their_filtered = plain(list(lg.list(cfg("t1"), filter={"source": "loop", "step": 1})))
    with SqliteSaver.from_conn_string(sqlite_path) as ours:
        mine = list(ours.list(None))
        assert plain(mine) == theirs
        assert len({t.config["configurable"]["checkpoint_ns"] for t in mine}) == 2
        channels = {w[1] for t in mine for w in t.pending_writes}
        assert {"__interrupt__", "__resume__"} <= channels and any(t.parent_config for t in mine)
        assert plain(ours.get_tuple(cfg("t1"))) == plain(their_latest)
        assert plain([ours.get_tuple(t.config) for t in mine]) == their_gets  # config echoed
        filtered = ours.list(cfg("t1"), filter={"source": "loop", "step": 1})
        assert plain(list(filtered)) == their_filtered
        # and we can continue their thread: our versions sort after theirs
        latest = their_latest.checkpoint["channel_versions"]["n"]
        assert ours.get_next_version(latest, None) > latest


def test_langgraph_reads_what_we_wrote(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as ours:
        first, second = put_chain(ours, "t1", n=2, run_id="r1")
        path_a, path_b = "~__pregel_pull, a", "~__pregel_pull, b"
        ours.put_writes(first, [("n", 5), ("log", ["x"])], "task-b", path_b)
        ours.put_writes(first, [("n", 6)], "task-a", path_a)
        ours.put_writes(first, [("__interrupt__", {"value": "ask"})], "task-a", path_a)
        ours.put_writes(first, [("__interrupt__", {"value": "again"})], "task-a", path_a)
        put_chain(ours, "t2", ns="sub:1", n=1, score=0.5)
        mine = list(ours.list(None))
        configs = [t.config for t in mine] + [cfg("t1"), cfg("t2", "sub:1")]
        my_gets = [ours.get_tuple(c) for c in configs]
    with LGSqliteSaver.from_conn_string(sqlite_path) as lg:
        assert [tuple(t) for t in lg.list(None)] == [tuple(t) for t in mine]
        assert [tuple(lg.get_tuple(c)) for c in configs] == [tuple(t) for t in my_gets]
        writes = lg.get_tuple(first).pending_writes
        assert [w[1:] for w in writes] == [  # by (task_path, task_id, idx); interrupt replaced
            ("__interrupt__", {"value": "again"}), ("n", 6), ("n", 5), ("log", ["x"])]
        runs = [t.metadata["run_id"] for t in lg.list(None, filter={"run_id": "r1"})]
        assert runs == ["r1", "r1"]


def test_pending_writes_come_in_langgraphs_order(sqlite_path):
    """(task_path, task_id, idx): paths that disagree with task ids, idx past 9, an empty path,
    special channels (negative idx). Ours sorts by path in Python after an index-ordered SELECT."""
    with SqliteSaver.from_conn_string(sqlite_path) as ours:
        (first,) = put_chain(ours, n=1)
        ours.put_writes(first, [(f"c{i}", i) for i in range(12)], "task-a", "~2")
        ours.put_writes(first, [("x", "b0"), ("y", "b1")], "task-b", "~1")
        ours.put_writes(first, [("__error__", "boom"), ("z", "c0")], "task-c", "~1")
        ours.put_writes(first, [("input", 0)], "task-d", "")  # e.g. update_state: no task path
        ours.put_writes(first, [("w", "e0")], "task-0", "~10")
        mine = ours.get_tuple(first).pending_writes
    with LGSqliteSaver.from_conn_string(sqlite_path) as lg:
        theirs = lg.get_tuple(first).pending_writes
    assert mine == theirs and len(mine) == 18
    assert [w[0] for w in mine[:4]] == ["task-d", "task-b", "task-b", "task-c"]

    async def read_async():
        async with AsyncSqliteSaver.from_conn_string(sqlite_path) as saver:
            return (await saver.aget_tuple(first)).pending_writes

    assert asyncio.run(read_async()) == theirs


def ask_graph(graph_module, types_module):
    """START -> a -> ask (interrupts) -> END, built with either library."""
    g = graph_module.StateGraph(State)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
    g.add_node("ask", lambda s: {"log": [types_module.interrupt({"question": "ok?"})]})
    for edge in [(graph_module.START, "a"), ("a", "ask"), ("ask", graph_module.END)]:
        g.add_edge(*edge)
    return g


@pytest.mark.parametrize("first", ["langgraph", "lgcheckpoint"])
async def test_a_run_interrupted_by_one_library_resumes_in_the_other(sqlite_path, first):
    import langgraph.graph
    import langgraph.types

    import lgcheckpoint.graph
    import lgcheckpoint.types

    theirs = (langgraph.graph, langgraph.types, LGSqliteSaver)
    ours = (lgcheckpoint.graph, lgcheckpoint.types, SqliteSaver)
    (g1, t1, saver1), (g2, t2, _) = (theirs, ours) if first == "langgraph" else (ours, theirs)
    with saver1.from_conn_string(sqlite_path) as saver:
        paused = ask_graph(g1, t1).compile(checkpointer=saver).invoke({"n": 1, "log": []}, cfg())
    assert paused["__interrupt__"][0].value == {"question": "ok?"}
    if first == "langgraph":  # resume on our async saver
        async with AsyncSqliteSaver.from_conn_string(sqlite_path) as saver:
            graph = ask_graph(g2, t2).compile(checkpointer=saver)
            done = await graph.ainvoke(t2.Command(resume="yes"), cfg())
    else:
        with LGSqliteSaver.from_conn_string(sqlite_path) as saver:
            graph = ask_graph(g2, t2).compile(checkpointer=saver)
            done = graph.invoke(t2.Command(resume="yes"), cfg())
    assert done == {"n": 2, "log": ["a", "yes"]}


OLD_WRITES_TABLE = (  # LangGraph's writes table before it stored task_path
    "CREATE TABLE writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', "
    "checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT "
    "NOT NULL, type TEXT, value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, "
    "task_id, idx))")


def test_opens_a_file_from_before_task_path(sqlite_path):
    with closing(sqlite3.connect(sqlite_path)) as conn:
        conn.execute(OLD_WRITES_TABLE)
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        saver.setup()
        saver.setup()  # idempotent
        (saved,) = put_chain(saver, n=1)
        saver.put_writes(saved, [("n", 1)], "task", "path")
        assert saver.get_tuple(saved).pending_writes == [("task", "n", 1)]


def file_from_before_task_path(sqlite_path) -> dict:
    """A file with one checkpoint and one write, its writes table as an old LangGraph left it."""
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        (saved,) = put_chain(saver, n=1)
    with closing(sqlite3.connect(sqlite_path)) as conn:
        conn.execute("DROP TABLE writes")
        conn.execute(OLD_WRITES_TABLE)
        conn.execute("INSERT INTO writes VALUES ('t', '', ?, 'task', 0, 'n', 'msgpack', X'01')",
                     (saved["configurable"]["checkpoint_id"],))
        conn.commit()
    return saved


def test_a_clone_made_before_setup_sets_itself_up(sqlite_path):
    """with_allowlist (run by compile) copies the saver before its first verb: on a read-only
    file from before task_path, the copy's own setup must find that the column is missing."""
    saved = file_from_before_task_path(sqlite_path)
    read_only = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True, check_same_thread=False)
    with closing(read_only):
        clone = SqliteSaver(read_only).with_allowlist([("my.module", "MyType")])
        assert clone.get_tuple(saved).pending_writes == [("task", "n", 1)]


async def test_reads_a_read_only_file_from_before_task_path(sqlite_path):
    saved = file_from_before_task_path(sqlite_path)
    read_only = f"file:{sqlite_path}?mode=ro"
    saver = SqliteSaver(sqlite3.connect(read_only, uri=True, check_same_thread=False))
    assert saver.get_tuple(saved).pending_writes == [("task", "n", 1)] and not saver.has_task_path
    saver.conn.close()
    import aiosqlite

    async with aiosqlite.connect(read_only, uri=True) as conn:
        assert (await AsyncSqliteSaver(conn).aget_tuple(saved)).pending_writes == [("task", "n", 1)]


async def test_delta_history_of_a_read_only_file_from_before_task_path(sqlite_path):
    saved = file_from_before_task_path(sqlite_path)
    with SqliteSaver.from_conn_string(sqlite_path) as writer:  # a child, so `saved` is a parent
        writer.is_setup = True  # keep the old writes table as it is
        child = writer.put(saved, {**empty_checkpoint(), "id": str(uuid6(clock_seq=5))}, {}, {})
    read_only = f"file:{sqlite_path}?mode=ro"
    saver = SqliteSaver(sqlite3.connect(read_only, uri=True, check_same_thread=False))
    history = saver.get_delta_channel_history(config=child, channels=["n"])
    saver.conn.close()
    assert history["n"]["writes"] == [("task", "n", 1)]
    import aiosqlite

    async with aiosqlite.connect(read_only, uri=True) as conn:
        found = await AsyncSqliteSaver(conn).aget_delta_channel_history(config=child,
                                                                         channels=["n"])
    assert found == history


# --- threads and processes -----------------------------------------------------------------------
def test_eight_threads_write_at_once(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        errors: list[BaseException] = []

        def worker(i: int) -> None:
            try:
                for saved in put_chain(saver, f"thread-{i}", n=20):
                    saver.put_writes(saved, [("n", i), ("log", [i])], f"task-{i}")
                    assert saver.get_tuple(saved) is not None
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors and not any(t.is_alive() for t in threads)
        assert count(sqlite_path) == 160 and count(sqlite_path, "writes") == 320
        assert all(len(t.pending_writes) == 2 for t in saver.list(None))


async def test_sync_saver_async_verbs_share_the_lock(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        configs = await asyncio.gather(*[
            saver.aput(cfg(f"t{i}"), make_checkpoint(i=i), {"step": i}, {}) for i in range(16)])
        await asyncio.gather(*[saver.aput_writes(c, [("i", 1)], "task") for c in configs])
        assert len([t async for t in saver.alist(None)]) == 16
        assert (await saver.aget_tuple(configs[3])).checkpoint["channel_values"] == {"i": 3}


WRITER = """
import sys
from lgcheckpoint.checkpoint.base import empty_checkpoint, next_string_version
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    parent = {"configurable": {"thread_id": sys.argv[2], "checkpoint_ns": ""}}
    for step in range(150):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"blob": "x" * 20_000}
        parent = saver.put(parent, checkpoint, {"step": step}, {})
        saver.put_writes(parent, [("n", i) for i in range(20)], "task")
"""


def test_two_processes_on_one_file_wait_instead_of_failing(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        saver.setup()  # WAL is switched on once, before the race
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, sqlite_path, f"p{i}"],
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    assert count(sqlite_path) == 300 and count(sqlite_path, "writes") == 6000


# --- filter keys are data, never SQL -------------------------------------------------------------
ATTACKS = [
    "x') OR '1'='1",
    "x')) OR 1=1 --",
    "source') = 'loop' UNION SELECT 'evil', '', 'forged', NULL, 'msgpack', X'80', '{}' --",
    'a"b', "a'b", "a.b", "a[0]", "$", "$.source", "a\\b", "ключ 🔑",
]
NUL_KEYS = ["a\x00b", "source\x00"]  # SQLite's JSON functions cut keys at NUL: refused up front


@pytest.mark.parametrize("key", ATTACKS)
def test_attack_keys_match_nothing_and_run_nothing(sqlite_path, key):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        put_chain(saver, "victim", n=3)
        assert list(saver.list(None, filter={key: "1"})) == []
        assert list(saver.list(None, filter={key: "loop", "source": "loop"})) == []
        assert count(sqlite_path) == 3  # nothing forged, nothing dropped


@pytest.mark.parametrize("key", ATTACKS)
def test_odd_keys_filter_like_plain_ones(sqlite_path, key):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        put_chain(saver, "a", n=2, **{key: "yes"})
        put_chain(saver, "b", n=2, **{key: "no"})
        found = list(saver.list(None, filter={key: "yes"}))
        assert [t.config["configurable"]["thread_id"] for t in found] == ["a", "a"]
        assert {t.metadata[key] for t in found} == {"yes"}


class RunsCode:
    """A pickle that would create a file when loaded: the second half of the published chain."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_forged_pickle_row_is_refused_and_runs_nothing(sqlite_path, tmp_path):
    import pickle

    marker = tmp_path / "pwned"
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        (saved,) = put_chain(saver, "victim", n=1)
        saver.conn.execute("UPDATE checkpoints SET type = 'pickle', checkpoint = ?",
                           (pickle.dumps(RunsCode(str(marker))),))
        saver.conn.commit()
        with pytest.raises(InvalidCheckpointError, match="'victim'"):
            saver.get_tuple(saved)
    assert not marker.exists()


@pytest.mark.parametrize("key", NUL_KEYS)
def test_nul_in_a_filter_key_is_refused_before_any_sql(sqlite_path, key):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        put_chain(saver, "victim", n=1)
        with pytest.raises(ValueError, match="NUL"):
            list(saver.list(None, filter={key: "loop"}))


def test_filter_values_compare_as_python_equality(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        for i, value in enumerate([1, True, "1", 1.5, None, {"k": [1, 2]}, [1, "a"]]):
            put_chain(saver, f"t{i}", n=1, v=value)
        put_chain(saver, "missing", n=1)

        def threads(value):
            found = saver.list(None, filter={"v": value})
            return sorted(t.config["configurable"]["thread_id"] for t in found)

        assert threads(1) == threads(True) == threads(1.0) == ["t0", "t1"]  # as 1 == True in Python
        assert threads("1") == ["t2"] and threads(False) == []
        assert threads(1.5) == ["t3"] and threads({"k": [1, 2]}) == ["t5"]
        assert threads([1, "a"]) == ["t6"]
        assert threads(None) == ["missing", "t4"]  # like LangGraph: a missing key counts as None
        with pytest.raises(TypeError, match="cannot compare"):
            list(saver.list(None, filter={"v": object()}))


# stored values, among them strings that read like the JSON text of an object or array
STORED = [1, True, 0, False, 0.0, 1.5, "1", "", "{", '{"k":[1,2]}', '{"k": [1, 2]}', "[]", None,
          {"k": [1, 2]}, [1, "a"], {}, []]


@pytest.mark.parametrize("key", ["v", "a.b[0]", 'v"', "ключ"])  # a bound path; json_each (last two)
def test_both_key_lookups_select_as_python_equality(sqlite_path, key):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        for i, value in enumerate(STORED):
            put_chain(saver, f"t{i}", n=1, **{key: value})
        put_chain(saver, "missing", n=1)
        for wanted in [*STORED, 2, "x", [1], {"k": [1]}]:
            found = {t.config["configurable"]["thread_id"]
                     for t in saver.list(None, filter={key: wanted})}
            expected = {f"t{i}" for i, value in enumerate(STORED) if value == wanted}
            assert found == expected | ({"missing"} if wanted is None else set()), wanted


def test_keys_a_json_writer_escapes_are_found(sqlite_path):
    """Escaped in the stored text (json.dumps's default; a writer's choice), found by the key."""
    metadata = {"ключ": 1, 'a"b': "x", "a\\b": "y", "tab\t": 2, "plain": "z"}
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        put_chain(saver, "escaped", n=1, **metadata)
        saver.conn.execute("UPDATE checkpoints SET metadata = ?",
                           (json.dumps({"source": "loop", "step": 0, **metadata}).encode(),))
        saver.conn.commit()
        assert b"\\u043a" in saver.conn.execute("SELECT metadata FROM checkpoints").fetchone()[0]
        for key, value in metadata.items():
            assert [t.metadata[key] for t in saver.list(None, filter={key: value})] == [value]


# --- list -----------------------------------------------------------------------------------------
def test_list_pages_and_lets_the_caller_write_meanwhile(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        saved = put_chain(saver, n=sql.PAGE_SIZE * 2 + 5)
        ids = [c["configurable"]["checkpoint_id"] for c in saved]
        assert [t.checkpoint["id"] for t in saver.list(cfg())] == ids[::-1]
        assert len(list(saver.list(None, limit=sql.PAGE_SIZE + 1))) == sql.PAGE_SIZE + 1
        assert len(list(saver.list(cfg(), before=cfg(checkpoint_id=ids[10])))) == 10
        for t in saver.list(cfg(), limit=3):  # LangGraph's deadlocks here (holds its lock in yield)
            saver.put_writes(t.config, [("seen", True)], "reader")
        assert saver.get_tuple(cfg()).pending_writes == [("reader", "seen", True)]


def test_list_reads_the_matches_of_its_first_statement(sqlite_path):
    """The keys are read once: a checkpoint deleted meanwhile is skipped, a new one not listed."""
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        put_chain(saver, "a", n=sql.PAGE_SIZE + 5)
        old = put_chain(saver, "b", n=3)  # newer ids: b's checkpoints come first
        listed = []
        for t in saver.list(None):
            if not listed:
                saver.delete_thread("a")  # the rest of a, on the next page, is gone
                put_chain(saver, "c", n=2)
            listed.append(t.config["configurable"]["thread_id"])
        assert listed == ["b"] * len(old) + ["a"] * (sql.PAGE_SIZE - len(old))  # the first page


# --- errors a user meets -------------------------------------------------------------------------
def test_closed_connection_says_so(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        put_chain(saver, n=1)
    with pytest.raises(RuntimeError, match="connection is closed"):
        saver.get_tuple(cfg())


async def test_a_same_thread_connection_names_the_fix(sqlite_path):
    saver = SqliteSaver(sqlite3.connect(sqlite_path))  # check_same_thread defaults to True
    with pytest.raises(RuntimeError, match="check_same_thread=False"):
        await saver.aget_tuple(cfg())  # runs in a worker thread
    saver.conn.close()


def test_missing_tables_when_setup_was_skipped(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        saver.is_setup = True
        with pytest.raises(RuntimeError, match=r"no such table.*call saver.setup\(\)"):
            saver.get_tuple(cfg())


def test_read_only_file_reads_but_refuses_writes(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        (saved,) = put_chain(saver, n=1)
    conn = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True, check_same_thread=False)
    saver = SqliteSaver(conn)
    assert saver.get_tuple(cfg()).config == saved
    with pytest.raises(PermissionError, match="read-only"):
        saver.put(cfg(), make_checkpoint(), {}, {})
    conn.close()
    empty = sqlite3.connect(f"file:{sqlite_path}.empty?mode=rwc", uri=True)
    empty.close()
    with closing(sqlite3.connect(f"file:{sqlite_path}.empty?mode=ro", uri=True)) as conn:
        with pytest.raises(RuntimeError, match="tables are missing"):
            SqliteSaver(conn).get_tuple(cfg())


@pytest.mark.parametrize("column, garbage", [("checkpoint", b"\xc1\xc1 not msgpack"),
                                             ("checkpoint", b"\x01"), ("metadata", b"{oops")])
def test_corrupt_row_raises_invalid_checkpoint(sqlite_path, column, garbage):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        (saved,) = put_chain(saver, "bad", n=1)
        saver.conn.execute(f"UPDATE checkpoints SET {column} = ?", (garbage,))
        saver.conn.commit()
        with pytest.raises(InvalidCheckpointError, match="'bad'"):
            saver.get_tuple(saved)
        with pytest.raises(InvalidCheckpointError):
            list(saver.list(None))


def test_corrupt_write_and_corrupt_metadata_under_a_filter(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        (saved,) = put_chain(saver, "bad", n=1)
        saver.put_writes(saved, [("n", 1)], "task")
        saver.conn.execute("UPDATE writes SET value = X'C1'")
        saver.conn.commit()
        with pytest.raises(InvalidCheckpointError, match="write of task 'task' to channel 'n'"):
            saver.get_tuple(saved)
        saver.conn.execute("UPDATE checkpoints SET metadata = '{oops'")
        saver.conn.commit()
        with pytest.raises(InvalidCheckpointError, match="malformed JSON|not valid JSON"):
            list(saver.list(None, filter={"step": 0}))


def test_bad_input_writes_nothing(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        with pytest.raises(TypeError, match="JSON-serialisable"):
            saver.put(cfg(), make_checkpoint(), {"when": object()}, {})
        with pytest.raises(TypeError):
            saver.put(cfg(), make_checkpoint(x=object()), {}, {})
        (saved,) = put_chain(saver, n=1)
        with pytest.raises(TypeError):
            saver.put_writes(saved, [("ok", 1), ("bad", object())], "task")
        assert count(sqlite_path) == 1 and count(sqlite_path, "writes") == 0
        with pytest.raises(ValueError, match="limit"):
            list(saver.list(None, limit=-1))


def test_a_failed_transaction_leaves_nothing(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        put_chain(saver, "keep", n=3)
        bad = [*housekeeping.prune(["keep"], "keep_latest")[:2],
               sql.Query("SELECT * FROM no_such_table")]
        with pytest.raises(RuntimeError, match="no such table"):
            saver._write(bad)
        assert count(sqlite_path) == 3


def test_prune_keep_latest_drops_parents_and_old_writes(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        saved = put_chain(saver, n=3)
        for c in saved:
            saver.put_writes(c, [("n", 1)], "task")
        saver.prune(["t"])
        (kept,) = saver.list(None)
        assert kept.config == saved[-1] and kept.parent_config is None
        assert len(kept.pending_writes) == 1
        assert count(sqlite_path, "writes") == 1


# --- the async saver -----------------------------------------------------------------------------
async def test_async_saver_sync_verbs_from_threads_only(sqlite_path):
    async with AsyncSqliteSaver.from_conn_string(sqlite_path) as saver:
        saved = await saver.aput(cfg(), make_checkpoint(n=1), {"step": 0}, {})
        with pytest.raises(asyncio.InvalidStateError, match="use the async ones"):
            saver.get_tuple(cfg())
        found = await asyncio.to_thread(saver.get_tuple, cfg())
        assert found.config == saved and found.checkpoint["channel_values"] == {"n": 1}
        await asyncio.to_thread(saver.put_writes, saved, [("n", 2)], "task")
        assert len(await asyncio.to_thread(lambda: list(saver.list(None)))) == 1
        assert (await saver.aget_tuple(saved)).pending_writes == [("task", "n", 2)]


async def test_async_saver_matches_sync_saver_on_the_same_file(sqlite_path):
    with SqliteSaver.from_conn_string(sqlite_path) as sync_saver:
        put_chain(sync_saver, n=3, run_id="r")
        expected = [tuple(t) for t in sync_saver.list(None)]
    async with AsyncSqliteSaver.from_conn_string(sqlite_path) as saver:
        assert [tuple(t) async for t in saver.alist(None)] == expected
        await asyncio.gather(*[saver.aput(cfg(f"c{i}"), make_checkpoint(), {}, {})
                               for i in range(10)])
        await saver.adelete_for_runs(["r"])
        assert len([t async for t in saver.alist(None)]) == 10


async def test_async_saver_errors(sqlite_path):
    with pytest.raises(RuntimeError, match="inside a running event loop"):
        await asyncio.to_thread(AsyncSqliteSaver, None)
    async with AsyncSqliteSaver.from_conn_string(sqlite_path) as saver:
        pass
    with pytest.raises(RuntimeError, match="connection is closed"):
        await saver.aget_tuple(cfg())


async def test_async_saver_accepts_an_unstarted_connection(sqlite_path):
    import aiosqlite

    conn = aiosqlite.connect(sqlite_path)
    saver = AsyncSqliteSaver(conn)
    await saver.aput(cfg(), make_checkpoint(), {}, {})
    assert await saver.aget_tuple(cfg()) is not None
    await conn.close()


def test_memory_database(tmp_path):
    with SqliteSaver.from_conn_string(":memory:") as saver:
        put_chain(saver, n=2)
        assert len(list(saver.list(cfg()))) == 2


# --- property: any sequence of verbs leaves both libraries' savers in the same state --------------
def test_random_verb_sequences_match_langgraph():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    meta_values = st.one_of(st.none(), st.booleans(), st.integers(-2, 2),
                            st.sampled_from(["a", "b"]), st.lists(st.integers(0, 2), max_size=2),
                            st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2)))
    put = st.tuples(st.just("put"), st.sampled_from(["t1", "t2"]), st.sampled_from(["", "sub:1"]),
                    st.booleans(),
                    st.dictionaries(st.sampled_from(["k", "run_id", "a.b"]), meta_values))
    writes = st.lists(st.tuples(st.sampled_from(["x", "y", "__error__", "__interrupt__"]),
                                st.integers(0, 9)), min_size=1, max_size=3)
    put_writes = st.tuples(st.just("put_writes"), st.integers(0, 50), writes,
                           st.sampled_from(["task1", "task2"]), st.sampled_from(["", "~a", "~b"]))
    # not "a.b": LangGraph reads a dotted filter key as a path a -> b (see the test below)
    filters = st.dictionaries(st.sampled_from(["k", "run_id", "step"]), meta_values, max_size=2)

    @settings(max_examples=40, deadline=None, database=None)
    @given(st.lists(st.one_of(put, put_writes), max_size=12), filters)
    def check(verbs, filter):
        with SqliteSaver.from_conn_string(":memory:") as ours, \
                LGSqliteSaver.from_conn_string(":memory:") as lg:
            saved: list[dict] = []
            for n, verb in enumerate(verbs):
                if verb[0] == "put":
                    _, thread, ns, child, meta = verb
                    parent = next((c for c in reversed(saved) if child and
                                   c["configurable"]["thread_id"] == thread), None)
                    config = cfg(thread, ns, parent and parent["configurable"]["checkpoint_id"])
                    checkpoint = {**make_checkpoint(n=n), "id": f"1f000000-0000-6000-8000-{n:012d}"}
                    meta = {"step": n, **meta}
                    results = [s.put(config, checkpoint, meta, {}) for s in (ours, lg)]
                    assert results[0] == results[1]
                    saved.append(results[0])
                elif saved:
                    _, pick, some_writes, task, path = verb
                    for s in (ours, lg):
                        s.put_writes(saved[pick % len(saved)], some_writes, task, path)
            for query in [dict(config=None), dict(config=cfg("t1")),
                          dict(config=None, filter=filter),
                          dict(config=cfg("t2", "sub:1"), limit=2)]:
                mine, theirs = ours.list(**query), lg.list(**query)
                assert [tuple(t) for t in mine] == [tuple(t) for t in theirs]
            for config in saved + [cfg("t1"), cfg("t2", "sub:1")]:
                mine, theirs = ours.get_tuple(config), lg.get_tuple(config)
                assert (mine and tuple(mine)) == (theirs and tuple(theirs))

    check()


def test_a_dotted_filter_key_is_one_key_here_and_a_path_in_langgraph():
    checkpoint = make_checkpoint()
    metadata_rows = [{"a.b": 1}, {"a": {"b": 1}}]
    found = {}
    for name, saver_class in [("ours", SqliteSaver), ("langgraph", LGSqliteSaver)]:
        with saver_class.from_conn_string(":memory:") as saver:
            for i, meta in enumerate(metadata_rows):
                saver.put(cfg(f"t{i}"), {**checkpoint, "id": f"id-{i}"}, meta, {})
            found[name] = [t.metadata for t in saver.list(None, filter={"a.b": 1})]
    assert found == {"ours": [{"a.b": 1}], "langgraph": [{"a": {"b": 1}}]}


# --- one commit per super-step ----------------------------------------------------------------
def two_step_graph(saver, fail_in_b: bool = False):
    """a then b, each alone in its step (our runtime, not LangGraph's)."""
    def b(state):
        if fail_in_b:
            raise ValueError("b failed")
        return {"n": state["n"] + 1, "log": ["b"]}

    g = our_graph.StateGraph(State)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
    g.add_node("b", b)
    g.add_edge(our_graph.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", our_graph.END)
    return g.compile(checkpointer=saver)


def transactions(statements: list[str]) -> list[list[str]]:
    """The traced statements grouped by transaction: the tables inserted into, in order."""
    found: list[list[str]] = []
    for text in statements:
        if text.startswith("BEGIN"):
            found.append([])
        elif text.startswith("INSERT"):
            table = text.split(" INTO ")[1].split()[0]
            if found[-1][-1:] != [table]:  # executemany traces one INSERT per row
                found[-1].append(table)
    return found


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_step_with_one_task_costs_one_commit(sqlite_path, durability):
    """The task's writes share the transaction of the checkpoint they produce: writes first."""
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        saver.setup()
        statements: list[str] = []
        saver.conn.set_trace_callback(statements.append)
        two_step_graph(saver).invoke({"n": 0, "log": []}, cfg(), durability=durability)
        saver.conn.set_trace_callback(None)
        history = list(saver.list(cfg()))
    # the input checkpoint, then one transaction per step (__start__, a, b): writes, checkpoint
    assert transactions(statements) == [["checkpoints"]] + [["writes", "checkpoints"]] * 3
    assert sum(s.startswith("COMMIT") for s in statements) == 4
    # each step's writes are stored on the checkpoint the task ran from
    logs = [[v for _, c, v in t.pending_writes if c == "log"] for t in history]
    assert logs == [[], [["b"]], [["a"]], [[]]]
    assert [t.metadata["step"] for t in history] == [2, 1, 0, -1]


def test_a_failed_last_task_still_saves_its_error_alone(sqlite_path):
    """No checkpoint follows a failed step: the held error write is saved on its own."""
    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        with pytest.raises(ValueError, match="b failed"):
            two_step_graph(saver, fail_in_b=True).invoke({"n": 0, "log": []}, cfg())
        latest = saver.get_tuple(cfg())
        assert latest.metadata["step"] == 1
        assert [c for _, c, _ in latest.pending_writes] == ["__error__"]
        assert two_step_graph(saver).invoke(None, cfg())["log"] == ["a", "b"]  # b alone reruns
