"""Scenarios of interrupts and resuming, Command and Send, time travel, failures and retries,
subgraphs. Same contract as ``scenarios_loop.py``: ``scenario(lib)`` drives recording verbs.
"""

from __future__ import annotations

import operator
import time
import warnings
from typing import Annotated

from pydantic import BaseModel
from typing_extensions import TypedDict

from tests.differential.harness import Run, registry
from tests.differential.scenarios_loop import Trail, thread, visit

INTERRUPTS, scenario = registry()


@scenario
def interrupt_then_resume(lib: Run):
    def ask(state):
        lib.count("ask")
        answer = lib.interrupt({"question": "name?"})
        return {"trail": [f"answer={answer}"]}

    g = lib.StateGraph(Trail)
    g.add_node("ask", ask)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "ask")
    g.add_edge("ask", "after")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume="ada"), cfg)


@scenario
def two_interrupts_in_one_node(lib: Run):
    def form(state):
        lib.count("form")
        first = lib.interrupt("first name?")
        last = lib.interrupt("last name?")  # answers are matched to interrupts by position
        return {"trail": [f"{first} {last}"]}

    g = lib.StateGraph(Trail)
    g.add_node("form", form)
    g.add_edge(lib.START, "form")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.invoke(graph, lib.Command(resume="Ada"), cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume="Lovelace"), cfg)



class Decision(BaseModel):
    """The answer an approval interrupt expects (interrupt(response_schema=Decision))."""

    approved: bool


@scenario
def invalid_resume_then_valid(lib: Run):
    """An answer that does not fit the schema raises and saves no answer; the sibling task that
    was answered well finishes once; the refused interrupt is answered again (null resume)."""
    cfg = thread()

    def approver(name):
        def node(state):
            lib.count(name)
            if name == "check" and lib.calls["check"] == 1:  # ask after send: an ordered stream
                wait_for_write(lib, cfg, lambda ch, v: ch == "__interrupt__")
            answer = lib.interrupt(f"{name}?", response_schema=Decision)
            return {"trail": [f"{name}={answer.approved}"]}

        return node

    g = lib.StateGraph(Trail)
    for name in ["send", "check"]:
        g.add_node(name, approver(name))
        g.add_edge(lib.START, name)
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, cfg)
    ids = {i.value: i.id for i in lib.get_state(graph, cfg).interrupts}
    lib.invoke(graph, lib.Command(resume={ids["send?"]: {"approved": True},
                                          ids["check?"]: {"approved": "maybe"}}), cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume={"approved": "nope"}), cfg)  # null resume, refused too
    lib.invoke(graph, lib.Command(resume={"approved": False}), cfg)



@scenario
def node_interrupt_until_state_changes(lib: Run):
    """The deprecated NodeInterrupt: the node stops with a value until update_state lets it by."""
    def gate(state):
        lib.count("gate")
        if "approved" not in state["trail"]:
            with warnings.catch_warnings():  # deprecated in both libraries; compared elsewhere
                warnings.simplefilter("ignore", DeprecationWarning)
                raise lib.NodeInterrupt({"why": "needs approval"})
        return {"trail": ["passed"]}

    g = lib.StateGraph(Trail)
    g.add_node("gate", gate)
    g.add_edge(lib.START, "gate")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)  # asks again
    lib.update_state(graph, cfg, {"trail": ["approved"]})
    lib.invoke(graph, None, cfg)



@scenario
def a_failing_async_node_cancels_its_sibling(lib: Run):
    """In an async run a real failure cancels the step's other tasks (saved as cancelled);
    resuming runs both again."""
    import asyncio

    async def slow(state):
        lib.count("slow")
        if lib.calls["slow"] == 1:
            await asyncio.sleep(5)  # cancelled long before
        return {"trail": ["slow"]}

    async def bad(state):
        lib.count("bad")
        if lib.calls["bad"] == 1:
            raise ValueError("boom")
        return {"trail": ["bad"]}

    g = lib.StateGraph(Trail)
    g.add_node("slow", slow)
    g.add_node("bad", bad)
    g.add_edge(lib.START, "slow")
    g.add_edge(lib.START, "bad")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.ainvoke(graph, {"trail": []}, cfg)
    lib.get_state(graph, cfg)
    lib.ainvoke(graph, None, cfg)



