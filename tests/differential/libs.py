"""The two libraries under comparison, as namespaces with the same names.

``LANGGRAPH`` is the reference; ``OURS`` is lgcheckpoint. OURS imports each name on first use, so
test collection never fails while a runtime module is still missing: the test that needs the name
fails instead (a missing piece must show as red, never as a skip). Next: ``harness.py``.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> (module suffix under the package, attribute); the same table serves both libraries
NAMES: dict[str, tuple[str, str]] = {
    "StateGraph": ("graph", "StateGraph"),
    "START": ("graph", "START"),
    "END": ("graph", "END"),
    "interrupt": ("types", "interrupt"),
    "Command": ("types", "Command"),
    "Send": ("types", "Send"),
    "RetryPolicy": ("types", "RetryPolicy"),
    "TimeoutPolicy": ("types", "TimeoutPolicy"),
    "NodeTimeoutError": ("errors", "NodeTimeoutError"),
    "JsonPlusSerializer": ("checkpoint.serde.jsonplus", "JsonPlusSerializer"),
    "StateUpdate": ("types", "StateUpdate"),
    "InMemorySaver": ("checkpoint.memory", "InMemorySaver"),
    "SqliteSaver": ("checkpoint.sqlite", "SqliteSaver"),
    "PostgresSaver": ("checkpoint.postgres", "PostgresSaver"),
    "AsyncSqliteSaver": ("checkpoint.sqlite.aio", "AsyncSqliteSaver"),
    "AsyncPostgresSaver": ("checkpoint.postgres.aio", "AsyncPostgresSaver"),
    "get_stream_writer": ("config", "get_stream_writer"),
    "GraphRecursionError": ("errors", "GraphRecursionError"),
    "InvalidUpdateError": ("errors", "InvalidUpdateError"),
    "NodeInterrupt": ("errors", "NodeInterrupt"),
    "NodeError": ("errors", "NodeError"),
    "UntrackedValue": ("channels", "UntrackedValue"),
    "DeltaChannel": ("channels", "DeltaChannel"),
    "LastValue": ("channels", "LastValue"),
    "EphemeralValue": ("channels", "EphemeralValue"),
    "Topic": ("channels", "Topic"),
    "BinaryOperatorAggregate": ("channels", "BinaryOperatorAggregate"),
    "NodeBuilder": ("pregel", "NodeBuilder"),
    "Pregel": ("pregel", "Pregel"),
    "Overwrite": ("types", "Overwrite"),
    "RemainingSteps": ("managed", "RemainingSteps"),
    "IsLastStep": ("managed", "IsLastStep"),
    "CachePolicy": ("types", "CachePolicy"),
    "InMemoryCache": ("cache.memory", "InMemoryCache"),
    "SqliteCache": ("cache.sqlite", "SqliteCache"),
    "entrypoint": ("func", "entrypoint"),
    "task": ("func", "task"),
    "get_runtime": ("runtime", "get_runtime"),
    "RunControl": ("runtime", "RunControl"),
    "GraphDrained": ("errors", "GraphDrained"),
}


class Lib:
    """One library's public names, imported lazily from ``<package>.<module>``; ``durability``
    is the mode a run uses when the scenario does not choose one (None: the library's default)."""

    def __init__(self, name: str, package: str, durability: str | None = None):
        self.name, self.package, self.durability = name, package, durability

    def __getattr__(self, attr: str) -> Any:
        if attr not in NAMES:
            raise AttributeError(f"{attr!r} is not a compared name; add it to libs.NAMES")
        module, symbol = NAMES[attr]
        path = f"{self.package}.{module}"
        try:
            return getattr(importlib.import_module(path), symbol)
        except (ImportError, AttributeError) as exc:
            raise AssertionError(
                f"[{self.name}] cannot import {symbol} from {path}: {exc}"
            ) from exc

    def __repr__(self) -> str:
        return self.name


# LangGraph 1.2 in its default "async" mode can save a join channel with a writer from the NEXT
# step (the saver serializes in the background while the next step mutates the live set: its
# issue #8748), so its history for fan_out_fan_in shows `d` one step early. "sync" saves before
# the next step starts and is the truth we compare with; lgcheckpoint runs in its default mode.
LANGGRAPH = Lib("langgraph", "langgraph", durability="sync")
OURS = Lib("ours", "lgcheckpoint")
