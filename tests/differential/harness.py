"""Run a scenario on one library, record its whole observable history, normalise, compare.

A scenario is a function ``scenario(lib)``; ``lib`` is a :class:`Run`: it offers the library's
names (``lib.StateGraph``, ``lib.interrupt`` ...), a checkpointer (``lib.saver()``), and recording
verbs (``lib.invoke``, ``lib.stream``, ``lib.get_state`` ...). After the scenario the run also
records, for every (graph, thread) it touched, the latest state and the full state history, and
the saver's raw content: every checkpoint of every namespace with its pending writes.

Normalising replaces what is random (uuids, hash ids, timestamps, version suffixes) by
placeholders numbered in order of first appearance, so "the same id in two places" is still
compared. Next: ``scenarios_loop.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import difflib
import os
import pprint
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tests.differential.libs import Lib

Record = list[tuple[str, Any]]  # (label, raw value) in the order things happened
Scenario = Callable[["Run"], None]
SaverFactory = Callable[[Lib], contextlib.AbstractContextManager]  # lib -> context yielding a saver


def in_memory(lib: Lib) -> contextlib.AbstractContextManager:
    """The default checkpointer: the library's InMemorySaver."""
    return contextlib.nullcontext(lib.InMemorySaver())


# ---------------------------------------------------------------- recording a run


class Run:
    """What a scenario sees: one library's names, its saver, and verbs that record each call."""

    def __init__(self, lib: Lib, make_saver: SaverFactory | None, stack: contextlib.ExitStack):
        self.lib, self.log, self.calls = lib, [], Counter()
        self._make_saver = make_saver or in_memory
        self._stack, self._saver, self._loop, self.async_saver = stack, None, None, False
        self._touched: list[tuple[Any, Any]] = []  # (graph, thread_id) in order of first use

    def __getattr__(self, name: str) -> Any:
        return getattr(self.lib, name)

    def saver(self) -> Any:
        """The run's one checkpointer (memory, SQLite or Postgres), created on first use."""
        if self._saver is None:
            context = self._make_saver(self.lib)
            self.async_saver = hasattr(context, "__aenter__")
            if self.async_saver:  # entered and left on the run's one event loop
                self._saver = self.run_async(context.__aenter__())
                self._stack.callback(lambda: self.run_async(context.__aexit__(None, None, None)))
            else:
                self._saver = self._stack.enter_context(context)
        return self._saver

    def allow(self, types: list[tuple[str, str]]) -> Any:
        """The run's saver, from now on able to build ``types`` (module, name): what a user who
        trusts them passes to ``with_allowlist``; the harness's own reads go through it too."""
        self._saver = self.saver().with_allowlist(types)
        return self._saver

    def run_async(self, coro) -> Any:
        """Run a coroutine on the run's event loop (one loop, as async savers bind to theirs)."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._stack.callback(self._loop.close)
        return self._loop.run_until_complete(coro)

    def count(self, node: str) -> None:
        """Count a node's executions, to check that resuming does not re-run finished work."""
        self.calls[node] += 1

    def note(self, label: str, value: Any) -> Any:
        """Record anything the scenario wants compared."""
        self.log.append((label, value))
        return value

    def attempt(self, label: str, fn: Callable[[], Any]) -> Any:
        """Record what ``fn()`` returns or raises (e.g. building a graph the wrong way)."""
        return self._call(label, None, None, fn)

    def _call(self, label: str, graph: Any, config: Any, fn: Callable[[], Any]) -> Any:
        # a recorded call: its result, or the error it raised (the scenario goes on either way)
        self._touch(graph, config)
        try:
            result = fn()
        except Exception as exc:  # noqa: BLE001 - errors are part of the behaviour we compare
            self.log.append((label, Raised(exc)))
            return exc
        self.log.append((label, result))
        return result

    def _touch(self, graph: Any, config: Any) -> None:
        thread = ((config or {}).get("configurable") or {}).get("thread_id")
        thread = None if thread is None else str(thread)  # savers key threads by str (42 -> "42")
        if thread is not None and (graph, thread) not in self._touched:
            self._touched.append((graph, thread))

    # the verbs: each records under the same label whichever saver is used; with an async saver,
    # reads go through the async twins (a sync call could not reach that saver's event loop)

    def options(self, graph, **kw) -> dict:
        """Keyword arguments for a run: the library's default durability unless ``kw`` sets one
        (and only for a graph with a checkpointer: without one there is nothing to make durable)."""
        has_saver = getattr(graph, "checkpointer", None) is not None
        if self.lib.durability and has_saver and "durability" not in kw:
            return {**kw, "durability": self.lib.durability}
        return kw

    def invoke(self, graph, input, config=None, **kw):
        fn = lambda: graph.invoke(input, config, **self.options(graph, **kw))
        return self._call("invoke", graph, config, fn)

    def ainvoke(self, graph, input, config=None, **kw):
        fn = lambda: self.run_async(graph.ainvoke(input, config, **self.options(graph, **kw)))
        return self._call("ainvoke", graph, config, fn)

    def stream(self, graph, input, config=None, **kw):
        fn = lambda: list(graph.stream(input, config, **self.options(graph, **kw)))
        return self._call(f"stream {kw}", graph, config, fn)

    def astream(self, graph, input, config=None, **kw):
        fn = lambda: self.run_async(
            collect(graph.astream(input, config, **self.options(graph, **kw)))
        )
        return self._call(f"astream {kw}", graph, config, fn)

    def get_state(self, graph, config, **kw):
        if self.async_saver:
            fn = lambda: self.run_async(graph.aget_state(config, **kw))
        else:
            fn = lambda: graph.get_state(config, **kw)
        return self._call(f"get_state {kw}", graph, config, fn)

    def history(self, graph, config, **kw):
        if self.async_saver:
            fn = lambda: self.run_async(collect(graph.aget_state_history(config, **kw)))
        else:
            fn = lambda: list(graph.get_state_history(config, **kw))
        return self._call(f"get_state_history {kw}", graph, config, fn)

    def update_state(self, graph, config, values, as_node=None):
        if self.async_saver:
            fn = lambda: self.run_async(graph.aupdate_state(config, values, as_node=as_node))
        else:
            fn = lambda: graph.update_state(config, values, as_node=as_node)
        return self._call(f"update_state as_node={as_node}", graph, config, fn)

    def bulk_update_state(self, graph, config, supersteps):
        if self.async_saver:
            fn = lambda: self.run_async(graph.abulk_update_state(config, supersteps))
        else:
            fn = lambda: graph.bulk_update_state(config, supersteps)
        return self._call("bulk_update_state", graph, config, fn)

    def finish(self) -> Record:
        """Append each touched thread's final state and history, and the saver's content."""
        for graph, thread in self._touched:
            if getattr(graph, "checkpointer", None) is not None:
                self.get_state(graph, {"configurable": {"thread_id": thread}}, subgraphs=True)
                self.history(graph, {"configurable": {"thread_id": thread}})
        if self.calls:
            self.log.append(("node calls", dict(self.calls)))
        if self._saver is not None:
            threads = list(dict.fromkeys(thread for _, thread in self._touched))
            self.log.append(("saver content", dump_saver(self.list_thread, threads)))
        return self.log

    def list_thread(self, thread: str) -> list:
        """Every CheckpointTuple the saver holds for ``thread`` (all namespaces)."""
        config = {"configurable": {"thread_id": thread}}
        if self.async_saver:
            return self.run_async(collect(self._saver.alist(config)))
        return list(self._saver.list(config))


