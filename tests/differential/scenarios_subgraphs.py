"""Scenarios of subgraph persistence (compile(checkpointer=True / False), a graph on its own
thread inside a node), ``__copy__`` forks and ``bulk_update_state``. Same contract as
``scenarios_loop.py``: ``scenario(lib)`` drives recording verbs.
"""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

from tests.differential.harness import Run, registry
from tests.differential.scenarios_interrupts import checkpoint_at_step, child_graph
from tests.differential.scenarios_loop import Trail, thread, visit

SUBGRAPHS, scenario = registry()


def child(lib: Run, checkpointer, ask: bool = False):
    """START -> inner (optionally asks) -> inner2, compiled with the given checkpointer."""
    return child_graph(lib, ask, checkpointer)


def parent(lib: Run, sub, calls: bool = False):
    """START -> before -> child -> after; the child is the node itself, or called by it."""
    g = lib.StateGraph(Trail)
    g.add_node("before", visit("before", lib))
    if calls:
        g.add_node("child", lambda state: {"trail": sub.invoke({"trail": ["call"]})["trail"]})
    else:
        g.add_node("child", sub)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "before")
    g.add_edge("before", "child")
    g.add_edge("child", "after")
    return g.compile(checkpointer=lib.saver())


def child_config(lib: Run, graph, cfg: dict) -> dict:
    """The per-thread subgraph's own config: its namespace ("child") on the parent's thread."""
    return {"configurable": {**cfg["configurable"], "checkpoint_ns": "child"}}


@scenario
def per_thread_subgraph_keeps_its_state(lib: Run):
    graph = parent(lib, child(lib, True))
    cfg = thread()
    lib.invoke(graph, {"trail": ["one"]}, cfg)
    lib.stream(graph, {"trail": ["two"]}, cfg, stream_mode="updates", subgraphs=True)
    lib.get_state(graph, child_config(lib, graph, cfg))
    lib.history(graph, child_config(lib, graph, cfg))
    lib.invoke(graph, {"trail": ["other thread"]}, thread("t2"))


@scenario
def per_thread_subgraph_called_in_a_node(lib: Run):
    graph = parent(lib, child(lib, True), calls=True)
    cfg = thread()
    lib.invoke(graph, {"trail": ["one"]}, cfg)
    lib.invoke(graph, {"trail": ["two"]}, cfg, durability="exit")
    lib.history(graph, child_config(lib, graph, cfg))


@scenario
def per_thread_subgraph_interrupt_resume(lib: Run):
    graph = parent(lib, child(lib, True, ask=True))
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, stream_mode="updates", subgraphs=True)
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, lib.Command(resume="yes"), cfg)
    lib.invoke(graph, {"trail": ["again"]}, cfg)
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, lib.Command(resume="twice"), cfg)


@scenario
def per_thread_subgraph_update_state_on_its_config(lib: Run):
    graph = parent(lib, child(lib, True, ask=True))
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    sub_cfg = lib.get_state(graph, cfg, subgraphs=True).tasks[0].state.config
    lib.update_state(graph, sub_cfg, {"trail": ["edited inside"]})
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, lib.Command(resume="after edit"), cfg)
    lib.update_state(graph, child_config(lib, graph, cfg), {"trail": ["edited later"]},
                     as_node="inner2")
    lib.history(graph, child_config(lib, graph, cfg))


@scenario
def per_thread_subgraph_time_travel(lib: Run):
    graph = parent(lib, child(lib, True))
    cfg = thread()
    lib.invoke(graph, {"trail": ["one"]}, cfg)
    lib.invoke(graph, {"trail": ["two"]}, cfg)
    # replay the second run's step before the child: the child starts from its first run's end
    before_child = checkpoint_at_step(lib, graph, cfg, 4)
    lib.invoke(graph, None, before_child)
    # fork the same step with an edit
    forked = lib.update_state(graph, before_child, {"trail": ["forked"]}, as_node="before")
    lib.invoke(graph, None, forked)


@scenario
def subgraph_without_checkpoints(lib: Run):
    # "async": LangGraph 1.2.24 fails such a subgraph under "sync" (README, Differences)
    graph = parent(lib, child(lib, False))
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg, durability="async")
    lib.get_state(graph, cfg, subgraphs=True)
    graph = parent(lib, child(lib, False, ask=True))
    cfg = thread("t2")
    lib.invoke(graph, {"trail": []}, cfg, durability="async")
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume="yes"), cfg, durability="async")


