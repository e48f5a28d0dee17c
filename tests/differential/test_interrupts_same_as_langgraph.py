"""Interrupts, time travel, failures, subgraphs: each scenario behaves as in LangGraph."""

import pytest

from tests.differential.harness import assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_interrupts import INTERRUPTS


@pytest.mark.parametrize("name", list(INTERRUPTS))
def test_same_as_langgraph(name):
    scenario = INTERRUPTS[name]
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS))
