"""Issue 4 acceptance: interrupts, time travel, failures, subgraphs behave as in LangGraph."""

import pytest

from tests.differential.harness import assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_issue4 import ISSUE4


@pytest.mark.parametrize("name", list(ISSUE4))
def test_same_as_langgraph(name):
    scenario = ISSUE4[name]
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS))
