"""Node timeouts on langchain Runnables, side by side with LangGraph (pregel/timeouts.py): a
Runnable node whose async form is its own code can be timed, one with sync code cannot; a chat
model's streamed tokens (stream_mode="messages") are progress of the idle clock."""

import asyncio
from typing import Annotated, Any, AsyncIterator

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableLambda, RunnableParallel
from langgraph.errors import NodeTimeoutError as LgNodeTimeoutError
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph as LgStateGraph
from langgraph.graph.message import add_messages as lg_add_messages
from langgraph.types import TimeoutPolicy as LgTimeoutPolicy
from typing_extensions import TypedDict

from lgcheckpoint import START, StateGraph
from lgcheckpoint.errors import NodeTimeoutError
from lgcheckpoint.messages import add_messages
from lgcheckpoint.types import TimeoutPolicy

LIBS = {"ours": (StateGraph, START, TimeoutPolicy, NodeTimeoutError, add_messages),
        "langgraph": (LgStateGraph, LG_START, LgTimeoutPolicy, LgNodeTimeoutError,
                      lg_add_messages)}


class State(TypedDict):
    x: int


async def slow(state: dict) -> dict:
    await asyncio.sleep(0.5)
    return {"x": 1}


def sync(state: dict) -> dict:
    return {"x": 1}


def graph_of(lib: str, node: Any):
    state_graph, start, policy, _, _ = LIBS[lib]
    return (state_graph(State).add_node("n", node, timeout=policy(idle_timeout=0.05))
            .add_edge(start, "n").compile())


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("wrap", [lambda r: r, lambda r: r.with_config(tags=["t"])],
                         ids=["lambda", "bound"])
async def test_an_async_runnable_node_is_timed(lib, wrap):
    graph = graph_of(lib, wrap(RunnableLambda(slow)))
    with pytest.raises(LIBS[lib][3]):
        await graph.ainvoke({"x": 0})


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("node", [
    RunnableLambda(sync), RunnableLambda(sync).with_config(tags=["t"]),
    RunnableParallel(a=RunnableLambda(sync), b=RunnableLambda(slow)),
], ids=["lambda", "bound", "parallel with a sync branch"])
def test_a_runnable_node_with_sync_code_cannot_be_timed(lib, node):
    with pytest.raises(ValueError, match="only supported for async nodes"):
        graph_of(lib, node)


class SlowTokens(BaseChatModel):
    """Streams "0", "1", "2", one every 0.1 s."""

    @property
    def _llm_type(self) -> str:
        return "slow-tokens"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                   **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage("012"))])

    async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        for token in "012":
            await asyncio.sleep(0.1)
            chunk = ChatGenerationChunk(message=AIMessageChunk(
                content=token, chunk_position="last" if token == "2" else None))
            if run_manager is not None:
                await run_manager.on_llm_new_token(token, chunk=chunk)
            yield chunk


@pytest.mark.parametrize("lib", LIBS)
async def test_streamed_tokens_keep_a_timed_node_alive(lib):
    state_graph, start, policy, _, reducer = LIBS[lib]

    class Chat(TypedDict):
        messages: Annotated[list, reducer]

    model = SlowTokens()

    async def call_model(state: Chat) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = (state_graph(Chat)
             .add_node("call_model", call_model, timeout=policy(idle_timeout=0.15))
             .add_edge(start, "call_model").compile())
    chunks = [chunk.content async for chunk, _ in graph.astream(
        {"messages": [HumanMessage("hi")]}, stream_mode="messages")]
    assert chunks == ["0", "1", "2"]
