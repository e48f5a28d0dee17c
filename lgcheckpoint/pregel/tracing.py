"""langchain callbacks and tracers: a run with ``config["callbacks"]`` reports to them as
LangGraph's does.

The run is a chain run named after the graph (or ``run_name``, with ``run_id``); each task is a
child run named after its node, tagged ``graph:step:N``, with the task's metadata
(``langgraph_step``, ``langgraph_node`` ...). What a node calls — a chat model, a Runnable, a
subgraph, a @task — is a child of the node's run, tagged ``seq:step:1``: while the node runs, its
config's ``callbacks`` is that run's child manager, and the task's config too, which subgraph
runs and @task calls start from. A ``RunnableSequence`` node's steps are the node run's
children (``seq:step:1``, ``seq:step:2`` ...), as LangGraph flattens them into its node's
sequence; the node's conditional edges run inside its run, after its writes (``seq:step:K``:
``edge_step``). In a timed node (``idle_timeout``, refresh_on="auto") every callback event
under its run is progress. A stream the caller stops reading ends the graph's run with
GeneratorExit. An interrupt is the node run's error and the graph run's end;
``GraphCallbackHandler``s hear it (callbacks.py), and hear a run resume. A node's ``TracePolicy``
changes what tracers record of its input and output; the node, the other handlers and the
streams see the real values. Imported only for runs with callbacks (``runner.watched``,
``runner.call_edge``, ``Pregel._loop``). End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import copy
import inspect
import logging
from typing import TYPE_CHECKING, Any, Callable

try:
    from langchain_core.callbacks import (
        BaseCallbackHandler, BaseCallbackManager, CallbackManager,
    )
    from langchain_core.runnables import RunnableSequence
    from langchain_core.runnables.config import get_callback_manager_for_config
    from langchain_core.tracers.base import BaseTracer
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError as exc:
    if not (exc.name or "").startswith("langchain_core"):
        raise
    raise ImportError('config["callbacks"] (langchain callbacks and tracers) needs '
                      'langchain-core: pip install "lgcheckpoint[messages]"') from None

from lgcheckpoint.callbacks import (
    GraphInterruptEvent, GraphResumeEvent, get_sync_graph_callback_manager_for_config,
)
from lgcheckpoint.constants import CONF, PUSH, RESUMING, TAG_HIDDEN
from lgcheckpoint.errors import GraphInterrupt
from lgcheckpoint.pregel import messages_stream, timeouts
from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.pregel.node import Branch, Node
from lgcheckpoint.pregel.runnables import RunnableCall

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel
    from lgcheckpoint.pregel.loop import PregelLoop

logger = logging.getLogger(__name__)


# --- the graph's run ------------------------------------------------------------------------
class GraphRun:
    """One invoke/stream as a chain run; the run's config now hands its tasks the run's child."""

    def __init__(self, graph: Pregel, input: Any, config: dict) -> None:
        manager = get_callback_manager_for_config(config)
        self.events = get_sync_graph_callback_manager_for_config(config)  # the lifecycle's
        if "ls_integration" not in manager.metadata:  # LangGraph's tag for tracing UIs
            manager.add_metadata({"ls_integration": "langgraph"})
        self.run = manager.on_chain_start(None, input, run_id=config.pop("run_id", None),
                                          name=config.pop("run_name", None) or graph.name)
        self.events.run_id = self.run.run_id
        config["callbacks"] = self.run.get_child()

    def resumed(self, loop: PregelLoop) -> None:
        """After the input is applied: a run that continues a thread says so."""
        if loop.spec.config[CONF].get(RESUMING) and self.events.handlers:
            self.events.on_resume(GraphResumeEvent(self.run.run_id, loop.status,
                                                   loop.checkpoint["id"], loop.namespace))

    def end(self, loop: PregelLoop, outcome: BaseException | None,
            error: BaseException | None) -> None:
        """The run's end: ``outcome`` is what the caller gets raised (None: the output)."""
        self.close_node_runs(outcome or error)
        if outcome is not None:
            self.run.on_chain_error(outcome)
            return
        if isinstance(error, GraphInterrupt) and self.events.handlers:  # stopped at interrupts
            self.events.on_interrupt(GraphInterruptEvent(
                self.run.run_id, loop.status, loop.checkpoint["id"], loop.namespace,
                tuple(error.interrupts)))
        self.run.on_chain_end(loop.read_output())

    def closed(self, exc: GeneratorExit) -> None:
        """The caller stopped reading the stream: the run ends with that error, as LangGraph's."""
        self.close_node_runs(exc)
        self.run.on_chain_error(exc)

    def close_node_runs(self, error: BaseException | None) -> None:
        """End the node runs of this graph still waiting for their edges: an error before them."""
        for key, node_run in list(open_runs.items()):
            if node_run.run.parent_run_id == self.run.run_id and open_runs.pop(key, None):
                if error is None:
                    end_run(node_run.run, node_run.output, node_run.policy)
                else:
                    node_run.run.on_chain_error(error)