async def collect(aiter) -> list:
    return [item async for item in aiter]


class Raised:
    """An exception as compared: its class name, plus its message when scenario code raised it
    (a library's own wording may differ; a node's ``ValueError("boom")`` must come back as is)."""

    def __init__(self, exc: BaseException):
        self.kind = type(exc).__name__
        self.message = str(exc) if raised_by_scenario(exc) else None

    def __repr__(self) -> str:
        return f"raised {self.kind}" + (f"({self.message!r})" if self.message is not None else "")


def raised_by_scenario(exc: BaseException) -> bool:
    """True if the innermost frame that raised ``exc`` is in this test package."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and os.sep + "differential" + os.sep in tb.tb_frame.f_code.co_filename


def dump_saver(list_thread: Callable[[str], list], threads: list[str]) -> list[dict]:
    """Every checkpoint of the given threads, oldest first, per namespace; the root namespace
    first, then subgraph namespaces by depth, name and content (parallel subgraphs race, so
    neither their creation order nor their random task ids may decide the order)."""
    out = []
    for thread in threads:
        by_ns: dict[str, list] = {}
        for t in sorted(list_thread(thread), key=lambda t: t.checkpoint["id"]):
            by_ns.setdefault(t.config["configurable"].get("checkpoint_ns", ""), []).append(t)

        def order(item):
            ns, group = item
            content = [(t.checkpoint["channel_values"], t.metadata.get("step")) for t in group]
            return (ns.count("|") + bool(ns), masked(ns), masked(content))

        for ns, group in sorted(by_ns.items(), key=order):
            out.append({"thread": thread, "ns": ns, "checkpoints": [stored(t) for t in group]})
    return out


def stored(t: Any) -> dict:
    """One CheckpointTuple as plain data; versions keep only their integer part."""
    cp = t.checkpoint
    writes: dict[str, list] = {}
    for task_id, channel, value in t.pending_writes or []:
        writes.setdefault(task_id, []).append((channel, value))
    return {
        "id": cp["id"],
        "ts": cp["ts"],
        "v": cp.get("v"),
        "parent": (t.parent_config or {}).get("configurable", {}).get("checkpoint_id"),
        "config": t.config,
        "channel_values": cp["channel_values"],
        "channel_versions": {k: int_version(v) for k, v in cp["channel_versions"].items()},
        "versions_seen": {
            node: {k: int_version(v) for k, v in seen.items()}
            for node, seen in cp["versions_seen"].items()
        },
        "updated_channels": cp.get("updated_channels"),
        "metadata": t.metadata,
        # grouped per task; tasks sorted later by name and content, since savers order them by id
        "pending_writes": PendingWrites(writes),
    }


class PendingWrites(dict):
    """task_id -> [(channel, value)], printed with each task's name and in a stable order."""


