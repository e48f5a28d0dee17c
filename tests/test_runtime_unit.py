"""Unit tests of the runtime: builder, loop, checkpoints, state API.

LangGraph is compared in tests/differential.
"""

import asyncio
import copy
import operator
import threading
import time
from typing import Annotated, TypedDict

import pytest

from lgcheckpoint.channels import EphemeralValue, LastValue, Topic
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.config import get_stream_writer
from lgcheckpoint.constants import TASKS
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.pregel.algo import InputWrites, apply_writes
from lgcheckpoint.pregel.parent_commands import names_of, parent_ns
from lgcheckpoint.pregel.view import StateView, read_state
from lgcheckpoint.types import Command, RetryPolicy, Send, interrupt


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def chain(checkpointer=None, **compile_kwargs):
    g = StateGraph(State)
    g.add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile(checkpointer=checkpointer, **compile_kwargs)


def test_invoke_without_checkpointer():
    assert chain().invoke({"x": 1}) == {"x": 2, "log": ["a", "b"]}


def test_invoke_writes_one_checkpoint_per_step():
    saver = InMemorySaver()
    cfg = {"configurable": {"thread_id": "t"}}
    assert chain(saver).invoke({"x": 1}, cfg) == {"x": 2, "log": ["a", "b"]}
    history = list(saver.list(cfg))
    assert [t.metadata["step"] for t in history] == [2, 1, 0, -1]
    assert [t.metadata["source"] for t in history] == ["loop", "loop", "loop", "input"]
    assert history[0].checkpoint["channel_values"] == {"x": 2, "log": ["a", "b"]}


# --- durability: write first, publish last; a saved checkpoint is a copy -------------------------
class RecordingSaver(InMemorySaver):
    """An InMemorySaver that logs every call and keeps what each put received, to check later."""

    def __init__(self, delay: float = 0.0):
        super().__init__()
        self.events, self.received, self.delay = [], [], delay

    def put(self, config, checkpoint, metadata, new_versions):
        time.sleep(self.delay)  # a slow disk: the loop must not get ahead of it unsafely
        parent = config["configurable"].get("checkpoint_id")
        self.events.append(("put", checkpoint["id"], parent))
        self.received.append((checkpoint, copy.deepcopy(checkpoint)))
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes, task_id, task_path=""):
        time.sleep(self.delay)
        self.events.append(("put_writes", config["configurable"]["checkpoint_id"], task_id))
        return super().put_writes(config, writes, task_id, task_path)


def fan_out(checkpointer):
    g = StateGraph(State)
    for name in "abc":
        g.add_node(name, lambda s, name=name: {"log": [name]})
        g.add_edge(START, name)
    g.add_node("d", lambda s: {"x": len(s["log"])})
    g.add_edge(["a", "b", "c"], "d")
    return g.compile(checkpointer=checkpointer)


def assert_write_first_publish_last(events):
    """A checkpoint is put only after every put_writes against its parent."""
    for i, (verb, cid, parent) in enumerate(events):
        if verb == "put" and parent is not None:
            later = [e for e in events[i + 1:] if e[0] == "put_writes" and e[1] == parent]
            assert not later, f"writes for {parent} saved after its child {cid} was published"


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_writes_are_durable_before_the_next_checkpoint(durability):
    saver = RecordingSaver(delay=0.002)
    cfg = {"configurable": {"thread_id": durability}}
    assert fan_out(saver).invoke({"x": 0}, cfg, durability=durability)["x"] == 3
    assert_write_first_publish_last(saver.events)
    assert [e[0] for e in saver.events].count("put") == 4  # input, __start__, a+b+c, the join d
    # every checkpoint the saver received is unchanged since: the loop handed it a copy
    for received, snapshot in saver.received:
        assert received == snapshot