class Typed(BaseModel):
    """A pydantic state: invoke(version="v2") returns an instance of it as the value."""

    trail: Annotated[list[str], operator.add] = []


@scenario
def invoke_version_v2(lib: Run):
    """invoke(version="v2"): a GraphOutput, the values and the interrupts apart; the values
    of a pydantic state as an instance; a resume with v2 too."""
    def ask(state):
        return {"trail": [f"answer={lib.interrupt('name?')}"]}

    g = lib.StateGraph(Trail)
    g.add_node("ask", ask)
    g.add_edge(lib.START, "ask")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg, version="v2")
    lib.invoke(graph, lib.Command(resume="ada"), cfg, version="v2")
    typed = lib.StateGraph(Typed)
    typed.add_node("a", visit("a", lib))
    typed.add_edge(lib.START, "a")
    out = lib.invoke(typed.compile(), {"trail": ["x"]}, version="v2")
    lib.note("value type", type(out.value).__name__)


def wait_for_write(lib: Run, cfg: dict, matches, seconds: float = 3.0) -> None:
    """Block until the thread's latest checkpoint has a pending write that ``matches(ch, v)``.

    A synchronisation, not a delay: it orders two parallel tasks where LangGraph's own order is
    a race between threads (which finishes first, whether a failing sibling cancels the other).
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        saved = lib.saver().get_tuple(cfg)
        if saved and any(matches(ch, v) for _, ch, v in saved.pending_writes or []):
            return
        time.sleep(0.001)


@scenario
def parallel_interrupts_resumed_by_id(lib: Run):
    cfg = thread()

    def asker(name):
        def node(state):
            lib.count(name)
            if name == "y" and lib.calls["y"] == 1:  # interrupt after x, so the stream is ordered
                wait_for_write(lib, cfg, lambda ch, v: ch == "__interrupt__")
            return {"trail": [f"{name}={lib.interrupt(f'{name}?')}"]}

        return node

    g = lib.StateGraph(Trail)
    for name in ["x", "y"]:
        g.add_node(name, asker(name))
        g.add_edge(lib.START, name)
    graph = g.compile(checkpointer=lib.saver())
    lib.stream(graph, {"trail": []}, cfg, stream_mode="updates")
    pending = lib.get_state(graph, cfg).interrupts
    lib.invoke(graph, lib.Command(resume={i.id: f"answer to {i.value}" for i in pending}), cfg)


def three_step_graph(lib: Run, **compile_kw):
    g = lib.StateGraph(Trail)
    for name in "abc":
        g.add_node(name, visit(name, lib))
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    return g.compile(checkpointer=lib.saver(), **compile_kw)


@scenario
def interrupt_before_after_at_compile(lib: Run):
    graph = three_step_graph(lib, interrupt_before=["b"], interrupt_after=["b"])
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)  # stops before b
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)  # runs b, stops after it
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)  # runs c to the end


@scenario
def interrupt_before_after_per_call(lib: Run):
    graph = three_step_graph(lib)
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, interrupt_after=["a"], stream_mode="updates")
    lib.invoke(graph, None, cfg, interrupt_before=["c"])
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)


@scenario
def command_goto_and_update(lib: Run):
    def decide(state):
        return lib.Command(goto="special", update={"trail": ["decided"], "n": 7})

    g = lib.StateGraph(Trail)
    g.add_node("decide", decide)
    g.add_node("special", visit("special", lib))
    g.add_node("normal", visit("normal", lib))
    g.add_edge(lib.START, "decide")
    graph = g.compile(checkpointer=lib.saver())
    lib.stream(graph, {"trail": []}, thread(), stream_mode=["updates", "values"])


@scenario
def send_map_reduce(lib: Run):
    def square(arg):
        lib.count("square")
        return {"trail": [f"{arg['x']}^2={arg['x'] ** 2}"]}

    def fan_out(state):
        return [lib.Send("square", {"x": x}) for x in (3, 1, 2)]

    g = lib.StateGraph(Trail)
    g.add_node("plan", visit("plan", lib))
    g.add_node("square", square)
    g.add_node("total", visit("total", lib))
    g.add_edge(lib.START, "plan")
    g.add_conditional_edges("plan", fan_out, ["square"])
    g.add_edge("square", "total")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread())


def checkpoint_at_step(lib: Run, graph, cfg, step: int) -> dict:
    """The config of the (first-found) checkpoint with the given metadata step."""
    snaps = lib.history(graph, cfg)
    return next(s.config for s in snaps if s.metadata["step"] == step)


@scenario
def time_travel_replay(lib: Run):
    graph = three_step_graph(lib)
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    old = checkpoint_at_step(lib, graph, cfg, 1)  # after a, before b
    lib.stream(graph, None, old, stream_mode="updates")  # replays b and c from there (a new branch)
    lib.get_state(graph, old)


@scenario
def fork_old_checkpoint_then_continue(lib: Run):
    graph = three_step_graph(lib)
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    old = checkpoint_at_step(lib, graph, cfg, 1)
    forked = lib.update_state(graph, old, {"trail": ["edited"]})  # a sibling of step 2
    lib.get_state(graph, forked)
    lib.invoke(graph, None, forked)


@scenario
def parallel_failure_then_resume(lib: Run):
    cfg = thread()

    def flaky(state):
        lib.count("flaky")
        if lib.calls["flaky"] == 1:
            # fail only once the sibling's work is saved
            wait_for_write(lib, cfg, lambda ch, v: (ch, v) == ("trail", ["steady"]))
            raise ValueError("flaky failed once")
        return {"trail": ["flaky"]}

    g = lib.StateGraph(Trail)
    g.add_node("steady", visit("steady", lib))
    g.add_node("flaky", flaky)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "steady")
    g.add_edge(lib.START, "flaky")
    g.add_edge(["steady", "flaky"], "after")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, cfg)  # raises; steady's writes are saved as pending
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)  # only flaky runs again


@scenario
def retry_policy(lib: Run):
    def shaky(state):
        lib.count("shaky")
        if lib.calls["shaky"] < 3:
            raise ConnectionError(f"attempt {lib.calls['shaky']}")
        return {"trail": ["shaky ok"]}

    policy = lib.RetryPolicy(
        max_attempts=3, initial_interval=0.001, backoff_factor=1.0, jitter=False
    )
    g = lib.StateGraph(Trail)
    g.add_node("shaky", shaky, retry_policy=policy)
    g.add_edge(lib.START, "shaky")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread())


def child_graph(lib: Run, ask: bool = False, checkpointer=None):
    """A two-node subgraph sharing the parent's ``trail``; optionally it interrupts."""

    def inner(state):
        lib.count("inner")
        if ask:
            return {"trail": [f"inner got {lib.interrupt('ok?')}"]}
        return {"trail": ["inner"]}

    g = lib.StateGraph(Trail)
    g.add_node("inner", inner)
    g.add_node("inner2", visit("inner2", lib))
    g.add_edge(lib.START, "inner")
    g.add_edge("inner", "inner2")
    return g.compile(checkpointer=checkpointer)