VERSION = r"\d+(?:\.[0-9.e-]+)?"  # InMemorySaver writes f"{n:032}.{random():016}"


def int_version(v: Any) -> Any:
    """The integer part of a channel version: 3, "0000…03.8123" and 3.5 all give 3."""
    if isinstance(v, str) and re.fullmatch(VERSION, v):
        return int(v.split(".")[0])
    return int(v) if isinstance(v, float) else v


def record(scenario: Scenario, lib: Lib, make_saver: SaverFactory | None = None) -> Record:
    """Run ``scenario`` on ``lib`` and return everything it observed."""
    with contextlib.ExitStack() as stack:
        run = Run(lib, make_saver, stack)
        scenario(run)
        return run.finish()


# ---------------------------------------------------------------- normalising


UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
HASH = r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])"
TIMESTAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:\+00:00|Z)?"
RANDOM = re.compile(rf"{UUID}|{HASH}|{TIMESTAMP}")
NULL_TASK_ID = (
    "00000000-0000-0000-0000-000000000000"  # writes made by no task (e.g. a resume value)
)


# errors the libraries raise themselves; only their class is compared, never their wording
LIBRARY_ERROR = re.compile(
    r"(InvalidUpdateError|GraphRecursionError|EmptyInputError|EmptyChannelError|GraphInterrupt"
    r"|NodeInterrupt|ParentCommand|InvalidCheckpointError|CheckpointNotFoundError"
    r"|NodeTimeoutError|NodeCancelledError)\(.*\)",  # a timeout's message has its elapsed time
    re.DOTALL,
)
# API value types compared field by field
EXPANDED = {"Interrupt", "Command", "Send", "Overwrite", "GraphOutput"}


class Normaliser:
    """Turns recorded objects into plain data with stable placeholders for random parts."""

    def __init__(self):
        self.names: dict[str, str] = {}  # raw id/timestamp -> placeholder
        self.counts: Counter = Counter()  # placeholders made so far, per kind ("id", "ts")
        self.task_names: dict[str, str] = {}  # raw task id -> node name, learnt from snapshots

    def text(self, s: str) -> Any:
        if re.fullmatch(r"\d{32}\.[0-9.e-]+", s):  # an InMemorySaver channel version
            return int_version(s)
        if m := LIBRARY_ERROR.fullmatch(s):  # a stored library error: its wording may differ
            return f"{m.group(1)}(...)"
        return RANDOM.sub(self._placeholder, s)

    def _placeholder(self, m: re.Match) -> str:
        raw = m.group(0)
        if raw == NULL_TASK_ID:
            return "<no task>"
        if raw not in self.names:
            kind = "ts" if "T" in raw else "id"
            self.counts[kind] += 1
            self.names[raw] = f"<{kind}{self.counts[kind]}>"
        return self.names[raw]

    def __call__(self, obj: Any) -> Any:
        """Plain, placeholder-only data for ``obj`` (dict keys in a stable order)."""
        if isinstance(obj, str):
            return self.text(obj)
        if obj is None or isinstance(obj, (bool, int, float)):
            return obj
        if isinstance(obj, Raised):
            return repr(obj)
        if isinstance(obj, BaseException):  # an error kept in a value (e.g. a task's error)
            return self.text(f"{type(obj).__name__}({str(obj)!r})")
        if isinstance(obj, PendingWrites):
            return self.pending_writes(obj)
        if type(obj).__name__ in ("StateSnapshot", "PregelTask"):
            self.learn_task_names(obj)
        if isinstance(obj, dict):
            if isinstance(obj.get("id"), str) and isinstance(obj.get("name"), str):
                self.task_names.setdefault(obj["id"], obj["name"])  # a task in a tasks/debug stream
            if isinstance(obj.get("configurable"), dict):  # a config: drop the runtime's internals
                internal = [k for k in obj["configurable"] if str(k).startswith("__")]
                obj = {
                    **obj,
                    "configurable": {
                        k: v for k, v in obj["configurable"].items() if k not in internal
                    },
                }
            return {self(k): self(v) for k, v in sorted_items(obj)}
        if isinstance(obj, tuple) and hasattr(
            obj, "_fields"
        ):  # NamedTuple: keep its name and fields
            return {  # LangGraph's private _DeltaSnapshot is our DeltaSnapshot
                "__type__": type(obj).__name__.lstrip("_"),
                **{f: self(getattr(obj, f)) for f in obj._fields},
            }
        if isinstance(obj, (list, tuple)):
            return type(obj)(self(x) for x in obj)
        if isinstance(obj, (set, frozenset)):
            return sorted((self(x) for x in sorted(obj, key=masked)), key=repr)
        if dataclasses.is_dataclass(obj):
            fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
            return {"__type__": type(obj).__name__, **self(fields)}
        if hasattr(obj, "model_dump"):  # pydantic
            return {"__type__": type(obj).__name__, **self(obj.model_dump())}
        if type(obj).__name__ in EXPANDED:
            return {"__type__": type(obj).__name__, **self(public_fields(obj))}
        return f"<{type(obj).__name__} object>"  # e.g. a saver inside a config: identity is enough

    def learn_task_names(self, obj: Any) -> None:
        if type(obj).__name__ == "PregelTask":
            self.task_names[obj.id] = obj.name
        else:
            for task in obj.tasks:
                self.learn_task_names(task)
                if type(task.state).__name__ == "StateSnapshot":
                    self.learn_task_names(task.state)

    def pending_writes(self, writes: PendingWrites) -> list:
        # tasks sorted by (name, content): savers return them ordered by their random ids
        def key(item):
            return (self.task_names.get(item[0], "?"), masked(item[1]))

        return [
            {"task": self(task_id), "name": self.task_names.get(task_id, "?"), "writes": self(ws)}
            for task_id, ws in sorted(writes.items(), key=key)
        ]


