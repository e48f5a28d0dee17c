"""Studio: drive a live thread one super-step at a time — step, break, fork, replay, answer.

Every action is one ordinary call on the compiled graph, so the thread's history is exactly what
the same calls would write without the studio:

    step        graph.invoke(input | None, config, interrupt_before=B, interrupt_after=<every node>)
    run         graph.invoke(input | None, config, interrupt_before=B, interrupt_after=A)
    answer      graph.invoke(Command(resume=value | {interrupt_id: value}), config, ...B, A)
    replay      graph.invoke(None, <config of checkpoint k>, ...B, A)
    fork        graph.update_state(<config of checkpoint k>, values, as_node=...)

``B`` and ``A`` are the breakpoints set on nodes (before / after), passed per call. Before acting,
the studio re-reads the thread; when the action no longer applies (nothing pending, the head moved
since the view was drawn, the thread has ended) it raises ``Refused`` and writes nothing.
The drawing reuses the viewers: the topology with the frame of the selected checkpoint
(``player.make_frame``), the lineage (``lineage.lineage_dot``) paged to the newest checkpoints,
and the ``versions_seen`` rows behind ``next`` (``versions.VersionsSeenMatrix``).
The widget lives in ``studio_widget.py``. Next: ``studio_widget.py``.
"""

from __future__ import annotations

import html
import io
import textwrap
from collections.abc import Callable
from typing import Any

from lgcheckpoint.viz.answers import Refused, command_factory_for, parse_answer
from lgcheckpoint.viz.history import (
    History,
    Step,
    load_history,
    resolve_saver,
    short,
    thread_config,
)
from lgcheckpoint.viz.lineage import describe, lineage_dot
from lgcheckpoint.viz.player import Frame, make_frame
from lgcheckpoint.viz.render import dot_to_png, dot_to_svg, missing_engine_html, quote
from lgcheckpoint.viz.topology import graph_topology, topology_dot
from lgcheckpoint.viz.palette import MAX_WIDTH_IN
from lgcheckpoint.viz.versions import VersionsSeenMatrix, header_html

__all__ = ["Refused", "Studio", "command_factory_for", "parse_answer"]

BREAK_COLOUR = "#7c3aed"  # violet: a breakpoint on this node