def parent_graph(lib: Run, child):
    g = lib.StateGraph(Trail)
    g.add_node("before", visit("before", lib))
    g.add_node("child", child)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "before")
    g.add_edge("before", "child")
    g.add_edge("child", "after")
    return g.compile(checkpointer=lib.saver())


@scenario
def subgraph_streams_and_namespaces(lib: Run):
    graph = parent_graph(lib, child_graph(lib))
    lib.stream(graph, {"trail": []}, thread("t1"), stream_mode="updates", subgraphs=True)
    lib.stream(graph, {"trail": []}, thread("t2"), stream_mode=["values", "debug"], subgraphs=True)


@scenario
def subgraph_interrupt_then_resume(lib: Run):
    graph = parent_graph(lib, child_graph(lib, ask=True))
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, stream_mode="updates", subgraphs=True)
    lib.get_state(graph, cfg, subgraphs=True)
    lib.stream(graph, lib.Command(resume="yes"), cfg, stream_mode="values", subgraphs=True)


@scenario
def command_to_parent(lib: Run):
    def escape(state):
        return lib.Command(graph=lib.Command.PARENT, goto="rescue", update={"trail": ["escaped"]})

    sub = lib.StateGraph(Trail)
    sub.add_node("escape", escape)
    sub.add_edge(lib.START, "escape")
    g = lib.StateGraph(Trail)
    g.add_node("child", sub.compile())
    g.add_node("rescue", visit("rescue", lib))
    g.add_node("normal", visit("normal", lib))
    g.add_edge(lib.START, "child")
    graph = g.compile(checkpointer=lib.saver())
    lib.stream(graph, {"trail": []}, thread(), stream_mode="updates", subgraphs=True)


