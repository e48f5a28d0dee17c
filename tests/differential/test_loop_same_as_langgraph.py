"""The super-step loop: each scenario's normalised history is the same on LangGraph and on ours."""

import pytest

from tests.differential.harness import assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import LOOP


@pytest.mark.parametrize("name", list(LOOP))
def test_same_as_langgraph(name):
    scenario = LOOP[name]
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS))