def public_fields(obj: Any) -> dict:
    names = getattr(type(obj), "__slots__", None) or vars(obj).keys()
    return {n: getattr(obj, n) for n in names if not n.startswith("_") and hasattr(obj, n)}


def masked(obj: Any) -> str:
    """A sort key that ignores random parts, so ordering does not depend on ids."""
    return RANDOM.sub("<?>", repr(obj))


def sorted_items(d: dict) -> list:
    return sorted(d.items(), key=lambda kv: masked(kv[0]))


def normalise(rec: Record) -> str:
    """The pretty-printed, placeholder-only form of a whole record."""
    norm = Normaliser()  # the saver content comes last, so task names are known by then
    parts = [
        f"## {norm.text(label)}\n{pprint.pformat(norm(value), width=110, sort_dicts=False)}\n"
        for label, value in rec
    ]
    return "".join(parts)


def diff(expected: str, actual: str, a: str = "langgraph", b: str = "ours") -> str:
    lines = difflib.unified_diff(expected.splitlines(), actual.splitlines(), a, b, lineterm="", n=4)
    return "\n".join(lines)


def assert_same(
    name: str, expected: Record, actual: Record, a: str = "langgraph", b: str = "ours"
) -> None:
    """Fail with a readable unified diff when the normalised histories differ."""
    left, right = normalise(expected), normalise(actual)
    if left != right:
        text = diff(left, right, a, b).splitlines()
        shown = "\n".join(text[:250]) + (
            f"\n... ({len(text) - 250} more diff lines)" if len(text) > 250 else ""
        )
        # pytrace=False: the diff is the report; the records' reprs would only bury it
        pytest.fail(f"scenario {name}: {a} and {b} histories differ\n{shown}", pytrace=False)


def registry() -> tuple[dict[str, Scenario], Callable[[Scenario], Scenario]]:
    """A scenario table and the decorator that fills it (test ids are the function names)."""
    table: dict[str, Scenario] = {}

    def scenario(fn: Scenario) -> Scenario:
        table[fn.__name__] = fn
        return fn

    return table, scenario


def main(argv: list[str]) -> None:
    """``python -m tests.differential.harness NAME [langgraph|ours]``: print one scenario's
    normalised history, or (no library given) its diff between the two libraries."""
    from tests.differential.libs import LANGGRAPH, OURS
    from tests.differential.scenarios_loop import LOOP
    from tests.differential.scenarios_interrupts import INTERRUPTS

    scenarios = {**LOOP, **INTERRUPTS}
    if not argv or argv[0] not in scenarios:
        raise SystemExit(f"usage: NAME [langgraph|ours]; NAME is one of: {', '.join(scenarios)}")
    scenario, libs = scenarios[argv[0]], {"langgraph": LANGGRAPH, "ours": OURS}
    if len(argv) > 1:
        print(normalise(record(scenario, libs[argv[1]])))
    else:
        left, right = (normalise(record(scenario, lib)) for lib in libs.values())
        print(diff(left, right) or "same")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