def ask_graph(lib: Run, **compile_kw):
    """START -> ask (interrupts once) -> after."""

    def ask(state):
        lib.count("ask")
        return {"trail": [f"answer={lib.interrupt({'question': 'name?'})}"]}

    g = lib.StateGraph(Trail)
    g.add_node("ask", ask)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "ask")
    g.add_edge("ask", "after")
    return g.compile(checkpointer=lib.saver(), **compile_kw)


@scenario
def interrupt_streamed_in_all_modes(lib: Run):
    graph, cfg = ask_graph(lib), thread()
    modes = ["values", "updates", "checkpoints", "tasks", "debug"]
    lib.stream(graph, {"trail": []}, cfg, stream_mode=modes)
    lib.stream(graph, lib.Command(resume="ada"), cfg, stream_mode=modes)


@scenario
def async_interrupt_then_resume(lib: Run):
    graph, cfg = ask_graph(lib), thread()
    lib.ainvoke(graph, {"trail": []}, cfg)
    lib.astream(graph, lib.Command(resume="ada"), cfg, stream_mode="updates")


@scenario
def history_filters(lib: Run):
    graph = three_step_graph(lib)
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    snaps = lib.history(graph, cfg, limit=2)
    lib.history(graph, cfg, filter={"source": "loop", "step": 1})
    lib.history(graph, cfg, before=snaps[-1].config)


@scenario
def edit_state_while_interrupted(lib: Run):
    graph = three_step_graph(lib, interrupt_before=["b"])
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.update_state(graph, cfg, {"trail": ["human edit"]})  # as the last node to run ("a")
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)


@scenario
def interrupt_beside_finished_sibling(lib: Run):
    def asker(state):
        lib.count("asker")
        return {"trail": [f"asker={lib.interrupt('go on?')}"]}

    g = lib.StateGraph(Trail)
    g.add_node("asker", asker)
    g.add_node("worker", visit("worker", lib))  # finishes in the same step; must not run again
    g.add_node("join", visit("join", lib))
    g.add_edge(lib.START, "asker")
    g.add_edge(lib.START, "worker")
    g.add_edge(["asker", "worker"], "join")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume="yes"), cfg)


@scenario
def exit_durability_with_interrupt(lib: Run):
    graph, cfg = ask_graph(lib), thread()
    lib.invoke(graph, {"trail": []}, cfg, durability="exit")  # saves once, at the interrupt
    lib.invoke(graph, lib.Command(resume="ada"), cfg, durability="exit")


@scenario
def retry_exhausted(lib: Run):
    def broken(state):
        lib.count("broken")
        raise ConnectionError("still down")

    g = lib.StateGraph(Trail)
    policy = lib.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False)
    g.add_node("broken", broken, retry_policy=policy)
    g.add_edge(lib.START, "broken")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread())


@scenario
def command_as_input_goto(lib: Run):
    """Command(goto=...) given to invoke: a node, a list, END (LangGraph saves that write)."""
    g = lib.StateGraph(Trail)
    for name in ("a", "b", "c"):
        g.add_node(name, visit(name, lib))
    g.add_edge(lib.START, "a")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.invoke(graph, lib.Command(goto="b", update={"n": 1}), cfg)
    lib.invoke(graph, lib.Command(goto=["a", "c"]), cfg)
    lib.invoke(graph, lib.Command(goto=lib.END, update={"n": 2}), cfg)
    lib.get_state(graph, cfg)


@scenario
def command_goto_sends(lib: Run):
    def plan(state):
        return lib.Command(goto=[lib.Send("work", {"x": x}) for x in (2, 5)], update={"n": 2})

    def work(arg):
        return {"trail": [f"work {arg['x']}"]}

    g = lib.StateGraph(Trail)
    g.add_node("plan", plan)
    g.add_node("work", work)
    g.add_edge(lib.START, "plan")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread())