class Studio:
    """A compiled graph and one thread, with the actions of a debugger and their drawings."""

    def __init__(self, graph: Any, config: dict, input: Any = None, page_size: int = 30,
                 command_factory: Callable[..., Any] | None = None, approve: Any = "approve",
                 reject: Any = "reject"):
        if not (hasattr(graph, "invoke") and hasattr(graph, "get_graph")):
            raise TypeError("Studio needs a compiled graph (it runs it); "
                            f"got {type(graph).__name__}")
        resolve_saver(graph)  # a clear error now if the graph has no checkpointer
        self.graph, self.config, self.input = graph, config, input
        self.thread = thread_config(config)
        self.page_size = page_size
        self.approve_value, self.reject_value = approve, reject  # what the two buttons send
        self.command_factory = command_factory or command_factory_for(graph)
        self.topology = graph_topology(graph)
        self.nodes = [n for n in getattr(graph, "nodes", {}) if n != "__start__"]
        self.break_before = self._compiled_breaks("interrupt_before_nodes")
        self.break_after = self._compiled_breaks("interrupt_after_nodes")
        self.selected: str | None = None  # checkpoint key; None = follow the head
        self.message = ""
        self.last_result: Any = None
        self.history: History = self.reload()

    def _compiled_breaks(self, attribute: str) -> set[str]:
        """Start from the breakpoints the graph was compiled with (``"*"`` = every node)."""
        nodes = getattr(self.graph, attribute, None) or ()
        return set(self.nodes) if nodes == "*" else set(nodes)

    # --- reading the thread -------------------------------------------------------------------
    def reload(self) -> History:
        """Re-read every checkpoint of the thread (what the view draws)."""
        self.read_mark = self.head_mark()  # read first: a write in between makes it look stale
        self.history = load_history(self.graph, self.thread, graph=self.graph)
        if self.selected and not self._has(self.selected):
            self.selected = None
        return self.history

    def _has(self, key: str) -> bool:
        try:
            self.history[key]
            return True
        except KeyError:
            return False

    def head_mark(self) -> tuple[str, int] | None:
        """The newest checkpoint's id and its number of pending writes, read from the saver now.
        What an action depends on changed iff this did: checkpoints are immutable, writes only
        add, and every action acts on the head (or on an old, immutable checkpoint)."""
        latest = resolve_saver(self.graph).get_tuple({
            "configurable": {**self.thread["configurable"], "checkpoint_ns": ""}})
        return (latest.checkpoint["id"], len(latest.pending_writes or ())) if latest else None

    @property
    def head(self) -> Step | None:
        return self.history.head

    @property
    def drawn_head(self) -> str | None:
        """The head's checkpoint id as last read (and drawn)."""
        return self.head.checkpoint_id if self.head else None

    @property
    def pending(self) -> list[Any]:
        """Interrupts waiting for an answer on the head (a task that finished is answered)."""
        head = self.head
        return [] if head is None else [i for t in head.tasks if not t.regular
                                        for i in t.interrupts]

    @property
    def ended(self) -> bool:
        """Nothing left to run: an empty thread, or a head with no next node."""
        return self.head is None or not self.head.waiting

    @property
    def breakpoint_stop(self) -> list[str]:
        """Nodes the head waits for with nothing to answer (a breakpoint or step stopped there)."""
        return [] if self.head is None or self.pending else self.head.waiting

    # --- breakpoints --------------------------------------------------------------------------
    def toggle_breakpoint(self, node: str, when: str = "before") -> bool:
        """Set or clear a breakpoint; returns whether it is now set."""
        if node not in self.nodes:
            raise ValueError(f"no node {node!r}; the graph has {', '.join(self.nodes)}")
        if when not in ("before", "after"):
            raise ValueError('when must be "before" or "after"')
        points = self.break_before if when == "before" else self.break_after
        points.symmetric_difference_update({node})
        return node in points

    def _breaks(self, one_step: bool) -> dict:
        # one step = stop after whatever ran, __start__ (which maps the input) included
        after = ["__start__", *self.nodes] if one_step else sorted(self.break_after)
        return {"interrupt_before": sorted(self.break_before), "interrupt_after": list(after)}

    # --- the actions: re-read, refuse what no longer applies, make one call ---------------------
    def _check(self, expected_head: str | None, why_not: Callable[[], str | None]) -> None:
        """Re-read the thread; refuse (writing nothing) if the action no longer applies."""
        drawn = self.drawn_head if expected_head is None else expected_head
        if self.head_mark() != self.read_mark:  # a 1,000-checkpoint thread is read only if needed
            self.reload()
        moved = self.drawn_head != drawn
        reason = why_not()
        if moved:
            was = next((s.key for s in self.history.steps if s.checkpoint_id == drawn), "none")
            note = (f"the thread moved on since this view was drawn (head was {was}, now "
                    f"{self.head.key if self.head else 'none'}); the view is redrawn")
            reason = f"{reason}; {note}" if reason else note + ": check it and try again"
        if reason:
            self.message = f"refused: {reason}. Nothing was written."
            raise Refused(self.message)

    def _why_not_continue(self, input: Any) -> str | None:
        if self.pending:
            return "answer the pending interrupt first (continuing would only ask again)"
        if input is None and self.ended:
            return ("the thread has ended" if self.head else "the thread is empty") + \
                ": give an input to start a run"
        return None

    def _invoke(self, value: Any, config: dict, one_step: bool, action: str) -> Any:
        self.last_result = self.graph.invoke(value, config, **self._breaks(one_step))
        self.reload()
        self.selected = None
        self.message = f"{action}: {self.outcome()}"
        return self.last_result

    def step(self, input: Any = None, expected_head: str | None = None) -> Any:
        """Run exactly one super-step (``input`` starts a run on an empty or ended thread)."""
        self._check(expected_head, lambda: self._why_not_continue(input))
        return self._invoke(self._start_value(input), self.config, True, "step")

    def run(self, input: Any = None, expected_head: str | None = None) -> Any:
        """Run until a breakpoint, an interrupt or the end."""
        self._check(expected_head, lambda: self._why_not_continue(input))
        return self._invoke(self._start_value(input), self.config, False, "run")

    def _start_value(self, input: Any) -> Any:
        """Continue the head (None) unless the thread is empty or ended and an input is given."""
        return input if self.ended else None

    def answer(self, value: Any, interrupt_id: str | None = None,
               expected_head: str | None = None) -> Any:
        """Resume the pending interrupt ``interrupt_id`` (default: the only one) with ``value``."""
        def why_not():
            ids = [getattr(i, "id", None) for i in self.pending]
            if not ids:
                return "nothing to answer: the thread has no pending interrupt"
            if interrupt_id is not None and interrupt_id not in ids:
                return f"interrupt {interrupt_id} is no longer pending (pending: {', '.join(ids)})"
            if interrupt_id is None and len(ids) > 1:
                return f"{len(ids)} interrupts are pending: say which one (interrupt_id)"
            return None

        self._check(expected_head, why_not)
        several = len(self.pending) > 1
        resume = {interrupt_id: value} if several else value
        return self._invoke(self.command_factory(resume=resume), self.config, False,
                            f"answered {short(value)}")

    def replay(self, key: str, one_step: bool = False, expected_head: str | None = None) -> Any:
        """Run again from an older checkpoint: the new checkpoints form a branch."""
        self._check(expected_head, lambda: None if self._has(key) else f"no checkpoint {key}")
        return self._invoke(None, self.history[key].config, one_step, f"replayed from {key}")

    def fork(self, key: str, values: Any, as_node: str | None = None,
             expected_head: str | None = None) -> dict:
        """Write ``values`` on checkpoint ``key`` as if ``as_node`` returned them: a new branch."""
        def why_not():
            if not self._has(key):
                return f"no checkpoint {key}"
            if as_node is not None and as_node not in self.nodes + ["__start__"]:
                return f"as_node {as_node!r} is not a node ({', '.join(self.nodes)})"
            return None

        self._check(expected_head, why_not)
        config = self.graph.update_state(self.history[key].config, values, as_node=as_node)
        self.reload()
        self.selected = None
        self.message = f"forked {key}: {self.outcome()}"
        return config

    def outcome(self) -> str:
        """Where the thread stands now, in one line."""
        head = self.head
        if head is None:
            return "the thread is empty"
        where = f"head {head.key} (step {head.step})"
        if self.pending:
            asked = "; ".join(short(getattr(i, "value", i), 60) for i in self.pending)
            return f"{where} waits for an answer: {asked}"
        if head.waiting:
            marks = [n + (" (breakpoint)" if n in self.break_before else "") for n in head.waiting]
            return f"{where}, next: {', '.join(marks)}"
        return f"{where}, the run has ended"

    # --- what is drawn ------------------------------------------------------------------------
    def select(self, key: str | None) -> Step | None:
        """Show checkpoint ``key`` (None: the head)."""
        if key is not None and not self._has(key):
            raise KeyError(f"no checkpoint {key!r}")
        self.selected = key
        return self.shown

    @property
    def shown(self) -> Step | None:
        return self.history[self.selected] if self.selected else self.head

    def move(self, offset: int) -> Step | None:
        """Select the next (+1) or previous (-1) checkpoint in time."""
        if not self.history.steps:
            return None
        index = min(max((self.shown.index if self.shown else 0) + offset, 0),
                    len(self.history) - 1)
        return self.select(self.history.steps[index].key)

    def frame(self) -> Frame | None:
        return make_frame(self.history, self.shown) if self.shown else None

    def topology_dot(self) -> str:
        """The graph with the shown checkpoint's frame, plus the breakpoints in violet."""
        frame = self.frame()
        if frame is None:
            dot = topology_dot(self.topology, caption="no checkpoint yet")
        else:
            step = frame.step
            caption = f"{step.key} · step {step.step} · {step.source}" + \
                (" · HEAD" if step.is_head else "")
            dot = topology_dot(self.topology, running=frame.ran, next_nodes=frame.step.next,
                               fired=frame.fired, caption=caption)
        marks = []  # later attributes in DOT override earlier ones: add the breakpoint marks
        for node in self.nodes:
            when = [w for w, points in (("before", self.break_before),
                                        ("after", self.break_after)) if node in points]
            if when:
                marks.append(f'  {quote(node)} [peripheries=2, color="{BREAK_COLOUR}", '
                             f'xlabel={quote("break " + "+".join(when))}, '
                             f'fontcolor="{BREAK_COLOUR}"];')
        return dot.rstrip().removesuffix("}") + "\n".join(marks) + "\n}\n"

    def page(self, page: int = 0) -> list[Step]:
        """Checkpoints on lineage page ``page`` (0 = the newest ``page_size``)."""
        steps = self.history.steps
        end = max(len(steps) - page * self.page_size, 0)
        return steps[max(end - self.page_size, 0):end]

    @property
    def pages(self) -> int:
        return max(1, -(-len(self.history) // self.page_size))

    def lineage_dot(self, page: int = 0) -> str:
        """The lineage of one page; older checkpoints are folded into one box."""
        steps = self.page(page)
        window = History(self.history.thread_id, "", steps, self.history.node_triggers,
                         self.history.channels)
        dot = lineage_dot(window, selected=self.shown.key if self.shown else None,
                          subgraphs=False)
        older = steps[0].index if steps else 0
        newer = len(self.history) - (steps[-1].index + 1 if steps else 0)
        folds = []
        if older:
            folds.append(f'  older [shape=note, label="{older} older checkpoint(s)\\n'
                         f'(page {page + 2}/{self.pages})"];')
            folds += [f"  older -> {s.key} [style=dotted];" for s in steps
                      if s.parent and self.history[s.parent].index < older]
        if newer:
            folds.append(f'  newer [shape=note, label="{newer} newer checkpoint(s)"];')
        return dot.rstrip().removesuffix("}") + "\n".join(folds) + "\n}\n"

    def matrix(self) -> VersionsSeenMatrix | None:
        return VersionsSeenMatrix(self.history, key=self.shown.key) if self.shown else None

    def frame_text(self) -> str:
        """The shown checkpoint in words: what ran, what it wrote, what moved, what runs next."""
        frame = self.frame()
        if frame is None:
            return "no checkpoint yet: step or run to start the thread"
        step = frame.step
        lines = [f"{step.key} · step {step.step} · {step.source}"
                 + (" · HEAD" if step.is_head else ""),
                 "ran: " + (", ".join(frame.ran) or "-")]
        lines += [f"  {task} wrote {channel} = {short(value, 60)}"  # sorted: savers differ
                  for task, channel, value in sorted(frame.writes, key=lambda w: w[:2])]
        lines.append("moved: " + (", ".join(f"{c} {a}→{b}" for c, a, b in frame.moved) or "-"))
        for node, why in sorted(step.triggered.items()):
            reasons = ", ".join(f"{t.channel} {t.current} > seen {t.seen}" for t in why)
            lines.append(f"next: {node} because {reasons}")
        lines += [f"next: {node} because Send" for node in step.sends]
        lines += [f"INTERRUPT in {t.name}: {short(i.value if hasattr(i, 'value') else i, 80)}"
                  for t in step.tasks for i in t.interrupts]
        return "\n".join(lines)

    def details(self) -> str:
        return describe(self.shown) if self.shown else ""

    def versions_html(self) -> str:
        """The versions_seen rows behind ``next``: seen / current per trigger channel."""
        m = self.matrix()
        if m is None:
            return ""
        # only the columns that say something: a trigger channel or one a node has seen
        channels = [c for c in m.channels if any(c in m.triggers[n] or m.seen[n][c] is not None
                                                 for n in m.nodes)]
        head = "".join(f"<th>{header_html(c)}</th>" for c in channels)  # may wrap at ':'
        rows = []
        for node in m.nodes:
            cells = []
            for c in channels:
                seen = m.seen[node][c]
                text = f"{seen or 0}/{m.current[c]}" if seen is not None or c in m.triggers[node] \
                    else ""
                mark = " fires" if (node, c) in m.fires else ""
                cells.append(f"<td class='lgc-cell{mark}' style='background:{m.colour(node, c)}'>"
                             f"{html.escape(text)}</td>")
            nxt = " ▶" if node in m.step.next else ""
            rows.append(f"<tr><th>{html.escape(node)}{nxt}</th>{''.join(cells)}</tr>")
        return (f"<div class='lgc-scroll'><table class='lgc-table lgc-seen'><caption>"
                f"versions_seen at {m.step.key}: seen/current; red = runs next</caption>"
                f"<thead><tr><th>node</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody>"
                "</table></div>")

    def table_html(self, page: int = 0) -> str:
        """Channel versions of the page's checkpoints; a cell is marked when its version moved."""
        channels = self.history.channels
        head = "".join(f"<th>{header_html(c)}</th>" for c in channels)
        rows = []
        for s in self.page(page):
            before = self.history[s.parent].channel_versions if s.parent else {}
            cells = "".join(
                f"<td class='changed'>{s.channel_versions[c]}</td>"
                if c in s.channel_versions and before.get(c) != s.channel_versions[c]
                else f"<td>{s.channel_versions.get(c, '')}</td>" for c in channels)
            mark = " class='shown'" if self.shown and s.key == self.shown.key else ""
            rows.append(f"<tr{mark}><th>{s.key} · {s.step} · {s.source}</th>{cells}</tr>")
        return (f"<div class='lgc-scroll'><table class='lgc-table lgc-versions'><thead><tr>"
                f"<th>checkpoint</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
                "</div>")

    # --- static views -------------------------------------------------------------------------
    def svg(self, which: str = "topology", page: int = 0) -> str:
        dot = self.topology_dot() if which == "topology" else self.lineage_dot(page)
        try:
            return dot_to_svg(dot)
        except RuntimeError as error:
            return missing_engine_html(error)

    def png(self) -> bytes:
        """Topology frame and lineage side by side, the frame's text under them (for files and
        untrusted notebooks, where a widget does not render)."""
        from matplotlib.figure import Figure
        from matplotlib.image import imread

        images = [imread(io.BytesIO(dot_to_png(d)), format="png")
                  for d in (self.topology_dot(), self.lineage_dot())]
        widest = int(MAX_WIDTH_IN * 100)  # px a notebook's output area shows without scaling
        if sum(i.shape[1] for i in images) + 43 > widest:  # side by side is too wide
            images = [stacked(images)]
        height = max(i.shape[0] for i in images) / 72 + 0.4
        width = max(sum(i.shape[1] for i in images) / 72 + 0.6, 7)
        columns = int((width - 0.4) * 72 / 8.5)  # 14 px monospace is ~8.5 px a character
        lines = (self.frame_text() + "\n" + self.outcome()).splitlines()
        text = "\n".join(textwrap.fill(line, columns, subsequent_indent="    ") for line in lines)
        text_h = 0.25 * (text.count("\n") + 1) + 0.3
        fig = Figure(figsize=(width, height + text_h), facecolor="white")
        x = 0.02
        for image in images:
            w, h = image.shape[1] / 72 / width, image.shape[0] / 72 / (height + text_h)
            ax = fig.add_axes((x, 1 - h - 0.01, w, h))
            ax.imshow(image)
            ax.axis("off")
            x += w + 0.02
        fig.text(0.02, 0.02, text, family="monospace", fontsize=14, va="bottom")  # body-text size
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=72)
        return buf.getvalue()

    def __repr__(self) -> str:
        return (f"Studio(thread {self.history.thread_id!r}: {len(self.history)} checkpoints, "
                f"{self.outcome()})")

    def _repr_mimebundle_(self, include=None, exclude=None):
        try:
            return {"image/png": self.png(), "text/plain": repr(self)}
        except RuntimeError as error:
            return {"text/html": missing_engine_html(error), "text/plain": repr(self)}

    def widget(self, keys_everywhere: bool = False):
        """The live studio: controls, topology, lineage, tables, forms (ipywidgets).
        ``keys_everywhere``: s / r / n / p work anywhere on the page (a Voilà app)."""
        from lgcheckpoint.viz.studio_widget import studio_widget

        return studio_widget(self, keys_everywhere)


def stacked(images: list) -> Any:
    """Images one above the other on white (pixel arrays of the same kind): the narrow layout."""
    import numpy

    width = max(i.shape[1] for i in images)
    return numpy.vstack([numpy.pad(i, ((0, 20), (0, width - i.shape[1]), (0, 0)),
                                   constant_values=1.0) for i in images])