@scenario
def per_thread_graph_cannot_be_the_root(lib: Run):
    sub = child(lib, True)
    lib.attempt("invoke", lambda: sub.invoke({"trail": []}, thread()))
    lib.attempt("get_state", lambda: sub.get_state(thread()))


@scenario
def graph_on_its_own_thread_inside_a_node(lib: Run):
    own = lib.InMemorySaver()
    other = child(lib, own)

    def call(state):
        done = other.invoke({"trail": ["x"]}, {"configurable": {"thread_id": "other"}})
        return {"trail": done["trail"]}

    g = lib.StateGraph(Trail)
    g.add_node("call", call)
    g.add_edge(lib.START, "call")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": ["a"]}, cfg)
    lib.invoke(graph, {"trail": ["b"]}, cfg)
    lib.note("other thread", [(t.config, t.metadata, t.checkpoint["channel_values"])
                              for t in own.list({"configurable": {"thread_id": "other"}})])


def branching(lib: Run):
    """START -> a -> (b | c) by a conditional edge on the last trail entry; b, c -> END."""
    g = lib.StateGraph(Trail)
    for name in "abc":
        g.add_node(name, visit(name, lib))
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", lambda s: "c" if s["trail"][-1] == "to c" else "b", ["b", "c"])
    return g.compile(checkpointer=lib.saver())


@scenario
def copy_forks_a_sibling(lib: Run):
    graph = branching(lib)
    cfg = thread()
    lib.invoke(graph, {"trail": ["in"]}, cfg)
    after_a = checkpoint_at_step(lib, graph, cfg, 1)
    copied = lib.update_state(graph, after_a, None, as_node="__copy__")
    lib.get_state(graph, copied)
    lib.invoke(graph, None, copied)
    # a copy edited in the same call: a list of (values, as_node)
    edited = lib.update_state(graph, after_a, [({"trail": ["to c"]}, "a")], as_node="__copy__")
    lib.invoke(graph, None, edited)
    lib.attempt("copy of nothing", lambda: graph.update_state(thread("none"), None, "__copy__"))


@scenario
def bulk_update_state_supersteps(lib: Run):
    graph = branching(lib)
    cfg = thread()
    up = lib.StateUpdate
    lib.bulk_update_state(graph, cfg, [[up({"trail": ["in"]}, "__input__")],
                                       [up({"trail": ["x"]}, "a")],
                                       [up({"trail": ["y"]}, "b"), up({"trail": ["z"]}, "c")]])
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)
    lib.bulk_update_state(graph, cfg, [[up({"trail": ["in2"]}, "__input__")],
                                       [up({"trail": ["to c"]}, "a")]])
    lib.invoke(graph, None, cfg)
    lib.bulk_update_state(graph, cfg, [[up(None, "__end__")]])
    for bad in ([], [[]], [[up({"trail": []}, "a"), up({"trail": []})]],
                [[up({"trail": []}, "__input__"), up({"trail": []}, "a")]]):
        lib.attempt(f"refused {bad}", lambda: graph.bulk_update_state(cfg, bad))


@scenario
def update_state_as_input_keeps_its_writes(lib: Run):
    graph = branching(lib)
    cfg = thread()
    lib.invoke(graph, {"trail": ["in"]}, cfg)
    lib.update_state(graph, cfg, {"trail": ["new input"]}, as_node="__input__")
    lib.invoke(graph, None, cfg)
    old = checkpoint_at_step(lib, graph, cfg, 0)
    lib.update_state(graph, old, {"trail": ["old input"]}, as_node="__input__")


@scenario
def copy_of_a_per_thread_subgraph_parent(lib: Run):
    graph = parent(lib, child(lib, True))
    cfg = thread()
    lib.invoke(graph, {"trail": ["one"]}, cfg)
    lib.invoke(graph, {"trail": ["two"]}, cfg)
    before_child = checkpoint_at_step(lib, graph, cfg, 5)
    copied = lib.update_state(graph, before_child, None, as_node="__copy__")
    lib.invoke(graph, None, copied)
    lib.bulk_update_state(graph, child_config(lib, graph, cfg),
                          [[lib.StateUpdate({"trail": ["bulk inside"]}, "inner")]])
    lib.history(graph, child_config(lib, graph, cfg))


