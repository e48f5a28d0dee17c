"""The functional API: an entrypoint calling tasks, stopped by interrupt() and resumed."""

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.func import entrypoint, task
from langgraph.types import Command, interrupt


@task
def write_essay(topic: str) -> str:
    return f"An essay about {topic}"


@task
def word_count(text: str) -> int:
    return len(text.split())


@entrypoint(checkpointer=InMemorySaver())
def workflow(topic: str) -> dict:
    essay = write_essay(topic).result()
    count = word_count(essay).result()
    verdict = interrupt({"essay": essay, "words": count, "action": "approve?"})
    return {"essay": essay, "approved": verdict}


config = {"configurable": {"thread_id": "f"}}
for chunk in workflow.stream("cats", config, stream_mode="updates"):
    if "__interrupt__" in chunk:
        chunk = {"__interrupt__": [i.value for i in chunk["__interrupt__"]]}
    print("update", chunk)
for chunk in workflow.stream(Command(resume=True), config, stream_mode="updates"):
    print("update", chunk)
print("final:", workflow.get_state(config).values)
