"""debug=True and print_mode= print each chunk to the console, the lines LangGraph prints."""

import operator
import re
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.libs import LANGGRAPH, OURS


class Trail(TypedDict):
    trail: Annotated[list, operator.add]


def nested(lib, **compile_kw):
    inner = lib.StateGraph(Trail)
    inner.add_node("i", lambda s: {"trail": ["i"]})
    inner.add_edge(lib.START, "i")
    g = lib.StateGraph(Trail)
    g.add_node("a", lambda s: {"trail": ["a"]})
    g.add_node("sub", inner.compile())
    g.add_edge(lib.START, "a")
    g.add_edge("a", "sub")
    return g.compile(**compile_kw)


def printed(lib, capsys, compile_kw, call) -> str:
    result = call(nested(lib, **compile_kw))
    text = capsys.readouterr().out + f"returned {result!r}"
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # LangGraph prints the mode in bold
    return re.sub(r"sub:[0-9a-f-]{36}", "sub:<task id>", text)


@pytest.mark.parametrize("compile_kw, call, lines", [
    ({}, lambda g: g.invoke({"trail": []}, debug=True), 5),
    ({"debug": True}, lambda g: g.invoke({"trail": []}, debug=False), 5),
    ({}, lambda g: list(g.stream({"trail": []}, print_mode="values", stream_mode="updates")), 3),
    ({}, lambda g: list(g.stream({"trail": []}, print_mode=["updates"], subgraphs=True,
                                 stream_mode="values")), 3),
    ({}, lambda g: g.invoke({"trail": []}, debug=False), 0),
])
def test_printed_lines_are_langgraphs(capsys, compile_kw, call, lines):
    ours = printed(OURS, capsys, compile_kw, call)
    assert ours == printed(LANGGRAPH, capsys, compile_kw, call)
    assert ours.count("\n") == lines