def test_exit_durability_puts_once_at_the_end():
    saver = RecordingSaver()
    cfg = {"configurable": {"thread_id": "exit"}}
    assert chain(saver).invoke({"x": 1}, cfg, durability="exit") == {"x": 2, "log": ["a", "b"]}
    assert [e[0] for e in saver.events] == ["put"]
    assert saver.get_tuple(cfg).checkpoint["channel_values"]["log"] == ["a", "b"]


def test_invoke_returns_only_after_everything_is_saved():
    saver = RecordingSaver(delay=0.005)
    cfg = {"configurable": {"thread_id": "slow"}}
    chain(saver).invoke({"x": 1}, cfg)  # durability="async"
    assert saver.get_tuple(cfg).metadata["step"] == 2


def test_ainvoke_matches_invoke():
    saver = InMemorySaver()
    result = asyncio.run(chain(saver).ainvoke({"x": 1}, {"configurable": {"thread_id": "a"}}))
    assert result == {"x": 2, "log": ["a", "b"]}
    assert [t.metadata["step"] for t in saver.list({"configurable": {"thread_id": "a"}})] == [
        2, 1, 0, -1]


def test_interrupt_resume_and_state():
    g = StateGraph(State)
    g.add_node("ask", lambda s: {"log": [interrupt("name?")]})
    g.add_edge(START, "ask")
    graph = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "hitl"}}
    out = graph.invoke({"x": 0}, cfg)
    assert out["__interrupt__"][0].value == "name?"
    snap = graph.get_state(cfg)
    assert snap.next == ("ask",) and snap.interrupts[0].id == out["__interrupt__"][0].id
    assert graph.invoke(Command(resume="ada"), cfg) == {"x": 0, "log": ["ada"]}
    assert graph.get_state(cfg).next == ()


def test_failed_task_resumes_alone():
    calls = {"ok": 0, "flaky": 0}

    def ok(state):
        calls["ok"] += 1
        return {"log": ["ok"]}

    def flaky(state):
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise ValueError("first time fails")
        return {"log": ["flaky"]}

    g = StateGraph(State)
    g.add_node("ok", ok)
    g.add_node("flaky", flaky)
    g.add_edge(START, "ok")
    g.add_edge(START, "flaky")
    graph = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "fail"}}
    with pytest.raises(ValueError, match="first time"):
        graph.invoke({"x": 0}, cfg)
    failed = [t for t in graph.get_state(cfg).tasks if t.error]
    assert [t.name for t in failed] == ["flaky"]
    assert sorted(graph.invoke(None, cfg)["log"]) == ["flaky", "ok"]
    assert calls == {"ok": 1, "flaky": 2}


def test_retry_policy_retries_then_succeeds():
    attempts = []

    def shaky(state):
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("network")
        return {"x": 1}

    g = StateGraph(State)
    g.add_node("shaky", shaky, retry_policy=RetryPolicy(initial_interval=0.001, jitter=False))
    g.add_edge(START, "shaky")
    assert g.compile().invoke({"x": 0}) == {"x": 1, "log": []}
    assert len(attempts) == 3


def test_get_graph_names_nodes_and_edges():
    drawn = chain().get_graph()
    assert set(drawn.nodes) == {"__start__", "a", "b", "__end__"}
    assert {(e.source, e.target) for e in drawn.edges} == {
        ("__start__", "a"), ("a", "b"), ("b", "__end__")}


def test_stopping_a_stream_early_keeps_what_ran():
    saver = InMemorySaver()
    cfg = {"configurable": {"thread_id": "early"}}
    for chunk in chain(saver).stream({"x": 1}, cfg, stream_mode="updates"):
        assert chunk == {"a": {"x": 2, "log": ["a"]}}
        break
    assert graph_step(saver, cfg) >= 0  # the step that ran is saved
    assert chain(saver).invoke(None, cfg)["log"] == ["a", "b"]  # and the thread resumes


def test_astream_stopped_early():
    async def first_chunk():
        stream = chain().astream({"x": 1}, stream_mode="updates")
        async for chunk in stream:
            await stream.aclose()
            return chunk

    assert asyncio.run(first_chunk()) == {"a": {"x": 2, "log": ["a"]}}