@scenario
def subgraph_invoked_in_node(lib: Run):
    child = child_graph(lib, ask=True)

    def call_child(state):
        return {"trail": child.invoke({"trail": ["from parent"]})["trail"]}

    g = lib.StateGraph(Trail)
    g.add_node("call_child", call_child)
    g.add_edge(lib.START, "call_child")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, stream_mode="updates", subgraphs=True)
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, lib.Command(resume="fine"), cfg)


@scenario
def async_fork_and_replay(lib: Run):
    graph, cfg = three_step_graph(lib), thread()
    lib.ainvoke(graph, {"trail": []}, cfg)
    old = checkpoint_at_step(lib, graph, cfg, 1)
    forked = lib.update_state(graph, old, {"trail": ["edited"]})
    lib.ainvoke(graph, None, forked)
    lib.astream(graph, None, old, stream_mode="updates")  # replay from the original step 1


@scenario
def interrupt_before_everything(lib: Run):
    graph = three_step_graph(lib, interrupt_before="*")
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    for _ in range(3):
        lib.invoke(graph, None, cfg)


@scenario
def command_resume_with_update(lib: Run):
    graph, cfg = ask_graph(lib), thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.invoke(graph, lib.Command(resume="ada", update={"n": 9}), cfg)


@scenario
def replay_an_interrupted_step(lib: Run):
    graph, cfg = ask_graph(lib), thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.invoke(graph, lib.Command(resume="first"), cfg)
    before_ask = checkpoint_at_step(lib, graph, cfg, 0)
    lib.invoke(graph, None, before_ask)  # ask runs again from there: a new interrupt
    lib.invoke(graph, lib.Command(resume="second"), cfg)  # answered on the new branch


class ChildState(TypedDict, total=False):
    trail: Annotated[list[str], operator.add]
    private: str  # only the child has it


@scenario
def subgraph_with_own_schema(lib: Run):
    def think(state):
        return {"private": "secret", "trail": ["think"]}

    def speak(state):
        return {"trail": [f"speak {state['private']}"]}

    sub = lib.StateGraph(ChildState)
    sub.add_node("think", think)
    sub.add_node("speak", speak)
    sub.add_edge(lib.START, "think")
    sub.add_edge("think", "speak")
    g = lib.StateGraph(Trail)
    g.add_node("child", sub.compile())
    g.add_edge(lib.START, "child")
    graph = g.compile(checkpointer=lib.saver())
    lib.stream(graph, {"trail": [], "n": 1}, thread(), stream_mode="values", subgraphs=True)


@scenario
def nested_subgraph_interrupt(lib: Run):
    grandchild = child_graph(lib, ask=True)
    mid = lib.StateGraph(Trail)
    mid.add_node("grandchild", grandchild)
    mid.add_node("mid_after", visit("mid_after", lib))
    mid.add_edge(lib.START, "grandchild")
    mid.add_edge("grandchild", "mid_after")
    graph = parent_graph(lib, mid.compile())
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, stream_mode="updates", subgraphs=True)
    top = lib.get_state(graph, cfg, subgraphs=True)
    lib.get_state(graph, top.tasks[0].state.config)  # read the child's own checkpoint
    lib.stream(graph, lib.Command(resume="deep"), cfg, stream_mode="updates", subgraphs=True)


@scenario
def send_to_subgraph(lib: Run):
    sub = lib.StateGraph(Trail)
    sub.add_node("work", lambda s: {"trail": [f"work on {s['n']}"]})
    sub.add_edge(lib.START, "work")
    g = lib.StateGraph(Trail)
    g.add_node("child", sub.compile())
    g.add_conditional_edges(
        lib.START, lambda s: [lib.Send("child", {"n": i, "trail": []}) for i in (1, 2)]
    )
    lib.invoke(g.compile(checkpointer=lib.saver()), {"trail": []}, thread())


@scenario
def failure_with_exit_durability(lib: Run):
    def flaky(state):
        lib.count("flaky")
        if lib.calls["flaky"] == 1:
            raise ValueError("first try fails")
        return {"trail": ["flaky"]}

    g = lib.StateGraph(Trail)
    g.add_node("a", visit("a", lib))
    g.add_node("flaky", flaky)
    g.add_edge(lib.START, "a")
    g.add_edge("a", "flaky")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg, durability="exit")  # what is saved when a run fails?
    lib.invoke(graph, None, cfg, durability="exit")