# --- a task's run ---------------------------------------------------------------------------
def watch(task: Task, call: Callable[[Task], Any], config: dict) -> Any:
    """call(task) as a child run of its graph's run (a @task call: of its caller's); the node's
    config (``config``: runner.task_config) and the task's hand that run's child on. A node with
    conditional edges leaves its run open for them (``edge``)."""
    if task.node.hidden and not task.node.branches:  # START only forwarding the input
        return messages_stream.watch(task, call, config)
    policy = task.node.trace_policy
    run = start_run(task_manager(task, config), recorded_input(task), task.name, policy)
    if timeouts.task_timeout(task) is not None:  # its events keep the idle clock going
        run.inheritable_handlers = [*run.inheritable_handlers,
                                    Progress(timeouts.open_clocks.get()[-1])]
    child = run.get_child("seq:step:1")
    config = {**config, "callbacks": child}
    saved, task.config = task.config, {**task.config, "callbacks": child}
    if steps := sequence_steps(task.node):  # each step a child of the node's run
        call = stepped(steps, run, config, inspect.iscoroutinefunction(call))

    if inspect.iscoroutinefunction(call):
        async def awaited() -> Any:
            try:
                output = await messages_stream.watch(task, call, config)
            except BaseException as exc:
                run.on_chain_error(exc)
                raise
            finally:
                task.config = saved
            await streamed(run, output)
            return ended(task, run, output, policy)
        return awaited()
    try:
        output = messages_stream.watch(task, call, config)
    except BaseException as exc:
        run.on_chain_error(exc)
        raise
    finally:
        task.config = saved
    return ended(task, run, output, policy)


def ended(task: Task, run: Any, output: Any, policy: Any) -> Any:
    """The node's run ends with its output, or after its conditional edges if it has any."""
    if task.node.branches:
        open_runs[task.id, task.attempt] = OpenRun(run, output, policy,
                                                   len(task.node.branches))
    else:
        end_run(run, output, policy)
    return output


async def streamed(run: Any, output: Any) -> None:
    """An async node's output as its run's one streamed chunk, for a streaming handler such as
    ``astream_log``'s (LangGraph streams each node of such a run; the messages handler is not
    one that asks)."""
    for handler in run.handlers:
        if (_StreamingCallbackHandler in type(handler).__mro__
                and not isinstance(handler, messages_stream.MessagesHandler)):
            async for _ in handler.tap_output_aiter(run.run_id, one_chunk(output)):
                pass


async def one_chunk(output: Any) -> Any:
    yield output


class Progress(BaseCallbackHandler):
    """Any callback event under a timed node's run (a chat model's token, say) is progress for
    its idle_timeout under refresh_on="auto" (timeouts.AttemptClock.progress)."""

    run_inline = True  # in the event's order, in its thread

    def __init__(self, clock: timeouts.AttemptClock) -> None:
        self.clock = clock

    def touch(self, *args: Any, **kwargs: Any) -> None:
        self.clock.progress()

    on_llm_start = on_chat_model_start = on_llm_new_token = on_llm_end = on_llm_error = touch
    on_chain_start = on_chain_end = on_chain_error = on_text = on_retry = touch
    on_tool_start = on_tool_end = on_tool_error = on_custom_event = touch
    on_retriever_start = on_retriever_end = on_retriever_error = touch
    on_agent_action = on_agent_finish = touch