def graph_step(saver, cfg):
    return saver.get_tuple(cfg).metadata["step"]


class ParentAwareSaver(RecordingSaver):
    def put(self, config, checkpoint, metadata, new_versions):
        self.events.append(("parents", checkpoint["id"], dict(metadata.get("parents", {}))))
        return super().put(config, checkpoint, metadata, new_versions)


def test_subgraph_checkpoints_follow_their_parent_checkpoint():
    child = StateGraph(State)
    child.add_node("inner", lambda s: {"log": ["inner"]})
    child.add_edge(START, "inner")
    parent = StateGraph(State)
    parent.add_node("child", child.compile())
    parent.add_edge(START, "child")
    saver = ParentAwareSaver(delay=0.003)
    cfg = {"configurable": {"thread_id": "nested"}}
    assert parent.compile(checkpointer=saver).invoke({"x": 0}, cfg)["log"] == ["inner"]
    published = []
    for verb, cid, extra in saver.events:
        if verb == "parents":
            assert all(p in published for p in extra.values()), "child published before parent"
        elif verb == "put":
            published.append(cid)
    assert any(extra for verb, _, extra in saver.events if verb == "parents")  # a child ran


# --- control flow, time travel, subgraphs -----------------------------------------------
def test_send_map_reduce_stores_packets_in_pregel_tasks():
    g = StateGraph(State)
    g.add_node("square", lambda arg: {"log": [arg["n"] ** 2]})
    g.add_conditional_edges(START, lambda s: [Send("square", {"n": n}) for n in (1, 2, 3)])
    saver = InMemorySaver()
    cfg = {"configurable": {"thread_id": "sends"}}
    assert sorted(g.compile(checkpointer=saver).invoke({"x": 0}, cfg)["log"]) == [1, 4, 9]
    packets = [t.checkpoint["channel_values"].get("__pregel_tasks") for t in saver.list(cfg)]
    assert [Send("square", {"n": n}) for n in (1, 2, 3)] in packets


def test_command_goto_and_update():
    g = StateGraph(State)
    g.add_node("a", lambda s: Command(goto="c", update={"log": ["a"]}))
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_edge(START, "a")
    assert g.compile().invoke({"x": 0})["log"] == ["a", "c"]


def test_time_travel_replays_on_a_new_branch():
    saver = InMemorySaver()
    graph, cfg = chain(saver), {"configurable": {"thread_id": "tt"}}
    graph.invoke({"x": 1}, cfg)
    after_a = next(s for s in graph.get_state_history(cfg) if s.next == ("b",))
    assert graph.invoke(None, after_a.config)["log"] == ["a", "b"]
    history = list(graph.get_state_history(cfg))
    assert history[0].metadata["source"] == "loop"
    assert history[1].metadata["source"] == "fork"
    assert history[1].parent_config["configurable"]["checkpoint_id"] == after_a.config[
        "configurable"]["checkpoint_id"]


def test_update_state_forks_an_old_checkpoint():
    saver = InMemorySaver()
    graph, cfg = chain(saver), {"configurable": {"thread_id": "fork"}}
    graph.invoke({"x": 1}, cfg)
    after_a = next(s for s in graph.get_state_history(cfg) if s.next == ("b",))
    forked = graph.update_state(after_a.config, {"log": ["edited"]})
    snap = graph.get_state(forked)
    assert snap.metadata["source"] == "update" and snap.values["log"] == ["a", "edited"]
    assert graph.invoke(None, forked)["log"] == ["a", "edited", "b"]


