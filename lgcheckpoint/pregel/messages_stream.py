"""stream_mode="messages": a chat model's tokens, streamed from inside the node that calls it.

A run that asks for "messages" puts a langchain callback handler in its config's ``callbacks``;
subgraph runs and @task calls inherit it with the config. While a node runs, ``watch`` points
langchain's config context at the node's config, so a chat model called inside it (invoke,
stream, ainvoke...; in a @task, a subgraph or a Runnable node too) reports each token to the
handler, which streams ``(chunk, metadata)`` with the node's metadata. A message the node
returns that no token announced (a model tagged ``nostream``, a message built by hand) is
streamed whole, once: the handler remembers message ids, and those already in the node's input.
Without ``subgraphs=True`` only the run's own graph streams: a subgraph's messages arrive whole,
when the node that ran it returns. Only this module imports langchain-core, and only when a run
asks for "messages" (or passes callbacks). End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import inspect
import uuid
from dataclasses import fields, is_dataclass
from typing import Any, Callable, Iterator, Sequence

try:
    from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
    from langchain_core.messages import BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk
    from langchain_core.runnables.config import var_child_runnable_config
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError as exc:
    if not (exc.name or "").startswith("langchain_core"):
        raise
    raise ImportError('stream_mode="messages" (chat model tokens) needs langchain-core: '
                      'pip install "lgcheckpoint[messages]"') from None

from lgcheckpoint.constants import NS_SEP, PUSH, TAG_HIDDEN, TAG_NOSTREAM
from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.runtime import open_clocks
from lgcheckpoint.types import Command

Meta = tuple[tuple[str, ...], dict]  # (namespace of the graph the node runs in, its metadata)
Emit = Callable[[tuple, Any], None]  # (namespace, (message, metadata)) to the run's caller


def graph_namespace(metadata: dict) -> tuple[str, ...]:
    """The graph a task runs in: its checkpoint namespace less its own part, and one part more
    for each @task call it sits in (a call's path is (PUSH, caller's path, n, True))."""
    parts, path, drop = metadata["langgraph_checkpoint_ns"].split(NS_SEP), \
        metadata.get("langgraph_path", ()), 1
    while len(path) == 4 and path[0] == PUSH and path[-1] is True:
        drop, path = drop + 1, path[1]
    return tuple(parts[:-drop])


def messages_in(value: Any, top: bool = True) -> Iterator[BaseMessage]:
    """The messages a node's input or output holds: itself, in a list, or as a state's values
    (a dict, a pydantic model, a dataclass), one level down."""
    if isinstance(value, BaseMessage):
        yield value
    elif isinstance(value, Sequence) and not isinstance(value, str):
        yield from (item for item in value if isinstance(item, BaseMessage))
    elif top:
        for item in state_values(value):
            yield from messages_in(item, top=False)


def state_values(state: Any) -> list:
    if isinstance(state, dict):
        return list(state.values())
    if hasattr(type(state), "model_fields"):  # a pydantic model
        return [getattr(state, name) for name in type(state).model_fields]
    if is_dataclass(state) and not isinstance(state, type):
        return [getattr(state, f.name) for f in fields(state)]
    return []


def returned_messages(output: Any) -> Iterator[BaseMessage]:
    """The messages in what a node returned, a Command's update (or several) included."""
    updates = output if isinstance(output, (list, tuple)) and any(
        isinstance(o, Command) for o in output) else [output]
    for update in updates:
        yield from messages_in(update.update if isinstance(update, Command) else update)