# --- a RunnableSequence node ------------------------------------------------------------------
def sequence_steps(node: Node) -> list:
    """The steps of a node that is a RunnableSequence (``prompt | model``); none for another."""
    runnable = getattr(node.func, "runnable", None) if isinstance(node.func, RunnableCall) else None
    return list(runnable.steps) if isinstance(runnable, RunnableSequence) else []


def stepped(steps: list, run: Any, config: dict, is_async: bool) -> Callable[[Task], Any]:
    """The node's call, each step run with the node run's child ``seq:step:i``."""
    def configs() -> Any:
        for i, step in enumerate(steps, 1):
            yield step, {**config, "callbacks": run.get_child(f"seq:step:{i}")}

    def call(task: Task) -> Any:
        value = task.input
        for step, step_config in configs():
            value = step.invoke(value, step_config)
        return value

    async def acall(task: Task) -> Any:
        value = task.input
        for step, step_config in configs():
            value = await step.ainvoke(value, step_config)
        return value
    return acall if is_async else call


# --- a conditional edge -----------------------------------------------------------------------
class OpenRun:
    """A node's run that waits for its conditional edges; the last one ends it."""

    def __init__(self, run: Any, output: Any, policy: Any, edges: int) -> None:
        self.run, self.output, self.policy, self.edges = run, output, policy, edges

    def edge_done(self, task: Task) -> None:
        self.edges -= 1
        if self.edges == 0 and open_runs.pop((task.id, task.attempt), None) is self:
            end_run(self.run, self.output, self.policy)

    def failed(self, task: Task, exc: BaseException) -> None:
        if open_runs.pop((task.id, task.attempt), None) is self:
            self.run.on_chain_error(exc)


# (task id, attempt) -> its node's run, while its edges run; one that fails before them (a
# bad update) ends with its graph's run (GraphRun.end)
open_runs: dict[tuple[str, int], OpenRun] = {}


def edge_step(node: Node, branch: Branch) -> int:
    """Where LangGraph's node sequence runs this edge: after the node's step(s) (none for START,
    one per step of a RunnableSequence), its update's write, one write per static edge and join,
    and the edges before it."""
    steps = len(sequence_steps(node)) or int(node.func is not None or node.subgraph is not None)
    return steps + 1 + len(node.edges) + len(node.joins) + node.branches.index(branch) + 1


def edge(task: Task, branch: Branch, call: Callable[[], Any], state: Any,
         is_async: bool) -> Any:
    """call() — the edge's path function on ``state`` — as a run inside its node's run (a
    Runnable path is that run itself), tagged ``seq:step:K``; the destinations it names are
    checked there too, so a bad one fails the node's run. An async path gives a coroutine."""
    node_run = open_runs.get((task.id, task.attempt))
    if node_run is None:  # the node ended otherwise (a Command to a parent graph)
        return call()
    manager = get_callback_manager_for_config({
        "callbacks": node_run.run.get_child(f"seq:step:{edge_step(task.node, branch)}"),
        "tags": task_tags(task, task.config)})
    own = None if isinstance(branch.path, RunnableCall) else manager.on_chain_start(
        None, state, name=path_name(branch.path, is_async))
    saved = task.config
    task.config = {**saved, "callbacks": own.get_child() if own else manager}
    try:
        result = call()  # a coroutine, if the path is async: its config is bound by now
    except BaseException as exc:
        return edge_failed(task, node_run, own, exc)
    finally:
        task.config = saved

    def done(result: Any) -> Any:
        if own is not None:
            own.on_chain_end(result)
        try:
            branch.destinations(result)
        except BaseException as exc:
            return edge_failed(task, node_run, None, exc)
        node_run.edge_done(task)
        return result

    if not inspect.iscoroutine(result):
        return done(result)

    async def awaited() -> Any:
        try:
            value = await result
        except BaseException as exc:
            return edge_failed(task, node_run, own, exc)
        return done(value)
    return awaited()