def test_subgraph_checkpoints_live_under_the_task_namespace():
    child = StateGraph(State)
    child.add_node("inner", lambda s: {"log": [interrupt("ok?")]})
    child.add_edge(START, "inner")
    parent = StateGraph(State)
    parent.add_node("child", child.compile())
    parent.add_edge(START, "child")
    graph, cfg = parent.compile(checkpointer=InMemorySaver()), {"configurable": {"thread_id": "s"}}
    chunks = list(graph.stream({"x": 0}, cfg, stream_mode="updates", subgraphs=True))
    assert chunks[0][0][0].startswith("child:")  # the child's namespace: "child:<task id>"
    task = graph.get_state(cfg, subgraphs=True).tasks[0]
    assert task.state.next == ("inner",)
    assert task.state.config["configurable"]["checkpoint_ns"] == chunks[0][0][0]
    assert graph.invoke(Command(resume="yes"), cfg)["log"] == ["yes"]


def test_custom_stream_writer():
    def talk(state):
        get_stream_writer()("hello")
        return {"x": 1}

    g = StateGraph(State)
    g.add_node("talk", talk)
    g.add_edge(START, "talk")
    assert list(g.compile().stream({"x": 0}, stream_mode="custom")) == ["hello"]


class BrokenSaver(InMemorySaver):
    def put_writes(self, config, writes, task_id, task_path=""):
        raise ConnectionError("disk gone")


def test_a_failed_save_reaches_the_caller_and_nothing_later_is_published():
    saver = BrokenSaver()
    cfg = {"configurable": {"thread_id": "broken"}}
    with pytest.raises(ConnectionError, match="disk gone"):
        chain(saver).invoke({"x": 1}, cfg)
    # only the input checkpoint made it: the step whose writes failed was never published
    assert [t.metadata["step"] for t in saver.list(cfg)] == [-1]


def test_async_saves_store_what_sync_saves_store():
    """A slow saver must not see a channel value that a later step changed (LangGraph's async
    mode stores the join below as {'n0'} at step 4 instead of set(): the set was mutated)."""
    def build(saver):
        g = StateGraph(State)
        for n in ["n0", "n1", "n2"]:
            g.add_node(n, lambda s, n=n: {"log": [n]})
        g.add_edge(START, "n1")
        g.add_edge("n1", "n2")
        g.add_edge("n2", "n0")
        g.add_edge(["n0", "n1"], "n2")
        return g.compile(checkpointer=saver)

    stored = {}
    for durability in ("sync", "async"):
        saver, cfg = RecordingSaver(delay=0.002), {"configurable": {"thread_id": durability}}
        build(saver).invoke({"x": 0}, cfg, durability=durability)
        stored[durability] = [t.checkpoint["channel_values"] for t in saver.list(cfg)]
    assert stored["async"] == stored["sync"]
    assert stored["sync"][1]["join:n0+n1:n2"] == set()  # step 4: n2 consumed the join


class SendsAsV3(InMemorySaver):
    """Serves checkpoints with queued Sends as LangGraph < 0.3 stored them (v3, pending_sends)."""

    def get_tuple(self, config):
        found = super().get_tuple(config)
        if found and found.checkpoint["channel_values"].get(TASKS):
            cp = found.checkpoint
            cp["v"], cp["pending_sends"] = 3, cp["channel_values"].pop(TASKS)
            cp["channel_versions"].pop(TASKS)
        return found


def test_a_fork_of_a_pre_v4_checkpoint_keeps_its_sends():
    g = StateGraph(State)
    g.add_node("one", lambda s: Command(goto=[Send("two", {"x": 5})], update={"log": ["one"]}))
    g.add_node("two", lambda s: {"log": ["two"]})
    g.add_edge(START, "one")
    graph = g.compile(checkpointer=SendsAsV3())
    cfg = {"configurable": {"thread_id": "v3"}}
    graph.invoke({"x": 0, "log": []}, cfg)
    queued = next(s for s in graph.get_state_history(cfg) if s.next == ("two",))
    fork = graph.update_state(queued.config, None, as_node="__copy__")
    assert [t.name for t in graph.get_state(fork).tasks] == ["two"]  # the Send was copied
    assert graph.invoke(None, fork)["log"] == ["one", "two"]