@scenario
def async_per_thread_subgraph_copy_and_bulk(lib: Run):
    graph = parent(lib, child(lib, True, ask=True))
    cfg = thread()
    lib.ainvoke(graph, {"trail": ["one"]}, cfg)
    lib.get_state(graph, cfg, subgraphs=True)
    lib.ainvoke(graph, lib.Command(resume="yes"), cfg)
    lib.ainvoke(graph, {"trail": ["two"]}, cfg)
    lib.ainvoke(graph, lib.Command(resume="again"), cfg)
    before_child = checkpoint_at_step(lib, graph, cfg, 5)
    copied = lib.update_state(graph, before_child, [({"trail": ["edited"]}, "before")],
                              as_node="__copy__")
    lib.ainvoke(graph, None, copied)
    lib.bulk_update_state(graph, cfg, [[lib.StateUpdate({"trail": ["bulk"]}, "after")]])
    lib.history(graph, child_config(lib, graph, cfg))


@scenario
def time_travel_into_a_subgraph_checkpoint(lib: Run):
    def asker(name):
        def ask(state):
            lib.count(name)
            return {"trail": [f"{name}:{lib.interrupt(name + '?')}"]}
        return ask

    for per_thread in (True, None):
        g = lib.StateGraph(Trail)
        g.add_node("step_a", visit("step_a", lib))
        g.add_node("ask_1", asker("ask_1"))
        g.add_node("ask_2", asker("ask_2"))
        g.add_edge(lib.START, "step_a")
        g.add_edge("step_a", "ask_1")
        g.add_edge("ask_1", "ask_2")
        p = lib.StateGraph(Trail)
        p.add_node("executor", g.compile(checkpointer=per_thread))
        p.add_edge(lib.START, "executor")
        graph = p.compile(checkpointer=lib.saver())
        cfg = thread(f"t-{per_thread}")
        lib.invoke(graph, {"trail": []}, cfg)
        at_first = lib.get_state(graph, cfg, subgraphs=True).tasks[0].state.config
        lib.invoke(graph, lib.Command(resume="one"), cfg)
        lib.invoke(graph, lib.Command(resume="two"), cfg)
        lib.invoke(graph, None, at_first)  # ask_1 asks again, step_a does not rerun
        lib.invoke(graph, lib.Command(resume="uno"), cfg)
        lib.get_state(graph, cfg, subgraphs=True)


def two_calls_with_the_nodes_config(lib: Run, checkpointer):
    """A node that calls a subgraph twice, passing its own config: each call gets its own
    namespace ("child" then "child|1"), as when the config is left out."""
    sub = child(lib, checkpointer)

    def caller(state, config):
        first = sub.invoke({"trail": ["first"]}, config)["trail"]
        return {"trail": first + sub.invoke({"trail": ["second"]}, config)["trail"]}

    g = lib.StateGraph(Trail)
    g.add_node("child", caller)
    g.add_edge(lib.START, "child")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.invoke(graph, {"trail": []}, cfg)
    for ns in ("child", "child|1"):
        lib.get_state(graph, {"configurable": {**cfg["configurable"], "checkpoint_ns": ns}})


@scenario
def per_thread_subgraph_called_twice_with_the_nodes_config(lib: Run):
    two_calls_with_the_nodes_config(lib, True)


@scenario
def subgraph_called_twice_with_the_nodes_config(lib: Run):
    two_calls_with_the_nodes_config(lib, None)


def jumping_child(lib: Run):
    """One node: a trail holding "jump" makes it go to the parent's `after`, else it stays."""

    def hop(state: dict):
        if "jump" in state["trail"]:
            return lib.Command(graph=lib.Command.PARENT, goto="after", update={"trail": ["hop"]})
        return {"trail": ["stay"]}

    g = lib.StateGraph(Trail)
    g.add_node("hop", hop)
    g.add_edge(lib.START, "hop")
    return g.compile()


@scenario
def the_second_graph_a_node_calls_sends_a_command_to_the_parent(lib: Run):
    """The second call runs under "caller:<id>|1"; its Command.PARENT still reaches the caller's
    graph (the numeric part is no level of its own)."""
    first, second = jumping_child(lib), jumping_child(lib)

    def caller(state: dict):
        first.invoke({"trail": ["call"]})
        second.invoke({"trail": ["jump"]})
        raise AssertionError("the second call jumps to `after`: this line never runs")

    g = lib.StateGraph(Trail)
    g.add_node("caller", caller)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "caller")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.history(graph, cfg)


