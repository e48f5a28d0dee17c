"""What a run stores and reads back, compared with LangGraph on the same kind of saver.

Two bugs of issue 14, as whole histories: a "writes" key in the run's metadata was dropped from
every checkpoint, and a stored value whose class can no longer be imported raised on load where
LangGraph returns its fields. LangGraph's PostgresSaver drops "writes" where its other savers keep
it, so each scenario is compared with LangGraph on the same saver kind.
"""

from __future__ import annotations

import dataclasses
import operator
import sys
import types
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import Trail, thread, visit
from tests.differential.test_savers import saver_of

STORED, scenario = registry()
GONE = "lgcheckpoint_difftest_gone"  # a module that exists only while a scenario runs


@scenario
def a_writes_key_in_the_run_metadata_is_kept(lib: Run):
    g = lib.StateGraph(Trail)
    g.add_node("a", visit("a", lib))
    g.add_edge(lib.START, "a")
    graph = g.compile(checkpointer=lib.saver())
    cfg = {**thread(), "metadata": {"writes": "mine", "user": "ann"}}
    lib.invoke(graph, {"trail": []}, cfg)
    lib.history(graph, thread())


@dataclasses.dataclass
class Parcel:
    """A value type that lives in a module the scenario removes after the first run."""

    weight: int


Parcel.__module__ = GONE  # loaders look the class up here, by module and name


class Delivery(TypedDict, total=False):
    trail: Annotated[list[str], operator.add]
    parcel: Parcel  # a schema type: lgcheckpoint's loader allows it (compile adds it)


def gone_module() -> None:
    """Register Parcel under GONE, as if a user's module defined it."""
    module = types.ModuleType(GONE)
    module.Parcel = Parcel
    sys.modules[GONE] = module


@scenario
def a_stored_value_whose_class_is_gone_reads_as_its_fields(lib: Run):
    """Stored while the class imports; read back (and run on) after its module is gone."""
    gone_module()
    saver = lib.allow([(GONE, "Parcel")])  # the harness reads the saver without the graph

    def pack(state: dict) -> dict:
        return {"trail": [f"pack saw {state.get('parcel')!r}"], "parcel": Parcel(3)}

    g = lib.StateGraph(Delivery)
    g.add_node("pack", pack)
    g.add_edge(lib.START, "pack")
    graph = g.compile(checkpointer=saver)
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    del sys.modules[GONE]  # the class no longer imports: loads must not import or guess it
    lib.get_state(graph, cfg)
    lib.invoke(graph, {"trail": []}, cfg)  # the node reads the old value back as its fields


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def same_saver(request):
    """A factory of one saver kind for either library (None: the harness's InMemorySaver)."""
    return saver_of(request.param, request)


@pytest.mark.parametrize("name", list(STORED))
def test_same_as_langgraph(name, same_saver):
    try:
        assert_same(name, record(STORED[name], LANGGRAPH, same_saver),
                    record(STORED[name], OURS, same_saver))
    finally:
        sys.modules.pop(GONE, None)
