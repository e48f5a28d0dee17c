"""HITLPanel: answer a thread's pending interrupts and watch the lineage grow.

A thin view of ``Studio``: it lists each pending interrupt's value with approve / reject / edit,
and a "continue" button when a breakpoint stopped the thread. Each answer goes through
``Studio.answer``, which re-reads the thread first: a thread with nothing pending, or whose head
moved since the panel was drawn, gets no answer, and the panel says so instead. ``Command`` comes
from the graph's own package, so this works for LangGraph and lgcheckpoint graphs.
Next: ``storage.py``.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from lgcheckpoint.viz.history import short
from lgcheckpoint.viz.lineage import LineageGraph
from lgcheckpoint.viz.answers import Refused, command_factory_for, parse_answer
from lgcheckpoint.viz.studio import Studio

__all__ = ["HITLPanel", "command_factory_for", "parse_answer"]


class HITLPanel:
    """Pending interrupts of a thread with approve / reject / edit controls that resume it."""

    def __init__(self, graph: Any, config: dict, command_factory: Callable[..., Any] | None = None,
                 approve: Any = "approve", reject: Any = "reject"):
        if not hasattr(graph, "invoke"):
            raise TypeError("HITLPanel needs a compiled graph with a checkpointer (it resumes it)")
        self.graph, self.config = graph, config
        self.studio = Studio(graph, config, command_factory=command_factory, approve=approve,
                             reject=reject)
        self.command_factory = self.studio.command_factory
        self.approve_value, self.reject_value = approve, reject
        self.lineage = LineageGraph(self.studio.history)
        self.last_result: Any = None

    @property
    def interrupts(self) -> list[Any]:
        """Interrupts saved on the head checkpoint (as last read) and not yet answered."""
        return self.studio.pending

    def _after(self, result: Any) -> Any:
        self.last_result = result
        self.lineage.history = self.studio.history
        return result

    def resume(self, answer: Any, interrupt_id: str | None = None,
               expected_head: str | None = None) -> Any:
        """Resume the thread with one answer; ``Refused`` (a ValueError) when none is pending."""
        pending = self.studio.pending
        if interrupt_id is None and len(pending) > 1:  # the old default: the first one
            interrupt_id = getattr(pending[0], "id", None)
        try:
            return self._after(self.studio.answer(answer, interrupt_id, expected_head))
        finally:  # a refusal re-read the thread too: show what is there now
            self.lineage.history = self.studio.history

    @property
    def paused_before(self) -> list[str]:
        """Nodes a breakpoint (interrupt_before) stopped in front of: nothing to answer."""
        return self.studio.breakpoint_stop

    def proceed(self, expected_head: str | None = None) -> Any:
        """Continue a thread paused by a breakpoint (the graph's own breakpoints stay set)."""
        expected = expected_head or self.studio.drawn_head
        self.studio.reload()
        if not self.studio.breakpoint_stop:
            self.studio.message = ("refused: the thread is not paused in front of a node. "
                                   "Nothing was written.")
            raise Refused(self.studio.message)
        try:
            return self._after(self.studio.run(expected_head=expected))
        finally:
            self.lineage.history = self.studio.history

    def __repr__(self) -> str:
        return f"HITLPanel({len(self.interrupts)} pending interrupt(s))"

    def _repr_html_(self) -> str:
        items = "".join(f"<li><code>{html.escape(short(getattr(i, 'value', i), 200))}</code></li>"
                        for i in self.interrupts) or "<li>no pending interrupt</li>"
        return (f"<div class='lgc-hitl'><b>Pending interrupts</b><ul>{items}</ul>"
                "<i>Run this in a live kernel and use .widget() to answer.</i></div>")

    def png(self) -> bytes:
        """The lineage with the waiting checkpoint marked: what a saved notebook shows."""
        return self.lineage.png()

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/html": self._repr_html_(), "text/plain": repr(self)}
        try:
            bundle["image/png"] = self.png()
        except RuntimeError:  # no Graphviz: the HTML list still says what is pending
            pass
        return bundle

    def widget(self):
        """One row of controls per interrupt, a status line, and the lineage that refreshes."""
        import ipywidgets as w

        from lgcheckpoint.viz.widgets import viewer_box

        status = w.HTML()
        status.add_class("lgc-hitl-status")
        lineage = self.lineage.widget()
        rows = w.VBox()
        drawn = {"head": self.studio.drawn_head}  # what the rows were drawn from

        def refused(text: str) -> str:
            return f"<span style='color:#b00'>{html.escape(text)}</span>"

        def answer(value: Any, interrupt_id: str | None, row_head: str | None):
            if row_head != drawn["head"]:  # a double click's second event: its row is gone
                status.value += html.escape(" (a second click on an answered question was "
                                            "ignored)")
                return
            try:
                if interrupt_id is None:
                    result = self.proceed(drawn["head"])
                else:
                    result = self.resume(value(), interrupt_id, drawn["head"])
                status.value = (f"resumed with {html.escape(short(value()))}: "
                                f"{html.escape(short(result, 120))}")
            except Refused as refusal:
                status.value = refused(str(refusal))
            except Exception as error:  # noqa: BLE001 - show the user, keep the panel alive
                status.value = refused(repr(error))
            try:
                lineage.reload()
                draw()
            except Exception as error:  # noqa: BLE001 - ipywidgets would swallow it
                status.value += refused(f"; redrawing: {error!r}")

        def typed(text: str) -> Any:
            if not text.strip():
                raise Refused("refused: type an answer in the edit box first. Nothing was "
                              "written.")
            return parse_answer(text)

        def row(interrupt: Any):
            iid, row_head = getattr(interrupt, "id", ""), drawn["head"]
            # empty, not the question: sending it unchanged must not answer with the question
            text = w.Text(value="", description="edit", layout=w.Layout(width="100%"),
                          placeholder="your own answer (JSON or text), then send edit",
                          style={"description_width": "initial"})
            buttons = [w.Button(description="approve", button_style="success"),
                       w.Button(description="reject", button_style="danger"),
                       w.Button(description="send edit")]
            buttons[0].on_click(lambda _: answer(lambda: self.approve_value, iid, row_head))
            buttons[1].on_click(lambda _: answer(lambda: self.reject_value, iid, row_head))
            buttons[2].on_click(lambda _: answer(lambda: typed(text.value), iid, row_head))
            asked = short(getattr(interrupt, "value", interrupt), 200)
            label = w.HTML(f"<code>{html.escape(asked)}</code>")
            return w.VBox([label, w.HBox(buttons), text])

        def paused_row(nodes: list[str]):
            go = w.Button(description="continue", button_style="primary")
            go.on_click(lambda _: answer(lambda: None, None, drawn["head"]))
            return w.HBox([w.HTML(f"paused before {html.escape(', '.join(nodes))}"), go])

        def draw():
            drawn["head"] = self.studio.drawn_head
            rows.children = ([row(i) for i in self.interrupts]
                             or ([paused_row(self.paused_before)] if self.paused_before else [])
                             or [w.HTML("no pending interrupt")])

        def clear(_):  # a new selection: the last refusal no longer applies to what is shown
            status.value = ""

        lineage.children[0].observe(clear, names="selected")
        draw()
        panel = viewer_box("HITLPanel", [rows, status, lineage], static=self.png)
        panel.add_class("lgc-hitl")
        return panel

