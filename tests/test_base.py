"""The checkpoint model and saver contract (base.py, id.py), checked against LangGraph's own.

The last part runs one put / put_writes / list / get_tuple script on our InMemorySaver and on
LangGraph's, and compares what they return, with ids and random version tails normalised.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
import uuid

import pytest
import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver as LgBaseCheckpointSaver
from langgraph.checkpoint.base import create_checkpoint as lg_create_checkpoint
from langgraph.checkpoint.base import empty_checkpoint as lg_package_empty_checkpoint
from langgraph.checkpoint.base import get_checkpoint_metadata as lg_metadata
from langgraph.checkpoint.base import id as lg_id
from langgraph.checkpoint.memory import InMemorySaver as LgInMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer as LgJsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from langgraph.pregel._checkpoint import copy_checkpoint as lg_copy_checkpoint
from langgraph.pregel._checkpoint import empty_checkpoint as lg_empty_checkpoint
from langgraph.types import Command, Send, interrupt

from lgcheckpoint.checkpoint import id as our_id
from lgcheckpoint.checkpoint.base import (
    LATEST_VERSION,
    BaseCheckpointSaver,
    CheckpointTuple,
    copy_checkpoint,
    create_checkpoint,
    empty_checkpoint,
    get_checkpoint_id,
    get_checkpoint_metadata,
    metadata_matches,
)
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.pregel.checkpoint import LATEST_VERSION as RUNTIME_VERSION
from lgcheckpoint.pregel.checkpoint import empty_checkpoint as runtime_empty_checkpoint
from lgcheckpoint.errors import MissingConfigError


# --- uuid6 ------------------------------------------------------------------------------------
def test_100_000_ids_in_a_tight_loop_strictly_increase_as_strings():
    ids = [str(our_id.uuid6()) for _ in range(100_000)]
    assert all(a < b for a, b in zip(ids, ids[1:]))


def test_ids_from_several_threads_are_unique():
    found: list[str] = []

    def make() -> None:
        found.extend(str(our_id.uuid6()) for _ in range(5_000))

    workers = [threading.Thread(target=make) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(set(found)) == 20_000


@pytest.mark.parametrize("step", [-2, -1, 0, 1, 7, 4095])
def test_the_step_rides_in_clock_seq(step):
    made = our_id.uuid6(clock_seq=step)
    assert made.version == 6 and made.variant == uuid.RFC_4122
    assert made.clock_seq == step & 0x3FFF
    assert made.clock_seq == lg_id.uuid6(clock_seq=step).clock_seq


def test_same_bits_as_langgraph_for_the_same_clock(monkeypatch):
    frozen = time.time_ns() + 10**15  # later than any id either module has made
    monkeypatch.setattr(time, "time_ns", lambda: frozen)
    monkeypatch.setattr(our_id, "_last_ticks", 0)  # restored after the test
    monkeypatch.setattr(lg_id, "_last_v6_timestamp", None)
    for node, clock_seq in [(0, 0), (0xABCDEF012345, -1), (1, 5)]:
        assert our_id.uuid6(node, clock_seq) == lg_id.uuid6(node=node, clock_seq=clock_seq)


# --- checkpoints --------------------------------------------------------------------------------
def test_empty_checkpoint_matches_langgraphs_shape():
    ours, theirs = runtime_empty_checkpoint(), lg_empty_checkpoint()
    assert ours["v"] == theirs["v"] == RUNTIME_VERSION == 4
    assert uuid.UUID(ours["id"]).clock_seq == uuid.UUID(theirs["id"]).clock_seq  # step -2
    assert {k: ours[k] for k in theirs if k not in ("id", "ts")} == {
        k: theirs[k] for k in theirs if k not in ("id", "ts")}
    assert ours["updated_channels"] is None  # LangGraph adds it on the first copy; we start with it


def same_but_id_and_ts(ours, theirs):
    return {k: v for k, v in ours.items() if k not in ("id", "ts")} == {
        k: v for k, v in theirs.items() if k not in ("id", "ts")}


def test_the_checkpoint_packages_helpers_write_v2_like_langgraphs():
    ours, theirs = empty_checkpoint(), lg_package_empty_checkpoint()
    assert ours["v"] == theirs["v"] == LATEST_VERSION == 2
    assert same_but_id_and_ts(ours, theirs)  # pending_sends=[] included
    ours["pending_sends"] = theirs["pending_sends"] = ["a send"]
    ours["channel_versions"] = theirs["channel_versions"] = {"x": 1}
    ours["channel_values"] = theirs["channel_values"] = {"x": "v"}
    for channels in (None, {}):
        a, b = create_checkpoint(ours, channels, 3), lg_create_checkpoint(theirs, channels, 3)
        assert same_but_id_and_ts(a, b), channels
        assert uuid.UUID(a["id"]).clock_seq == uuid.UUID(b["id"]).clock_seq == 3
    assert create_checkpoint(ours, None, 3, id="fixed")["id"] == "fixed"


def test_empty_checkpoints_share_nothing():
    a, b = empty_checkpoint(), empty_checkpoint()
    a["channel_values"]["x"] = 1
    assert b["channel_values"] == {} and a["id"] < b["id"]


def sample_checkpoint():
    cp = runtime_empty_checkpoint()
    cp.update(channel_values={"x": [1]}, channel_versions={"x": 1},
              versions_seen={"node": {"x": 1}}, updated_channels=["x"])
    return cp


def test_copy_checkpoint_equals_langgraphs_copy():
    cp = sample_checkpoint()
    assert copy_checkpoint(cp) == lg_copy_checkpoint(cp) == cp


def test_copy_checkpoint_is_independent_of_the_original():
    cp = sample_checkpoint()
    copied = copy_checkpoint(cp)
    cp["channel_values"]["y"] = 2
    cp["channel_versions"]["x"] = 2
    cp["versions_seen"]["node"]["x"] = 2
    cp["versions_seen"]["other"] = {}
    cp["updated_channels"].append("y")
    assert copied == {**sample_checkpoint(), "id": cp["id"], "ts": cp["ts"]}


# --- metadata -----------------------------------------------------------------------------------
METADATA_CASES = [
    ({}, {"source": "loop", "step": 1}),
    ({"configurable": {"thread_id": "t", "checkpoint_ns": "", "user": "ann", "n": 3}},
     {"source": "input", "step": -1}),
    ({"metadata": {"run_id": "r1", "tags": ["a"], "nested": {"k": 1}},
      "configurable": {"__pregel_x": 1, "langgraph_step": 3, "flag": True, "f": 1.5}},
     {"step": 0}),
    ({"metadata": {"step": 99, "who": "a\u0000b"}}, {"step": 2, "note": "x\u0000y"}),
    ({"configurable": {"checkpoint_id": "c", "checkpoint_map": {}}}, {"writes": {"n": 1}}),
]


@pytest.mark.parametrize("config,metadata", METADATA_CASES)
def test_get_checkpoint_metadata_matches_langgraph(config, metadata):
    assert get_checkpoint_metadata(config, metadata) == lg_metadata(config, metadata)


def test_get_checkpoint_metadata_does_not_mutate_its_input():
    metadata = {"step": 1}
    get_checkpoint_metadata({"configurable": {"user": "ann"}}, metadata)
    assert metadata == {"step": 1}


def test_metadata_matches_every_filter_key_by_equality():
    md = {"source": "loop", "step": 2, "parents": {}}
    assert metadata_matches(md, None) and metadata_matches(md, {})
    assert metadata_matches(md, {"source": "loop", "step": 2})
    assert not metadata_matches(md, {"source": "loop", "step": 3})
    assert not metadata_matches(md, {"missing": None})
    assert get_checkpoint_id({"configurable": {"checkpoint_id": "c"}}) == "c"
    assert get_checkpoint_id({}) is None


# --- BaseCheckpointSaver defaults -------------------------------------------------------------
class OnlyGetTuple(BaseCheckpointSaver):
    """Implements one sync verb, to see the async twin run it in a worker thread."""

    def get_tuple(self, config):
        return CheckpointTuple(config, {"thread": threading.get_ident()}, {})


@pytest.mark.parametrize("verb,args", [
    ("get_tuple", ({},)), ("list", (None,)), ("put", ({}, {}, {}, {})),
    ("put_writes", ({}, [], "t")), ("delete_thread", ("t",)), ("delete_for_runs", ([],)),
    ("copy_thread", ("a", "b")), ("prune", (["t"],)),
])
def test_base_sync_verbs_say_what_to_implement(verb, args):
    with pytest.raises(NotImplementedError, match=f"must implement {verb}"):
        getattr(BaseCheckpointSaver(), verb)(*args)


async def test_async_twins_default_to_the_sync_verb_in_a_thread():
    saver = OnlyGetTuple()
    loaded = await saver.aget_tuple({})
    assert loaded.checkpoint["thread"] != threading.get_ident()
    assert (await saver.aget({}))["thread"] != threading.get_ident()
    with pytest.raises(NotImplementedError, match="must implement put"):
        await saver.aput({}, {}, {}, {})


def test_base_versions_are_integers():
    saver = BaseCheckpointSaver()
    assert saver.get_next_version(None) == 1 and saver.get_next_version(41) == 42
    with pytest.raises(NotImplementedError, match="string versions"):
        saver.get_next_version("00001.5")


def test_with_allowlist_clones_only_when_the_serializer_changes():
    class Allowing:
        def __init__(self, allowed=()):
            self.allowed = tuple(allowed)

        def dumps_typed(self, obj):
            return "x", b""

        def loads_typed(self, data):
            return None

        def with_msgpack_allowlist(self, extra):
            return Allowing(self.allowed + tuple(extra))

    class NoAllowList:
        def dumps_typed(self, obj):
            return "x", b""

        def loads_typed(self, data):
            return None

    plain = InMemorySaver(serde=NoAllowList())
    assert plain.with_allowlist([("m", "C")]) is plain
    saver = InMemorySaver(serde=Allowing())
    clone = saver.with_allowlist([("m", "C")])
    assert clone is not saver and clone.serde.allowed == (("m", "C"),)
    assert saver.serde.allowed == () and clone.storage is saver.storage


# --- InMemorySaver side by side with LangGraph's -----------------------------------------------
ISO_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")
UUID_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HEX_ID = re.compile(r"[0-9a-f]{32}")


def normalise(value, names: dict[str, str] | None = None):
    """Make two runs comparable: ids (uuids, hex hashes) become id0, id1... in order of first
    appearance, string channel versions their integer part, timestamps "<ts>"."""
    names = {} if names is None else names
    if isinstance(value, str):
        head, dot, _ = value.partition(".")
        if dot and len(head) == 32 and head.isdigit():
            return f"v{int(head)}"
        if ISO_TIMESTAMP.match(value):
            return "<ts>"
        if HEX_ID.fullmatch(value):  # an interrupt id
            return names.setdefault(value, f"id{len(names)}")
        # uuids, alone or inside a namespace such as "sub:<task id>"
        return UUID_TEXT.sub(lambda m: names.setdefault(m[0], f"id{len(names)}"), value)
    if isinstance(value, dict):
        return {normalise(k, names): normalise(v, names) for k, v in value.items()}
    if hasattr(value, "_fields"):  # NamedTuples: CheckpointTuple, StateSnapshot, PregelTask
        return type(value)(*(normalise(v, names) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(normalise(v, names) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # e.g. Interrupt
        return type(value).__name__, normalise(dataclasses.asdict(value), names)
    return value


def script(saver) -> list:
    """One saver session: what every call returned, in order."""
    out = []
    root = {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}

    def checkpoint(values, versions, seen=None):
        cp = empty_checkpoint()
        cp.update(channel_values=values, channel_versions=versions, versions_seen=seen or {},
                  updated_channels=sorted(values))
        return cp

    v1 = saver.get_next_version(None, None)
    cp1 = checkpoint({"__start__": {"x": 1}}, {"__start__": v1})
    c1 = saver.put(root, cp1, {"source": "input", "step": -1, "parents": {}, "run_id": "r1"},
                   {"__start__": v1})
    out.append(c1)
    saver.put_writes(c1, [("x", 1), ("branch:to:a", None)], "task-b", "~__pregel_pull, b")
    saver.put_writes(c1, [("x", 2)], "task-a", "~__pregel_pull, a")
    saver.put_writes(c1, [("x", 99)], "task-a", "~__pregel_pull, a")  # a retry: first wins
    saver.put_writes(c1, [("__error__", "boom")], "task-c")
    saver.put_writes(c1, [("__error__", "boom again")], "task-c")  # special: overwritten
    saver.put_writes(c1, [("__interrupt__", ["ask"]), ("__resume__", "yes")], "task-c")
    v2 = saver.get_next_version(v1, None)
    x1 = saver.get_next_version(None, None)
    cp2 = checkpoint({"x": 2, "__start__": {"x": 1}}, {"__start__": v2, "x": x1},
                     {"__input__": {}, "a": {"__start__": v1}})
    c2 = saver.put({**c1, "metadata": {"user": "ann"}}, cp2,
                   {"source": "loop", "step": 0, "parents": {}, "run_id": "r1"},
                   {"__start__": v2, "x": x1})  # __start__ has no value now: stored as "empty"
    out.append(c2)
    child = {"configurable": {"thread_id": "t1", "checkpoint_ns": "sub:1"}}
    out.append(saver.put(child, checkpoint({"y": 1}, {"y": x1}),
                         {"source": "loop", "step": 0, "parents": {"": cp2["id"]}}, {"y": x1}))
    other = {"configurable": {"thread_id": "t2", "checkpoint_ns": ""}}
    out.append(saver.put(other, checkpoint({}, {}), {"source": "input", "step": -1}, {}))

    out.append(saver.get_tuple({"configurable": {"thread_id": "t1"}}))
    out.append(saver.get_tuple(c1))
    out.append(saver.get_tuple({"configurable": {"thread_id": "t1", "checkpoint_ns": "sub:1"}}))
    out.append(saver.get_tuple({"configurable": {"thread_id": "nobody"}}))
    out.append(saver.get_tuple({"configurable": {"thread_id": "t1", "checkpoint_id": "nope"}}))
    for config, kw in [
        ({"configurable": {"thread_id": "t1"}}, {}),
        (root, {}),
        (None, {}),
        (None, {"filter": {"source": "input"}}),
        (root, {"filter": {"run_id": "r1", "step": 0}}),
        (root, {"filter": {"user": "ann"}}),
        ({"configurable": {"thread_id": "t1"}}, {"limit": 2}),
        (root, {"before": c2}),
        (c1, {}),
    ]:
        out.append(list(saver.list(config, **kw)))
    return out


def test_in_memory_saver_returns_what_langgraphs_returns():
    ours, theirs = script(InMemorySaver()), script(LgInMemorySaver())
    for step, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert normalise(a) == normalise(b), f"call #{step} differs"


def stored(saver) -> dict:
    """The saver's three tables, every (tag, bytes) decoded, empty namespaces dropped, and each
    step's writes sorted by task path (parallel tasks finish in any order)."""
    load = saver.serde.loads_typed

    def in_order(writes):
        rows = [(w[3], idx, w[1], w[0], load(w[2])) for (_, idx), w in writes.items()]
        return sorted(rows, key=lambda row: row[:3])

    return normalise({
        "blobs": {k: (v[0], load(v) if v[0] != "empty" else None) for k, v in saver.blobs.items()},
        "writes": {k: in_order(ws) for k, ws in saver.writes.items()},
        "storage": {(t, ns): {i: (load(s[0]), load(s[1]), s[2]) for i, s in cps.items()}
                    for t, nss in saver.storage.items() for ns, cps in nss.items() if cps},
    })