@scenario
def approve_or_reject(lib: Run):
    def review(state):
        verdict = lib.interrupt({"draft": state["trail"][-1]})
        return lib.Command(goto="publish" if verdict == "ok" else "rewrite")

    g = lib.StateGraph(Trail)
    g.add_node("draft", visit("draft", lib))
    g.add_node("review", review)
    g.add_node("publish", visit("publish", lib))
    g.add_node("rewrite", visit("rewrite", lib))
    g.add_edge(lib.START, "draft")
    g.add_edge("draft", "review")
    g.add_edge("rewrite", "review")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.invoke(graph, lib.Command(resume="no"), cfg)
    lib.invoke(graph, lib.Command(resume="ok"), cfg)


@scenario
def retry_on_filter(lib: Run):
    def picky(state):
        lib.count("picky")
        raise TypeError("not retryable")

    g = lib.StateGraph(Trail)
    policy = lib.RetryPolicy(max_attempts=3, initial_interval=0.001, retry_on=ConnectionError)
    g.add_node("picky", picky, retry_policy=policy)
    g.add_edge(lib.START, "picky")
    lib.invoke(g.compile(checkpointer=lib.saver()), {"trail": []}, thread())


@scenario
def update_subgraph_state_while_interrupted(lib: Run):
    graph = parent_graph(lib, child_graph(lib, ask=True))
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    child_config = lib.get_state(graph, cfg, subgraphs=True).tasks[0].state.config
    lib.update_state(graph, child_config, {"trail": ["edited inside"]})
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, lib.Command(resume="after edit"), cfg)


@scenario
def subgraph_compiled_with_interrupt_before(lib: Run):
    sub = lib.StateGraph(Trail)
    sub.add_node("inner", visit("inner", lib))
    sub.add_node("inner2", visit("inner2", lib))
    sub.add_edge(lib.START, "inner")
    sub.add_edge("inner", "inner2")
    graph = parent_graph(lib, sub.compile(interrupt_before=["inner2"]))
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, stream_mode=["updates", "checkpoints"], subgraphs=True)
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, None, cfg)


@scenario
def time_travel_before_subgraph(lib: Run):
    graph = parent_graph(lib, child_graph(lib))
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    before_child = checkpoint_at_step(lib, graph, cfg, 1)
    lib.stream(graph, None, before_child, stream_mode="updates", subgraphs=True)


@scenario
def send_tasks_interrupted_resumed_by_id(lib: Run):
    def approve(arg):
        lib.count("approve")
        return {"trail": [f"{arg['item']}: {lib.interrupt(arg['item'])}"]}

    g = lib.StateGraph(Trail)
    g.add_node("approve", approve)
    g.add_conditional_edges(
        lib.START, lambda s: [lib.Send("approve", {"item": i}) for i in ("pen", "ink")]
    )
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    # the tasks run in parallel threads, so compare the interrupts as a set
    lib.attempt(
        "interrupted",
        lambda: sorted(
            i.value for i in graph.invoke({}, cfg, **lib.options(graph))["__interrupt__"]
        ),
    )
    pending = lib.get_state(graph, cfg).interrupts
    lib.invoke(graph, lib.Command(resume={i.id: f"ok {i.value}" for i in pending}), cfg)


@scenario
def subgraph_streams_tasks_custom_checkpoints(lib: Run):
    def inner(state):
        lib.get_stream_writer()({"inner says": "hi"})
        return {"trail": ["inner"]}

    sub = lib.StateGraph(Trail)
    sub.add_node("inner", inner)
    sub.add_edge(lib.START, "inner")
    graph = parent_graph(lib, sub.compile())
    modes = ["tasks", "custom", "checkpoints"]
    lib.stream(graph, {"trail": []}, thread(), stream_mode=modes, subgraphs=True)
    lib.stream(graph, {"trail": []}, thread("t2"), stream_mode="custom")  # without subgraphs=True


