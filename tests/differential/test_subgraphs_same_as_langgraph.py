"""Subgraph persistence, __copy__ forks and bulk_update_state behave as in LangGraph, on every
saver (memory, SQLite, Postgres; sync and async savers)."""

import pytest

from tests.differential.harness import assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_subgraphs import SUBGRAPHS
from tests.differential.test_savers import async_saver_factory, saver_factory  # noqa: F401


@pytest.mark.parametrize("name", list(SUBGRAPHS))
def test_same_as_langgraph(name):
    scenario = SUBGRAPHS[name]
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS))


# LangGraph's SqliteSaver and PostgresSaver have no async verbs: async scenarios run on async savers
@pytest.mark.parametrize("name", [name for name in SUBGRAPHS if not name.startswith("async")])
def test_same_as_langgraph_on_saver(name, saver_factory):  # noqa: F811
    scenario = SUBGRAPHS[name]
    assert_same(name, record(scenario, LANGGRAPH, saver_factory),
                record(scenario, OURS, saver_factory))


@pytest.mark.parametrize("name", [name for name in SUBGRAPHS if name.startswith("async")])
def test_same_as_langgraph_on_async_saver(name, async_saver_factory):  # noqa: F811
    scenario = SUBGRAPHS[name]
    assert_same(name, record(scenario, LANGGRAPH, async_saver_factory),
                record(scenario, OURS, async_saver_factory))


@pytest.mark.parametrize("lib", [LANGGRAPH, OURS], ids=str)
def test_update_of_an_undeclared_subgraph_names_it(lib):
    """The refusal names the namespace without task ids, in LangGraph's words."""
    from tests.differential.harness import Run
    from tests.differential.scenarios_subgraphs import child, parent

    run = Run(lib, None, None)
    run._saver = lib.InMemorySaver()
    graph = parent(run, child(run, None))
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": "child:a|inner:b"}}
    with pytest.raises(ValueError, match=r"Subgraph child\|inner not found"):
        graph.update_state(config, {"trail": ["edit"]})