def test_in_memory_saver_stores_what_langgraphs_stores():
    ours, theirs = InMemorySaver(), LgInMemorySaver()
    script(ours), script(theirs)
    assert stored(ours) == stored(theirs)


def test_a_pre_v4_checkpoint_is_read_as_stored_like_langgraphs_in_memory_saver():
    """Only LangGraph's PostgresSaver moves a v<4 checkpoint's parent's Sends into TASKS on
    read; its InMemorySaver (and SqliteSaver) return what was stored, and so do ours."""
    def latest(saver, make_empty, make_next):
        first = make_empty()
        config = saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, first, {}, {})
        saver.put_writes(config, [("__pregel_tasks", "send-1")], "task-1")
        saver.put(config, make_next(first, None, 1), {}, {})
        return saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})

    ours = latest(InMemorySaver(), empty_checkpoint, create_checkpoint)
    theirs = latest(LgInMemorySaver(), lg_package_empty_checkpoint, lg_create_checkpoint)
    assert ours.checkpoint["channel_values"] == theirs.checkpoint["channel_values"] == {}
    assert ours.checkpoint["pending_sends"] == theirs.checkpoint["pending_sends"] == []


def test_version_strings_look_like_langgraphs():
    ours, theirs = InMemorySaver(), LgInMemorySaver()
    for current in (None, 1, "00000000000000000000000000000007.0.123"):
        a, b = ours.get_next_version(current, None), theirs.get_next_version(current, None)
        assert a.split(".")[0] == b.split(".")[0] and len(a.split(".")[0]) == 32
    assert ours.get_next_version(None) < ours.get_next_version(ours.get_next_version(None))


