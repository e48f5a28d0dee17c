"""Chapter 21 (a chat agent's memory): the functions its "Read it in the source" shows."""

from __future__ import annotations

import ormsgpack
import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.checkpoint.serde.msgpack_ext import EXT_PYDANTIC_V2, encode_pydantic_v2
from lgcheckpoint.messages import REMOVE_ALL_MESSAGES, give_ids, merge
from lgcheckpoint.viz.conversation import transcript
from lgcheckpoint.viz.history import Step, TaskWrites

pytestmark = pytest.mark.lesson("21_chat_memory")


def contents(messages):
    return [m.content for m in messages]


def test_merge_appends_replaces_and_removes_by_id():
    left = [HumanMessage("hi", id="1"), AIMessage("hello", id="2")]
    assert contents(merge(left, [HumanMessage("again", id="3")])) == ["hi", "hello", "again"]
    assert contents(merge(left, [AIMessage("HELLO", id="2")])) == ["hi", "HELLO"]
    assert contents(merge(left, [RemoveMessage(id="1")])) == ["hello"]
    assert contents(merge(left, [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("new")])) \
        == ["new"]
    assert contents(left) == ["hi", "hello"], "merge must not change the stored list"
    with pytest.raises(ValueError, match="doesn't exist"):
        merge(left, [RemoveMessage(id="9")])


def test_give_ids_gives_a_missing_id_in_place_and_keeps_a_given_one():
    given, missing = HumanMessage("a", id="kept"), HumanMessage("b")
    give_ids([given, missing])
    assert given.id == "kept" and isinstance(missing.id, str) and len(missing.id) == 36


def test_a_message_is_stored_as_ext_code_5_with_its_fields_as_langgraph_stores_it():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer as TheirSerializer

    message = HumanMessage("add 3 and 4", id="q-1")
    code, (module, name, fields, method) = encode_pydantic_v2(message)
    assert (code, module, name, method) == (
        EXT_PYDANTIC_V2, "langchain_core.messages.human", "HumanMessage", "model_validate_json")
    assert fields == message.model_dump() and fields["type"] == "human"
    tag, data = JsonPlusSerializer().dumps_typed(message)
    assert (tag, data) == TheirSerializer().dumps_typed(message)
    ext = ormsgpack.unpackb(data, ext_hook=lambda c, payload: (c, ormsgpack.unpackb(payload)))
    assert ext == (5, [module, name, fields, method])
    assert JsonPlusSerializer().loads_typed((tag, data)) == message


def step(key, messages, children=(), writes=()):
    return Step(key=key, index=int(key[1:]), checkpoint_id=key, ns="", step=0, source="loop",
                parent=None, values={"messages": messages}, children=list(children),
                tasks=[TaskWrites("t", "summarize", [("messages", list(writes))], [], [], [])]
                if writes else [])


def test_transcript_marks_removed_replaced_and_pending_messages():
    q, a = HumanMessage("q", id="q"), AIMessage("a", id="a")
    removing = step("c0", [q, a], writes=[RemoveMessage(id="q")], children=["c1"])
    history = {"c1": step("c1", [a]), "c2": step("c2", [HumanMessage("Q", id="q"), a])}

    turns = transcript(removing, history=history)
    assert [(t.id, t.mark, t.note) for t in turns] == [
        ("q", "removed", "RemoveMessage in a pending write of summarize"), ("a", "", "")]
    forked = step("c0", [q, a], children=["c1", "c2"])
    marks = {t.id: (t.mark, t.note) for t in transcript(forked, history=history)}
    assert marks == {"q": ("removed", "gone from c1"), "a": ("", "")}
    replaced = step("c0", [q, a], children=["c2"])
    assert transcript(replaced, history=history)[0].mark == "replaced"
    waiting = step("c0", [q], writes=[a])  # no next checkpoint yet: the write is pending
    assert [(t.id, t.mark) for t in transcript(waiting)] == [("q", ""), ("a", "pending")]


def test_on_llm_new_token_streams_a_watched_models_chunks_only():
    import uuid

    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    from lgcheckpoint.pregel.messages_stream import MessagesHandler

    sent = []
    handler = MessagesHandler(lambda ns, item: sent.append((ns, item)), False, ())
    watched, other = uuid.uuid4(), uuid.uuid4()
    meta = {"langgraph_checkpoint_ns": "agent:1", "langgraph_node": "agent"}
    handler.on_chat_model_start({}, [], run_id=watched, metadata=meta)
    handler.on_chat_model_start({}, [], run_id=other, metadata=dict(meta), tags=["nostream"])
    for run_id in (watched, other):
        chunk = ChatGenerationChunk(message=AIMessageChunk("Your", id="m"))
        handler.on_llm_new_token("Your", chunk=chunk, run_id=run_id)
    assert [(ns, m.content, md["langgraph_node"]) for ns, (m, md) in sent] == [
        ((), "Your", "agent")]


def test_tokens_stream_then_an_interrupt_and_a_resume_runs_only_the_question():
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    from lgcheckpoint.checkpoint.memory import InMemorySaver
    from lgcheckpoint.graph import START, StateGraph
    from lgcheckpoint.messages import MessagesState
    from lgcheckpoint.types import Command, interrupt

    model = GenericFakeChatModel(messages=iter([AIMessage("ready to send")]))
    builder = StateGraph(MessagesState)
    builder.add_node("answer", lambda s: {"messages": [model.invoke(s["messages"])]})
    builder.add_node("ask", lambda s: {"messages": [AIMessage(f"({interrupt('send?')})")]})
    builder.add_edge(START, "answer")
    builder.add_edge("answer", "ask")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "1"}}

    def run(value):
        return [(mode, chunk[0].content if mode == "messages" else list(chunk))
                for mode, chunk in graph.stream(value, config,
                                                stream_mode=["messages", "updates"])]

    assert run({"messages": [HumanMessage("refund")]}) == [
        ("messages", "ready"), ("messages", " "), ("messages", "to"), ("messages", " "),
        ("messages", "send"), ("updates", ["answer"]), ("updates", ["__interrupt__"])]
    assert run(Command(resume="yes")) == [("messages", "(yes)"), ("updates", ["ask"])]