class Gauge:
    """A node that records how many copies of itself run at once."""

    def __init__(self):
        self.now = self.most = 0
        self.lock = threading.Lock()

    def enter(self):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self):
        with self.lock:
            self.now -= 1


def fan_out_graph(node):
    g = StateGraph(State)
    g.add_node("split", lambda s: {})
    g.add_node("work", node)
    g.add_edge(START, "split")
    g.add_conditional_edges("split", lambda s: [Send("work", {"x": i, "log": []})
                                               for i in range(12)])
    return g.compile()


@pytest.mark.parametrize("limit", [None, 3])
def test_max_concurrency_limits_a_steps_tasks(limit):
    gauge = Gauge()

    def work(state):
        gauge.enter()
        time.sleep(0.02)
        gauge.leave()
        return {"log": [state["x"]]}

    out = fan_out_graph(work).invoke({"x": 0, "log": []}, {"max_concurrency": limit})
    assert sorted(out["log"]) == list(range(12))
    assert gauge.most == 3 if limit else gauge.most > 3


def test_max_concurrency_limits_async_tasks_too():
    gauge = Gauge()

    async def work(state):
        gauge.enter()
        await asyncio.sleep(0.01)
        gauge.leave()
        return {"log": [state["x"]]}

    out = asyncio.run(fan_out_graph(work).ainvoke({"x": 0, "log": []}, {"max_concurrency": 2}))
    assert sorted(out["log"]) == list(range(12)) and gauge.most == 2
    with pytest.raises(ValueError, match="max_concurrency must be a positive int"):
        asyncio.run(fan_out_graph(work).ainvoke({"x": 0, "log": []}, {"max_concurrency": 0}))


# --- a Command(graph=PARENT) finds the graph it is meant for --------------------------------
@pytest.mark.parametrize("ns, parent", [
    ("a:1", ""),
    ("a:1|b:2", "a:1"),
    ("a:1|1|b:2", "a:1"),  # b ran in the second graph that task a invoked
    ("a:1|2|b:2|c:3", "a:1|2|b:2"),  # a numeric part inside the path is kept
    ("a:1|b:2|3", "a:1"),
])
def test_the_parent_namespace_skips_numeric_parts(ns, parent):
    assert parent_ns(ns) == parent


def test_a_namespace_by_names_drops_task_ids_and_numeric_parts():
    assert names_of("a:1|1|b:2") == "a|b"


# --- the state view (pregel/view.py): reads of the whole state as one dict copy -------------------
def view_channels() -> dict:
    return {"a": LastValue(int, key="a"), "b": EphemeralValue(int, key="b"),
            "t": Topic(int, accumulate=True, key="t")}


def test_state_view_follows_apply_writes():
    """After each step the view reads what the channels hold, in key order, each read new."""
    channels = view_channels()
    keys = ["a", "b", "t"]
    view = StateView(channels, [keys])
    checkpoint = {"channel_versions": {}, "versions_seen": {}}
    assert view.read(keys) == {}

    def step(writes, triggers=("x",)):
        task = InputWrites(writes)._replace(triggers=triggers)
        apply_writes(checkpoint, channels, [task], lambda v, _: (v or 0) + 1, {}, view=view)
        assert list(view.read(keys).items()) == list(read_state(channels, keys).items())

    step([("t", 1)], triggers=())
    step([("b", 2), ("a", 1)])  # "a" appears after "t": still listed first
    step([("t", 3)])  # the ephemeral "b" is cleared
    first = view.read(keys)
    first["a"] = 99
    first["t"].append(4)  # a Topic's list is the reader's own
    assert view.read(keys) == {"a": 1, "t": [1, 3]}


def test_state_view_reads_unregistered_keys_from_the_channels():
    channels = view_channels()
    view = StateView(channels, [])
    apply_writes({"channel_versions": {}, "versions_seen": {}}, channels,
                 [InputWrites([("a", 5)])], lambda v, _: (v or 0) + 1, {}, view=view)
    assert view.read(["a", "b"]) == {"a": 5}
    assert view.read("a") == 5
