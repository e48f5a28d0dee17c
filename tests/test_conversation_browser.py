"""The conversation viewer in a real browser: JupyterLab in headless Debian chromium. The
notebook is run once; the transcript renders, markup in a message stays text (the <script> in it
is shown, never run) and the studio's frame shows the head's conversation too. In the page's
theme and again after switching the page to the other (light, Dark), every text of the
transcript is readable (contrast >= 4.5, >= 12 px, measured as tests/test_browser.py measures).
Screenshots: test-artifacts/conversation-{light,dark}.png."""

from __future__ import annotations


import pytest

from tests.browser_checks import keep_screenshot, switch_theme, themes_in_order
from tests.test_browser import (
    ARGS, ARTIFACTS, CHROMIUM, READABILITY_JS, jupyterlab, open_notebook,
)

pytestmark = pytest.mark.browser

CELL = """\
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import START, StateGraph
from lgcheckpoint.messages import MessagesState
from lgcheckpoint.viz import Conversation

def chat(state):
    return {"messages": [
        AIMessage("", id="ai-1", tool_calls=[{"name": "add", "args": {"a": 3}, "id": "call-1"}]),
        ToolMessage("7", tool_call_id="call-1", id="tool-1"),
        AIMessage("<b>7</b> <script>window.pwned = 1</script>", id="ai-2")]}

builder = StateGraph(MessagesState)
builder.add_node("chat", chat)
builder.add_edge(START, "chat")
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "1"}}
graph.invoke({"messages": [HumanMessage("add <i>3</i>", id="h-1")]}, config)
graph.update_state(config, {"messages": [RemoveMessage(id="h-1")]})
Conversation(graph, config, key="c2")"""
STUDIO_CELL = """\
from lgcheckpoint.viz import Studio
Studio(graph, config).widget()"""


@pytest.fixture
def lab(tmp_path):
    """JupyterLab serving a notebook that shows a Conversation; yields its URL."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL),
                                          nbformat.v4.new_code_cell(STUDIO_CELL)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "conversation.ipynb"
    nbformat.write(nb, path)
    yield from jupyterlab(tmp_path, {"conversation": path})


def test_conversation_in_jupyterlab(lab):
    """Run once; the transcript's readability and a screenshot in both themes, switched in the
    page."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 2400})
            open_notebook(page, lab, "conversation")
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_selector(".lgc-chat .lgc-turn.lgc-removed", timeout=60000)
            page.wait_for_selector(".lgc-studio .lgc-frame .lgc-chat", timeout=60000)
            page.wait_for_timeout(500)
            for theme in themes_in_order(page):
                switch_theme(page, theme)
                keep_screenshot(page, ARTIFACTS / f"conversation-{theme}.png", full_page=True)
                found = page.evaluate(READABILITY_JS)
                mine = [t for t in found["texts"]  # the transcripts' texts (the studio's: its own)
                        if any(c in t["where"] for c in ("lgc-chat", "lgc-turn", "lgc-content"))]
                low = [t for t in mine if t["ratio"] < 4.5 or t["size"] < 12]
                assert len(mine) >= 8 and not low, (theme, low)
            chat = page.locator(".lgc-chat").first
            text = chat.inner_text()
            assert "<script>window.pwned = 1</script>" in text and "add <i>3</i>" in text
            assert page.evaluate("() => window.pwned") is None  # shown, never run
            assert chat.locator(".lgc-content :is(script, b, i)").count() == 0
            roles = chat.locator(".lgc-turn").evaluate_all(
                "(cards) => cards.map(c => c.className)")
            assert roles == ["lgc-turn lgc-human lgc-removed", "lgc-turn lgc-ai",
                             "lgc-turn lgc-tool", "lgc-turn lgc-ai"], roles
            studio_chat = page.locator(".lgc-studio .lgc-frame .lgc-chat").inner_text()
            assert "<script>window.pwned = 1</script>" in studio_chat  # the head: h-1 is gone
        finally:
            browser.close()