def path_name(path: Callable, is_async: bool) -> str | None:
    """The run name LangGraph gives a path function: its name; a lambda's (or a callable
    object's) is its wrapper's class in a sync run, none in an async one."""
    name = getattr(path, "__name__", "<lambda>")
    return name if name != "<lambda>" else None if is_async else "RunnableCallable"


def edge_failed(task: Task, node_run: OpenRun, own: Any, exc: BaseException) -> Any:
    if own is not None:
        own.on_chain_error(exc)
    node_run.failed(task, exc)
    raise exc


def is_call(task: Task) -> bool:
    """A @task call's path is (PUSH, its caller's path, n, True)."""
    return len(task.path) == 4 and task.path[0] == PUSH and task.path[-1] is True


def task_manager(task: Task, config: dict) -> CallbackManager:
    """The callbacks of a task's run: its parent's, the step's tag (not for a call, which runs
    inside its caller's run), the task's metadata."""
    parent = config.get("callbacks")
    parent = parent.copy() if isinstance(parent, BaseCallbackManager) else (
        CallbackManager.configure(parent))
    if not is_call(task):
        parent.add_tags([f"graph:step:{config['metadata'].get('langgraph_step')}"],
                        inherit=False)
    return get_callback_manager_for_config({**config, "callbacks": parent,
                                            "tags": task_tags(task, config)})


def task_tags(task: Task, config: dict) -> list[str]:
    """The config's tags, and START's: hidden from tracing UIs."""
    return [*config.get("tags", ()), *([TAG_HIDDEN] if task.node.hidden else [])]


def recorded_input(task: Task) -> Any:
    """A task's input as its run records it; a @task call's arguments by parameter name."""
    if not is_call(task):
        return task.input
    args, kwargs = task.input
    func = getattr(task.node.func, "__wrapped__", None)
    try:
        return dict(inspect.signature(func).bind_partial(*args, **kwargs).arguments)
    except (TypeError, ValueError):  # no signature to read
        return {"args": args, "kwargs": kwargs} if kwargs else {"args": args}


# --- what tracers record (TracePolicy) --------------------------------------------------------
def processed(value: Any, process: Callable[[Any], Any] | None) -> Any:
    """What tracers record of ``value``: the real value if the processor is unset or fails."""
    if process is None:
        return value
    try:
        return process(value)
    except Exception:
        logger.exception("a TracePolicy processor failed: the tracer records the real value")
        return value


def split(manager: Any) -> tuple[Any, Any]:
    """(the other handlers, the tracers) of a manager: only tracers get what a policy records
    (a streaming handler feeds a stream the caller reads, so it gets the real values)."""
    real, tracers = copy.copy(manager), copy.copy(manager)
    tracers.handlers = [h for h in manager.handlers if isinstance(h, BaseTracer)
                        and _StreamingCallbackHandler not in type(h).__mro__]
    real.handlers = [h for h in manager.handlers if h not in tracers.handlers]
    return real, tracers


def start_run(manager: CallbackManager, input: Any, name: str, policy: Any) -> Any:
    recorded = processed(input, policy and policy.process_inputs)
    if recorded is input:
        return manager.on_chain_start(None, input, name=name)
    real, tracers = split(manager)
    run = real.on_chain_start(None, input, name=name)
    tracers.on_chain_start(None, recorded, name=name, run_id=run.run_id)
    run.handlers = manager.handlers  # an error reaches every handler
    return run


def end_run(run: Any, output: Any, policy: Any) -> None:
    recorded = processed(output, policy and policy.process_outputs)
    if recorded is output:
        run.on_chain_end(output)
        return
    real, tracers = split(run)
    tracers.on_chain_end(recorded)
    real.on_chain_end(output)
