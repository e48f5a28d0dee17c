"""Writes viewers.ipynb beside this file: the notebook test_browser.py opens."""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

CELLS = [
    new_markdown_cell("# Viewers smoke notebook\n"
                      "Opened by `tests/test_browser.py` in a real browser."),
    new_code_cell('''import operator, tempfile
from typing import Annotated, TypedDict
from lgcheckpoint.graph import StateGraph, START, END
from lgcheckpoint.types import interrupt, Send
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.viz import (ChannelVersionTable, GraphDrawing, HITLPanel, LineageGraph,
                              StorageView, SuperStepPlayer, VersionsSeenMatrix)'''),
    new_code_cell('''class State(TypedDict):
    topic: str
    items: Annotated[list, operator.add]
    verdict: str

def plan(state): return {"items": []}
def fan_out(state):
    return [Send("work", {"topic": state["topic"] + str(i), "items": [], "verdict": ""})
            for i in range(2)]
def work(state): return {"items": [state["topic"]]}
def review(state): return {"verdict": interrupt({"items": state["items"]})}

g = StateGraph(State)
g.add_node("plan", plan); g.add_node("work", work); g.add_node("review", review)
g.add_edge(START, "plan"); g.add_conditional_edges("plan", fan_out, ["work"])
g.add_edge("work", "review"); g.add_edge("review", END)
saver_cm = SqliteSaver.from_conn_string(tempfile.mkdtemp() + "/course.sqlite")
app = g.compile(checkpointer=saver_cm.__enter__())
config = {"configurable": {"thread_id": "browser"}}
app.invoke({"topic": "t", "items": [], "verdict": ""}, config)["__interrupt__"][0].value'''),
    new_code_cell("GraphDrawing(app)"),
    new_code_cell("LineageGraph(app, config)"),
    new_code_cell("LineageGraph(app, config).widget()"),
    new_code_cell("ChannelVersionTable(app, config)"),
    new_code_cell("VersionsSeenMatrix(app, config)"),
    new_code_cell("SuperStepPlayer(app, config).widget()"),
    new_code_cell("HITLPanel(app, config).widget()"),
    new_code_cell("StorageView(app, config)"),
]

if __name__ == "__main__":
    for i, cell in enumerate(CELLS):
        cell.id = f"cell-{i}"  # stable ids: regenerating gives the same file
    nb = new_notebook(cells=CELLS, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, Path(__file__).with_name("viewers.ipynb"))
