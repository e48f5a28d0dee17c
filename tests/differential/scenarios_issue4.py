"""Issue 4 scenarios: interrupts and resuming, Command and Send, time travel, failures and retries,
subgraphs. Same contract as ``scenarios_issue3.py``: ``scenario(lib)`` drives recording verbs.
"""

from __future__ import annotations

from tests.differential.harness import Run, registry
from tests.differential.scenarios_issue3 import Trail, thread, visit

ISSUE4, scenario = registry()


@scenario
def interrupt_then_resume(lib: Run):
    def ask(state):
        lib.count("ask")
        answer = lib.interrupt({"question": "name?"})
        return {"trail": [f"answer={answer}"]}

    g = lib.StateGraph(Trail)
    g.add_node("ask", ask)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "ask")
    g.add_edge("ask", "after")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume="ada"), cfg)
