"""Issue 3 acceptance: each scenario's normalised history is the same on LangGraph and on ours."""

import pytest

from tests.differential.harness import assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_issue3 import ISSUE3


@pytest.mark.parametrize("name", list(ISSUE3))
def test_same_as_langgraph(name):
    scenario = ISSUE3[name]
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS))
