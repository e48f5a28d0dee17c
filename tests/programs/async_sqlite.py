"""An async graph on AsyncSqliteSaver: astream of updates, an interrupt, resumed with ainvoke."""

import asyncio
import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict):
    city: str
    notes: Annotated[list[str], operator.add]


async def research(state: State) -> dict:
    await asyncio.sleep(0)
    return {"notes": [f"{state['city']} has museums"]}


async def ask(state: State) -> dict:
    days = interrupt(f"how many days in {state['city']}?")
    return {"notes": [f"stay {days} days"]}


builder = StateGraph(State)
builder.add_node("research", research)
builder.add_node("ask", ask)
builder.add_edge(START, "research")
builder.add_edge("research", "ask")


async def main() -> None:
    async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "trip"}}
        async for chunk in graph.astream({"city": "Kyoto", "notes": []}, config,
                                         stream_mode="updates"):
            if "__interrupt__" in chunk:
                chunk = {"__interrupt__": [i.value for i in chunk["__interrupt__"]]}
            print("update", chunk)
        print("next:", (await graph.aget_state(config)).next)
        print("final:", await graph.ainvoke(Command(resume=3), config))
        print("checkpoints:", len([c async for c in saver.alist(config)]))


asyncio.run(main())
