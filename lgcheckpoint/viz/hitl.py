"""HITLPanel: answer a thread's pending interrupts and watch the lineage grow.

An interrupted task saved an ``__interrupt__`` write on the head checkpoint. The panel lists each
interrupt's value and offers approve / reject / edit; each resumes the graph with
``Command(resume=...)`` (one interrupt: the answer itself; several: ``{interrupt_id: answer}``).
``Command`` comes from the graph's own package, so this works for LangGraph and lgcheckpoint graphs
without importing either. Next: ``storage.py``.
"""

from __future__ import annotations

import html
import importlib
import json
from typing import Any, Callable

from lgcheckpoint.viz.history import short
from lgcheckpoint.viz.lineage import LineageGraph


def command_factory_for(graph: Any) -> Callable[..., Any]:
    """``Command`` from the package that built ``graph`` (langgraph.types, lgcheckpoint.types)."""
    root = type(graph).__module__.split(".")[0]
    try:
        return importlib.import_module(f"{root}.types").Command
    except (ImportError, AttributeError) as error:
        raise TypeError(f"cannot find {root}.types.Command for {type(graph).__name__}; "
                        "pass command_factory=YourCommand") from error


def parse_answer(text: str) -> Any:
    """An edited answer: JSON when it parses (numbers, dicts, true/false), else the plain text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class HITLPanel:
    """Pending interrupts of a thread with approve / reject / edit controls that resume it."""

    def __init__(self, graph: Any, config: dict, command_factory: Callable[..., Any] | None = None,
                 approve: Any = "approve", reject: Any = "reject"):
        if not hasattr(graph, "invoke"):
            raise TypeError("HITLPanel needs a compiled graph with a checkpointer (it resumes it)")
        self.graph, self.config = graph, config
        self.command_factory = command_factory or command_factory_for(graph)
        self.approve_value, self.reject_value = approve, reject
        self.lineage = LineageGraph(graph, config)
        self.last_result: Any = None

    @property
    def interrupts(self) -> list[Any]:
        """Interrupts saved on the head checkpoint and not yet answered."""
        head = self.lineage.history.head
        if head is None:
            return []
        # a task that finished after its interrupt saved regular writes: that one is answered
        return [i for t in head.tasks if not t.regular for i in t.interrupts]

    def resume(self, answer: Any, interrupt_id: str | None = None) -> Any:
        """Resume the thread with one answer; return what the graph returned."""
        pending = self.interrupts
        if not pending:
            raise ValueError("nothing to answer: the thread has no pending interrupt")
        value = {interrupt_id or pending[0].id: answer} if len(pending) > 1 else answer
        self.last_result = self.graph.invoke(self.command_factory(resume=value), self.config)
        self.lineage.refresh()
        return self.last_result

    @property
    def paused_before(self) -> list[str]:
        """Nodes a static breakpoint (interrupt_before) stopped in front of: nothing to answer."""
        head = self.lineage.history.head
        return [] if head is None or self.interrupts else head.waiting

    def proceed(self) -> Any:
        """Continue a thread paused by a breakpoint: ``invoke(None, config)``."""
        if not self.paused_before:
            raise ValueError("the thread is not paused in front of a node")
        self.last_result = self.graph.invoke(None, self.config)
        self.lineage.refresh()
        return self.last_result

    def __repr__(self) -> str:
        return f"HITLPanel({len(self.interrupts)} pending interrupt(s))"

    def _repr_html_(self) -> str:
        items = "".join(f"<li><code>{html.escape(short(getattr(i, 'value', i), 200))}</code></li>"
                        for i in self.interrupts) or "<li>no pending interrupt</li>"
        return (f"<div class='lgc-hitl'><b>Pending interrupts</b><ul>{items}</ul>"
                "<i>Run this in a live kernel and use .widget() to answer.</i></div>")

    def widget(self):
        """One row of controls per interrupt, a status line, and the lineage that refreshes."""
        import ipywidgets as w

        from lgcheckpoint.viz.widgets import viewer_box

        status = w.HTML()
        status.add_class("lgc-hitl-status")
        lineage = self.lineage.widget()
        rows = w.VBox()

        def answer(value: Any, interrupt_id: str | None):
            try:
                result = self.resume(value, interrupt_id) if interrupt_id is not None \
                    else self.proceed()
                status.value = (f"resumed with {html.escape(short(value))}: "
                                f"{html.escape(short(result, 120))}")
            except Exception as error:  # noqa: BLE001 - show the user, keep the panel alive
                status.value = f"<span style='color:#b00'>{html.escape(repr(error))}</span>"
            lineage.reload()
            draw()

        def row(interrupt: Any):
            iid = getattr(interrupt, "id", "")
            text = w.Text(value=json.dumps(getattr(interrupt, "value", None), default=str),
                          description="edit")
            buttons = [w.Button(description="approve", button_style="success"),
                       w.Button(description="reject", button_style="danger"),
                       w.Button(description="send edit")]
            buttons[0].on_click(lambda _: answer(self.approve_value, iid))
            buttons[1].on_click(lambda _: answer(self.reject_value, iid))
            buttons[2].on_click(lambda _: answer(parse_answer(text.value), iid))
            asked = short(getattr(interrupt, "value", interrupt), 200)
            label = w.HTML(f"<code>{html.escape(asked)}</code>")
            return w.VBox([label, w.HBox(buttons), text])

        def paused_row(nodes: list[str]):
            go = w.Button(description="continue", button_style="primary")
            go.on_click(lambda _: answer(None, None))
            return w.HBox([w.HTML(f"paused before {html.escape(', '.join(nodes))}"), go])

        def draw():
            rows.children = ([row(i) for i in self.interrupts]
                             or ([paused_row(self.paused_before)] if self.paused_before else [])
                             or [w.HTML("no pending interrupt")])

        draw()
        panel = viewer_box("HITLPanel", [rows, status, lineage])
        panel.add_class("lgc-hitl")
        return panel
