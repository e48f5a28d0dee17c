"""langchain callbacks and tracers: a run with ``config["callbacks"]`` reports to them as
LangGraph's does.

The run is a chain run named after the graph (or ``run_name``, with ``run_id``); each task is a
child run named after its node, tagged ``graph:step:N``, with the task's metadata
(``langgraph_step``, ``langgraph_node`` ...). What a node calls — a chat model, a Runnable, a
subgraph, a @task — is a child of the node's run, tagged ``seq:step:1``: while the node runs, its
config's ``callbacks`` is that run's child manager, and the task's config too, which subgraph
runs and @task calls start from. An interrupt is the node run's error and the graph run's end;
``GraphCallbackHandler``s hear it (callbacks.py), and hear a run resume. A node's ``TracePolicy``
changes what tracers record of its input and output; the node, the other handlers and the
streams see the real values. Imported only for runs with callbacks (``runner.watched``,
``Pregel._loop``). End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import copy
import inspect
import logging
from typing import TYPE_CHECKING, Any, Callable

try:
    from langchain_core.callbacks import BaseCallbackManager, CallbackManager
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
from lgcheckpoint.pregel import messages_stream
from lgcheckpoint.pregel.algo import Task

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
        if outcome is not None:
            self.run.on_chain_error(outcome)
            return
        if isinstance(error, GraphInterrupt) and self.events.handlers:  # stopped at interrupts
            self.events.on_interrupt(GraphInterruptEvent(
                self.run.run_id, loop.status, loop.checkpoint["id"], loop.namespace,
                tuple(error.interrupts)))
        self.run.on_chain_end(loop.read_output())


# --- a task's run ---------------------------------------------------------------------------
def watch(task: Task, call: Callable[[Task], Any], config: dict) -> Any:
    """call(task) as a child run of its graph's run (a @task call: of its caller's); the node's
    config (``config``: runner.task_config) and the task's hand that run's child on."""
    if task.node.hidden and not task.node.branches:  # START only forwarding the input
        return messages_stream.watch(task, call, config)
    policy = task.node.trace_policy
    run = start_run(task_manager(task, config), recorded_input(task), task.name, policy)
    child = run.get_child("seq:step:1")
    config = {**config, "callbacks": child}
    saved, task.config = task.config, {**task.config, "callbacks": child}

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
            end_run(run, output, policy)
            return output
        return awaited()
    try:
        output = messages_stream.watch(task, call, config)
    except BaseException as exc:
        run.on_chain_error(exc)
        raise
    finally:
        task.config = saved
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
    tags = [*config.get("tags", ()), *([TAG_HIDDEN] if task.node.hidden else [])]
    return get_callback_manager_for_config({**config, "callbacks": parent, "tags": tags})


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