@scenario
def resume_with_nothing_pending_answers_no_later_interrupt(lib: Run):
    """A Command(resume=...) sent when no interrupt waits must not answer the next run's one."""
    def ask(state):
        answer = lib.interrupt("name?")
        return {"trail": [f"answer={answer}"]}

    g = lib.StateGraph(Trail)
    g.add_node("ask", ask)
    g.add_edge(lib.START, "ask")
    graph = g.compile(checkpointer=lib.saver())
    graph.multitask_strategy = "off"  # lgcheckpoint's thread guard would refuse the stale answer
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.invoke(graph, lib.Command(resume="ada"), cfg)
    lib.invoke(graph, lib.Command(resume="stale"), cfg)  # nothing is pending now
    lib.invoke(graph, {"trail": []}, cfg)  # a new run: its interrupt must ask again
    lib.get_state(graph, cfg)


@scenario
def update_state_runs_an_async_conditional_edge(lib: Run):
    """aupdate_state(as_node=X) awaits X's async conditional edge to choose what runs next."""
    async def route(state):
        return "b" if state["trail"][-1] == "go b" else "c"

    g = lib.StateGraph(Trail)
    g.add_node("a", visit("a", lib))
    g.add_node("b", visit("b", lib))
    g.add_node("c", visit("c", lib))
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", route, ["b", "c"])
    graph = g.compile(checkpointer=lib.saver(), interrupt_before=["b", "c"])
    cfg = thread()
    lib.ainvoke(graph, {"trail": []}, cfg)
    lib.note("aupdate_state", lib.run_async(
        graph.aupdate_state(cfg, {"trail": ["go b"]}, as_node="a")) is not None)
    lib.get_state(graph, cfg)
    lib.ainvoke(graph, None, cfg)


# --- node error handlers (lgcheckpoint/pregel/handlers.py) ---------------------------------
def failing(name: str, lib: Run, fails: int = 10**6):
    """A node that raises its first `fails` times (counting its calls), then appends its name."""

    def node(state):
        lib.count(name)
        if lib.calls[name] <= fails:
            raise ValueError(f"{name} failed on call {lib.calls[name]}")
        return {"trail": [name]}

    node.__name__ = name
    return node


@scenario
def error_handler_routes_after_retries(lib: Run):
    NodeError = lib.NodeError

    def handler(state, error: NodeError):
        lib.count("handler")
        return lib.Command(update={"trail": [f"handled {error.node}: {error.error}"]},
                           goto="after")

    policy = lib.RetryPolicy(max_attempts=2, initial_interval=0.001, jitter=False)
    g = lib.StateGraph(Trail)
    g.add_node("a", visit("a", lib))
    g.add_node("bad", failing("bad", lib), retry_policy=policy, error_handler=handler)
    g.add_node("after", visit("after", lib))
    g.add_node("skipped", visit("skipped", lib))  # bad's own edge: not taken when it fails
    g.add_edge(lib.START, "a")
    g.add_edge("a", "bad")
    g.add_edge("bad", "skipped")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, stream_mode=["updates", "values", "tasks"])
    lib.history(graph, cfg)


@scenario
def error_handler_beside_a_sibling(lib: Run):
    NodeError = lib.NodeError

    def handler(state, error: NodeError):
        lib.count("handler")
        return {"trail": [f"handled {error.node}"]}

    g = lib.StateGraph(Trail)
    g.add_node("steady", visit("steady", lib))
    g.add_node("bad", failing("bad", lib), error_handler=handler)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "steady")
    g.add_edge(lib.START, "bad")
    g.add_edge("steady", "after")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.history(graph, cfg)


@scenario
def default_error_handler_crashes_then_resumes(lib: Run):
    NodeError = lib.NodeError

    def handler(state, error: NodeError):
        lib.count("handler")
        if lib.calls["handler"] == 1:
            raise RuntimeError("the handler crashed")
        return {"trail": [f"handled {error.node}: {error.error}"]}

    g = lib.StateGraph(Trail)
    g.set_node_defaults(error_handler=handler)
    g.add_node("bad", failing("bad", lib))
    g.add_edge(lib.START, "bad")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)  # raises the handler's error; bad's is saved, handled
    lib.get_state(graph, cfg)
    # the handler runs again (with the saved error), bad does not
    lib.stream(graph, None, cfg, stream_mode=["tasks", "updates", "values"])
    lib.history(graph, cfg)


