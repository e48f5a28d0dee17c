"""A state schema given as a value, not a type: LangGraph warns (or fails, when the value cannot
be hashed); so do we, with a message that says what to pass. Valid schemas warn nothing."""

import operator
import warnings
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.libs import LANGGRAPH, OURS


class State(TypedDict):
    foo: str


@pytest.mark.parametrize("schema", [("a", "b"), 3, "State"])
def test_a_hashable_value_warns(schema):
    for lib in (LANGGRAPH, OURS):
        with pytest.warns(UserWarning, match="Invalid state_schema"):
            lib.StateGraph(schema)


@pytest.mark.parametrize("schema", [{"foo": "bar"}, ["hi", operator.add], State(foo="x")])
def test_an_unhashable_value_is_a_type_error(schema):
    with pytest.raises(TypeError):
        LANGGRAPH.StateGraph(schema)
    with pytest.raises(TypeError, match="Invalid state_schema.*pass the class"):
        OURS.StateGraph(schema)


@pytest.mark.parametrize("schema", [State, dict, int, Annotated[list, operator.add]])
def test_a_type_warns_nothing(schema):
    for lib in (LANGGRAPH, OURS):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.StateGraph(schema)
