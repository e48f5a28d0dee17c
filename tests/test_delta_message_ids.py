"""Messages written to a DeltaChannel get ids before the write is saved, whatever its reducer
(pregel/write_ids.py), side by side with LangGraph: the channel replays its saved writes on every
read, so an id given later would differ on each read."""

from typing import Annotated

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.channels.delta import DeltaChannel as LgDeltaChannel
from langgraph.checkpoint.memory import InMemorySaver as LgSaver
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph as LgStateGraph
from langgraph.types import Overwrite as LgOverwrite
from typing_extensions import TypedDict

from lgcheckpoint import START, InMemorySaver, StateGraph
from lgcheckpoint.channels import DeltaChannel
from lgcheckpoint.types import Overwrite

LIBS = {"ours": (StateGraph, START, DeltaChannel, InMemorySaver, Overwrite),
        "langgraph": (LgStateGraph, LG_START, LgDeltaChannel, LgSaver, LgOverwrite)}


def append(state: list, writes: list) -> list:
    """A reducer that knows nothing of messages (gives no ids)."""
    out = list(state)
    for write in writes:
        out.extend(write if isinstance(write, list) else [write])
    return out


def reads(lib: str, input_of, written_by_node=None) -> tuple[list, bool]:
    """The saved messages (kind, content, has an id) and whether three reads agree on ids."""
    state_graph, start, delta, saver, overwrite = LIBS[lib]
    State = TypedDict("State", {"messages": Annotated[list, delta(append)]})  # noqa: UP013

    def node(state: dict) -> dict:
        return {"messages": written_by_node(overwrite)} if written_by_node else {}

    graph = (state_graph(State).add_node("node", node).add_edge(start, "node")
             .compile(checkpointer=saver()))
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"messages": input_of(overwrite)}, config)
    runs = [graph.get_state(config).values["messages"] for _ in range(3)]
    ids = [[getattr(m, "id", None) or (m.get("id") if isinstance(m, dict) else None)
            for m in run] for run in runs]
    shown = [(type(m).__name__, {k: v for k, v in m.items() if k != "id"}
              if isinstance(m, dict) else getattr(m, "content", m), bool(i))
             for m, i in zip(runs[0], ids[0])]
    return shown, ids[0] == ids[1] == ids[2]


CASES = {
    "a message without an id": (lambda ow: [HumanMessage("hello")], None),
    "a message dict in a list becomes a message": (
        lambda ow: [{"role": "user", "content": "hello"}], None),
    "a message dict alone gains an id key": (lambda ow: {"role": "user", "content": "hi"}, None),
    "messages in an Overwrite of a list": (lambda ow: ow([HumanMessage("hello")]), None),
    "messages in an Overwrite of a tuple": (lambda ow: ow((HumanMessage("hello"),)), None),
    "dicts in an Overwrite stay dicts": (lambda ow: ow([{"role": "user", "content": "x"}]), None),
    "other data is left alone": (lambda ow: [{"role": "nobody", "content": "x"}, "text"], None),
    "a node's message": (lambda ow: [], lambda ow: [AIMessage("reply")]),
    "a node's Overwrite": (lambda ow: [HumanMessage("a")], lambda ow: ow([AIMessage("b")])),
}


@pytest.mark.parametrize("case", CASES)
def test_delta_channel_messages_get_ids_as_langgraph_gives_them(case):
    input_of, written_by_node = CASES[case]
    ours = reads("ours", input_of, written_by_node)
    assert ours == reads("langgraph", input_of, written_by_node)
    assert ours[1], "the same ids on every read"


def test_a_message_dict_that_is_no_message_fails_the_write_before_it_is_saved():
    state_graph, start, delta, saver, _ = LIBS["ours"]
    State = TypedDict("State", {"messages": Annotated[list, delta(append)]})  # noqa: UP013
    graph = (state_graph(State)
             .add_node("node", lambda s: {"messages": [{"role": "tool", "content": "x"}]})
             .add_edge(start, "node").compile(checkpointer=saver()))
    config = {"configurable": {"thread_id": "t"}}
    with pytest.raises(KeyError):  # a tool message needs its tool_call_id
        graph.invoke({"messages": [HumanMessage("a", id="a")]}, config)
    assert [m.id for m in graph.get_state(config).values["messages"]] == ["a"]


def test_a_run_without_messages_does_not_import_langchain():
    import subprocess
    import sys

    code = ("import sys, operator\nfrom typing import Annotated\nfrom typing_extensions import "
            "TypedDict\nfrom lgcheckpoint import StateGraph, START, InMemorySaver\nfrom "
            "lgcheckpoint.channels import DeltaChannel\nS = TypedDict('S', {'xs': Annotated["
            "list, DeltaChannel(lambda s, ws: [*s, *(x for w in ws for x in w)])]})\n"
            "g = StateGraph(S).add_node('n', lambda s: {'xs': [{'k': 1}]}).add_edge(START, 'n')"
            ".compile(checkpointer=InMemorySaver())\ng.invoke({'xs': [1]}, {'configurable': "
            "{'thread_id': 't'}})\nprint(any(m.startswith('langchain_core') for m in "
            "sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"