@scenario
def error_handler_never_catches_an_interrupt(lib: Run):
    def asks(state):
        return {"trail": [f"got {lib.interrupt('ok?')}"]}

    g = lib.StateGraph(Trail)
    g.add_node("asks", asks, error_handler=lambda state: {"trail": ["handled"]})
    g.add_edge(lib.START, "asks")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.invoke(graph, lib.Command(resume="yes"), cfg)
    lib.history(graph, cfg)


@scenario
def async_error_handler_beside_a_sibling(lib: Run):
    NodeError = lib.NodeError

    async def bad(state):
        lib.count("bad")
        raise ValueError("bad failed")

    async def handler(state, error: NodeError):
        lib.count("handler")
        return lib.Command(update={"trail": [f"handled {error.node}"]}, goto="after")

    g = lib.StateGraph(Trail)
    g.add_node("steady", visit("steady", lib))
    g.add_node("bad", bad, error_handler=handler)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "steady")
    g.add_edge(lib.START, "bad")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.ainvoke(graph, {"trail": []}, cfg)  # (updates would race: steady vs. the handler)
    lib.history(graph, cfg)


@scenario
def error_handler_with_exit_durability(lib: Run):
    def handler(state):
        lib.count("handler")
        if lib.calls["handler"] == 1:
            raise RuntimeError("the handler crashed")
        return {"trail": ["handled"]}

    g = lib.StateGraph(Trail)
    g.add_node("a", visit("a", lib))
    g.add_node("bad", failing("bad", lib), error_handler=handler)
    g.add_edge(lib.START, "a")
    g.add_edge("a", "bad")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg, durability="exit")
    lib.invoke(graph, None, cfg, durability="exit")
    lib.history(graph, cfg)


@scenario
def error_handler_asks_a_human(lib: Run):
    NodeError = lib.NodeError

    def handler(state, error: NodeError):
        lib.count("handler")
        return {"trail": [f"{error.node}: {lib.interrupt('retry or give up?')}"]}

    g = lib.StateGraph(Trail)
    g.add_node("bad", failing("bad", lib), error_handler=handler)
    g.add_edge(lib.START, "bad")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume="give up"), cfg)
    lib.history(graph, cfg)


@scenario
def error_handler_of_a_sent_task(lib: Run):
    NodeError = lib.NodeError

    def worker(state):
        if state["n"] == 2:
            raise ValueError("two is bad")
        return {"trail": [f"worker {state['n']}"]}

    def handler(state, error: NodeError):
        return {"trail": [f"handled {error.node} {state['n']}"]}

    g = lib.StateGraph(Trail)
    g.add_node("worker", worker, error_handler=handler)
    g.add_conditional_edges(
        lib.START, lambda s: [lib.Send("worker", {"n": i, "trail": []}) for i in (1, 2, 3)])
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.history(graph, cfg)


@scenario
def error_handler_inside_a_subgraph(lib: Run):
    inner = lib.StateGraph(Trail)
    inner.add_node("bad", failing("bad", lib), error_handler=lambda state: {"trail": ["fixed"]})
    inner.add_node("inner2", visit("inner2", lib))
    inner.add_edge(lib.START, "bad")
    inner.add_edge("bad", "inner2")  # not taken: the handler does not route on
    g = lib.StateGraph(Trail)
    g.add_node("child", inner.compile())
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "child")
    g.add_edge("child", "after")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.stream(graph, {"trail": []}, cfg, stream_mode="updates", subgraphs=True)
    lib.history(graph, cfg)


@scenario
def error_handler_and_breakpoints(lib: Run):
    def handler(state):
        lib.count("handler")
        if lib.calls["handler"] == 1:
            raise RuntimeError("the handler crashed")
        return lib.Command(update={"trail": ["handled"]}, goto="after")

    g = lib.StateGraph(Trail)
    g.add_node("bad", failing("bad", lib), error_handler=handler)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "bad")
    graph = g.compile(checkpointer=lib.saver(), interrupt_after=["bad"],
                      interrupt_before=["__error_handler__bad"])
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)  # the handler, made mid-step, crashes: no breakpoint
    lib.invoke(graph, None, cfg)  # the handler again (nothing changed: no stop before it);
    lib.get_state(graph, cfg)  # then the step stops after "bad"
    lib.invoke(graph, None, cfg)
    lib.invoke(graph, None, cfg)
    lib.history(graph, cfg)