class MessagesHandler(BaseCallbackHandler, _StreamingCallbackHandler):
    """Streams a run's chat model tokens, and the messages its nodes return, once each."""

    run_inline = True  # called in the model's own thread, in order

    def __init__(self, emit: Emit, subgraphs: bool, parent_ns: tuple[str, ...]) -> None:
        self.emit, self.subgraphs, self.parent_ns = emit, subgraphs, parent_ns
        self.models: dict[uuid.UUID, Meta] = {}  # chat model runs being streamed
        self.seen: set[str] = set()  # ids of messages streamed (or in a node's input)

    def wants(self, ns: tuple[str, ...]) -> bool:
        """Its own graph, always; a subgraph's only with subgraphs=True."""
        return self.subgraphs or not ns or ns == self.parent_ns

    def send(self, meta: Meta, message: BaseMessage, dedupe: bool = False) -> None:
        if dedupe and message.id in self.seen:
            return
        if message.id is None:  # as LangGraph: the message keeps the id it is streamed with
            message.id = str(uuid.uuid4())
        self.seen.add(message.id)
        self.emit(meta[0], (message, meta[1]))

    # --- a node (called by watch) -------------------------------------------------------------
    def node_started(self, metadata: dict, input: Any) -> Meta | None:
        if not self.wants(ns := graph_namespace(metadata)):
            return None
        self.seen.update(m.id for m in messages_in(input) if m.id is not None)
        return ns, metadata

    def node_ended(self, meta: Meta, output: Any) -> None:
        for message in returned_messages(output):
            self.send(meta, message, dedupe=True)

    # --- a chat model (called by langchain) ---------------------------------------------------
    # each of its events is progress of the timed attempts it runs in (pregel/timeouts.py)
    def on_chat_model_start(self, serialized: dict, messages: list, *, run_id: uuid.UUID,
                            tags: list[str] | None = None, metadata: dict | None = None,
                            **kwargs: Any) -> None:
        progress()
        if not metadata or "langgraph_checkpoint_ns" not in metadata or TAG_NOSTREAM in (
                tags or ()):
            return
        if not self.wants(ns := graph_namespace(metadata)):
            return
        if user_tags := [t for t in tags or () if not t.startswith("seq:step")]:
            metadata["tags"] = user_tags
        self.models[run_id] = (ns, metadata)

    def on_llm_new_token(self, token: str, *, chunk: Any = None, run_id: uuid.UUID,
                         **kwargs: Any) -> None:
        progress()
        if isinstance(chunk, ChatGenerationChunk) and (meta := self.models.get(run_id)):
            self.send(meta, chunk.message)

    def on_llm_end(self, response: Any, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        """A model that did not stream (or streamed under other ids) sends its message whole."""
        if (meta := self.models.pop(run_id, None)) and response.generations and (
                isinstance(gen := response.generations[0][0], ChatGeneration)):
            self.send(meta, gen.message, dedupe=True)
        progress()

    def on_llm_error(self, error: BaseException, *, run_id: uuid.UUID, **kwargs: Any) -> None:
        self.models.pop(run_id, None)

    def tap_output_iter(self, run_id: uuid.UUID, output: Iterator) -> Iterator:
        return output  # the tokens come through on_llm_new_token

    def tap_output_aiter(self, run_id: uuid.UUID, output: Any) -> Any:
        return output


def progress() -> None:
    """A chat model's event refreshes the idle clocks of the attempts it runs in (their
    refresh_on="auto"); called in the model's own context (run_inline), which holds them."""
    for clock in open_clocks.get():
        clock.progress()


def listen(config: dict, emit: Emit, subgraphs: bool, ns: tuple[str, ...]) -> None:
    """Add a MessagesHandler to a run's callbacks (a subgraph run keeps its parent's too)."""
    handler = MessagesHandler(emit, subgraphs, ns)
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        callbacks = callbacks.copy()
        callbacks.add_handler(handler, inherit=True)
    else:
        callbacks = [*(callbacks or ()), handler]
    config["callbacks"] = callbacks


def handlers(config: dict) -> list[MessagesHandler]:
    callbacks = config.get("callbacks") or ()
    if isinstance(callbacks, BaseCallbackManager):
        callbacks = callbacks.handlers
    return [h for h in callbacks if isinstance(h, MessagesHandler)]


def traced(metadata: dict) -> dict:
    """A node's metadata as langchain sees it in LangGraph: the run's keys, the graph's tracing
    tag ``ls_integration``, then the task's ``langgraph_*`` keys."""
    keys = list(metadata)
    at = keys.index("langgraph_step")
    return {**{k: metadata[k] for k in keys[:at]},
            "ls_integration": metadata.get("ls_integration", "langgraph"),
            **{k: metadata[k] for k in keys[at:]}}


def watch(task: Task, call: Callable[[Task], Any], config: dict) -> Any:
    """call(task) in langchain's config context of the node (``config``: runner.task_config),
    its messages streamed; an async call gives a coroutine that does the same."""
    config["metadata"] = meta = traced(config["metadata"])
    hidden = task.node.hidden or TAG_HIDDEN in getattr(task.node, "tags", ())  # START, say
    listening = [] if hidden else handlers(config)
    started = [(h, m) for h in listening if (m := h.node_started(meta, task.input))]

    def ended(output: Any) -> Any:
        for handler, node_meta in started:
            handler.node_ended(node_meta, output)
        return output

    if inspect.iscoroutinefunction(call):
        async def awaited() -> Any:
            token = var_child_runnable_config.set(config)
            try:
                return ended(await call(task))
            finally:
                var_child_runnable_config.reset(token)
        return awaited()
    token = var_child_runnable_config.set(config)
    try:
        return ended(call(task))
    finally:
        var_child_runnable_config.reset(token)


def push(message: BaseMessage, config: dict) -> None:
    """push_message: stream a message from the running node (its ``config``) now."""
    metadata = config["metadata"]
    ns = graph_namespace(metadata)
    for handler in handlers(config):
        if handler.wants(ns):
            handler.send((ns, metadata), message)