@scenario
def a_graph_a_node_calls_sends_a_command_to_the_parent(lib: Run):
    """Command(graph=PARENT) from a graph invoked inside a node (not added as a node) makes the
    caller's graph go where it says, with its update; the rest of the calling node never runs,
    and the caller's own edge still fires (as for a Command the node returns)."""
    jumper = jumping_child(lib)

    def caller(state: dict):
        jumper.invoke({"trail": ["jump"]})
        raise AssertionError("the call jumps to `after`: this line never runs")

    g = lib.StateGraph(Trail)
    g.add_node("caller", caller)
    g.add_node("after", visit("after", lib))
    g.add_node("next", visit("next", lib))
    g.add_edge(lib.START, "caller")
    g.add_edge("caller", "next")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, stream_mode="updates", subgraphs=True)
    lib.history(graph, cfg)


def hidden_caller(lib: Run, make_sub, saver=True):
    """START -> before -> tools -> after; `tools` runs a graph a closure scan cannot see (held
    in a dict, built by a factory): only the saver knows it ran as a subgraph."""
    graphs = {"tools": make_sub}

    def tools(state: dict):
        sub = graphs["tools"]()
        return {"trail": sub.invoke({"trail": ["call"]})["trail"]}

    g = lib.StateGraph(Trail)
    g.add_node("before", visit("before", lib))
    g.add_node("tools", tools)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "before")
    g.add_edge("before", "tools")
    g.add_edge("tools", "after")
    return g.compile(checkpointer=lib.saver() if saver else None)


def first_namespace(chunks) -> str:
    """The namespace of the first subgraph chunk of a stream(subgraphs=True)."""
    return next(ns for ns, _ in chunks if ns)[0]


@scenario
def undeclared_subgraph_state_is_read_from_the_saver(lib: Run):
    """get_state / get_state_history on an undeclared subgraph's namespace read its checkpoints
    (through the caller's channels); update_state there is refused."""
    graph = hidden_caller(lib, lambda: child(lib, None, ask=True))
    cfg = thread()
    chunks = lib.stream(graph, {"trail": []}, cfg, stream_mode="updates", subgraphs=True)
    sub_cfg = thread(checkpoint_ns=first_namespace(chunks))
    lib.get_state(graph, sub_cfg)
    lib.get_state(graph, sub_cfg, subgraphs=True)
    lib.history(graph, sub_cfg)
    lib.history(graph, sub_cfg, limit=1)
    lib.update_state(graph, sub_cfg, {"trail": ["edited"]})
    lib.invoke(graph, lib.Command(resume="yes"), cfg)
    lib.history(graph, sub_cfg)


@scenario
def undeclared_subgraph_with_its_own_keys(lib: Run):
    """A subgraph with keys the caller lacks: read through the caller's channels, they drop."""

    class Inner(Trail):
        note: str

    def make():
        g = lib.StateGraph(Inner)
        g.add_node("noting", lambda state: {"note": "kept?", "trail": ["noting"]})
        g.add_node("asking", lambda state: {"trail": [lib.interrupt("go on?")]})
        g.add_edge(lib.START, "noting")
        g.add_edge("noting", "asking")
        return g.compile()

    graph = hidden_caller(lib, make)
    cfg = thread()
    chunks = lib.stream(graph, {"trail": []}, cfg, stream_mode="updates", subgraphs=True)
    sub_cfg = thread(checkpoint_ns=first_namespace(chunks))
    lib.get_state(graph, sub_cfg)
    lib.history(graph, sub_cfg)


def restartable_child(lib: Run, saver):
    """START -> work (counted) -> ask (interrupts), compiled with its own saver."""
    g = lib.StateGraph(Trail)
    g.add_node("work", visit("work", lib))
    g.add_node("ask", lambda state: {"trail": [f"ask got {lib.interrupt('ok?')}"]})
    g.add_edge(lib.START, "work")
    g.add_edge("work", "ask")
    return g.compile(checkpointer=saver)