def test_missing_thread_id_is_a_clear_error():
    saver = InMemorySaver()
    with pytest.raises(MissingConfigError, match="thread_id"):
        saver.get_tuple({"configurable": {}})
    with pytest.raises(MissingConfigError, match="checkpoint_id"):
        saver.put_writes({"configurable": {"thread_id": "t"}}, [("x", 1)], "task")


# --- under LangGraph's own loop: our saver must store exactly what LangGraph's stores ----------
class OursForLangGraph(InMemorySaver, LgBaseCheckpointSaver):
    """Our saver, also typed as LangGraph's base so that LangGraph's compile() accepts it."""


def reference_graph(saver):
    """Fan-out and join, a subgraph (its own namespace), Send, an interrupt; all in LangGraph."""

    class State(TypedDict):
        log: Annotated[list, operator.add]
        last: str

    def add(name):
        return lambda state: {"log": [name]}

    def ask(state):
        return {"log": [interrupt("continue?")]}

    sub = StateGraph(State)
    sub.add_node("inner", lambda state: {"log": ["inner"], "last": "inner"})
    sub.add_edge(START, "inner")
    graph = StateGraph(State)
    graph.add_node("a", add("a"))
    graph.add_node("b", add("b"))
    graph.add_node("sub", sub.compile())
    graph.add_node("fan", add("fan"))
    graph.add_node("ask", ask)
    graph.add_edge(START, "a")
    graph.add_edge(START, "b")
    graph.add_edge(["a", "b"], "sub")
    graph.add_conditional_edges("sub", lambda s: [Send("fan", s), Send("fan", s)])
    graph.add_edge("fan", "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=saver)


async def drive(saver, use_async: bool) -> list:
    """Run, resume, update, time-travel; return every answer and the thread's history."""
    graph, config = reference_graph(saver), {"configurable": {"thread_id": "1"}}
    run = graph.ainvoke if use_async else (lambda *a: _async(graph.invoke, *a))
    out = [await run({"log": [], "last": ""}, config), await run(Command(resume="go"), config)]
    history = list(graph.get_state_history(config))
    graph.update_state(history[2].config, {"log": ["edited"]}, as_node="fan")
    out.append(await run(Command(resume="again"), config))
    out.append(await run(None, history[-2].config))  # replay from an early checkpoint: a fork
    out.append(list(graph.get_state_history(config)))
    out.append(list(graph.get_state_history({"configurable": {"thread_id": "1"}}, limit=2)))
    return out


async def _async(fn, *args):
    return fn(*args)


@pytest.mark.parametrize("use_async", [False, True], ids=["invoke", "ainvoke"])
async def test_under_langgraphs_loop_our_saver_stores_what_langgraphs_stores(use_async):
    serde = LgJsonPlusSerializer()
    ours, theirs = OursForLangGraph(serde=serde), LgInMemorySaver(serde=serde)
    assert normalise(await drive(ours, use_async)) == normalise(await drive(theirs, use_async))
    assert stored(ours) == stored(theirs)