@scenario
def subgraph_with_its_own_saver_saves_in_the_parents(lib: Run):
    """The docs' "subgraph called as a function", the subgraph on its own InMemorySaver: its
    checkpoints go to the parent's saver, so after a restart (a new process: the subgraph's
    InMemorySaver is empty) resuming does not run its finished node again."""
    cfg = thread()
    own = lib.InMemorySaver()
    graph = parent(lib, restartable_child(lib, own), calls=True)
    lib.invoke(graph, {"trail": []}, cfg)
    lib.note("in the subgraph's own saver", len(list(own.list(None))))
    restarted = parent(lib, restartable_child(lib, lib.InMemorySaver()), calls=True)
    lib.invoke(restarted, lib.Command(resume="yes"), cfg)
    lib.note("in the subgraph's own saver after the run", len(list(own.list(None))))


@scenario
def subgraph_with_its_own_saver_declared_as_a_node(lib: Run):
    """The same subgraph added as a node: the parent's saver wins there too."""
    cfg = thread()
    own = lib.InMemorySaver()
    graph = parent(lib, restartable_child(lib, own))
    lib.invoke(graph, {"trail": []}, cfg)
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, lib.Command(resume="yes"), cfg)
    lib.note("in the subgraph's own saver", len(list(own.list(None))))


@scenario
def subgraph_with_its_own_saver_in_a_parent_without_one(lib: Run):
    """A parent without a saver lends none: the subgraph's own saver keeps nothing."""
    own = lib.InMemorySaver()
    sub = child(lib, own)

    g = lib.StateGraph(Trail)
    g.add_node("call", lambda state: {"trail": sub.invoke({"trail": ["call"]})["trail"]})
    g.add_edge(lib.START, "call")
    lib.invoke(g.compile(), {"trail": []}, thread())
    lib.note("in the subgraph's own saver", len(list(own.list(None))))


def extend(state: list, writes: list) -> list:
    """A DeltaChannel reducer: every write is a list of items, appended in order."""
    return [*state, *(item for write in writes for item in write)]


def delta_trail(lib: Run):
    # the call form: this module's annotations are strings, which could not see `lib`
    return TypedDict("DeltaTrail", {  # type: ignore[operator]
        "trail": Annotated[list, lib.DeltaChannel(extend, snapshot_frequency=2)]}, total=False)


def read_across_channel_types(lib: Run, parent_schema, sub_schema):
    """An undeclared subgraph whose `trail` channel is of another kind than its caller's (as
    deepagents: a DeltaChannel parent, plain subagents), read through the caller's channels."""
    sub = lib.StateGraph(sub_schema)
    sub.add_node("work", lambda state: {"trail": ["work"]})
    sub.add_node("more", lambda state: {"trail": ["more"]})
    sub.add_edge(lib.START, "work")
    sub.add_edge("work", "more")
    graphs = {"researcher": sub.compile()}

    def tools(state: dict) -> dict:
        graphs["researcher"].invoke({"trail": ["research"]})
        return {"trail": ["tool done"]}

    g = lib.StateGraph(parent_schema)
    g.add_node("tools", tools)
    g.add_edge(lib.START, "tools")
    graph = g.compile(checkpointer=lib.saver())
    chunks = lib.stream(graph, {"trail": ["go"]}, thread(), subgraphs=True)
    sub_cfg = thread(checkpoint_ns=first_namespace(chunks))
    lib.get_state(graph, sub_cfg)
    lib.history(graph, sub_cfg)
    lib.update_state(graph, sub_cfg, {"trail": ["edit"]})


@scenario
def undeclared_subgraph_read_by_a_delta_channel_parent(lib: Run):
    read_across_channel_types(lib, delta_trail(lib), Trail)


@scenario
def undeclared_delta_channel_subgraph_read_by_a_plain_parent(lib: Run):
    read_across_channel_types(lib, Trail, delta_trail(lib))


@scenario
def undeclared_namespace_under_a_declared_subgraph(lib: Run):
    """"child|inner" names a plain node inside a declared subgraph: a read uses the root
    graph's channels, an update is refused (the root's own node of that name is not it)."""
    graph = parent(lib, child(lib, None, ask=True))
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    nested = thread(checkpoint_ns="child:a|inner:b")
    lib.get_state(graph, nested)
    lib.update_state(graph, nested, {"trail": ["edit"]})
