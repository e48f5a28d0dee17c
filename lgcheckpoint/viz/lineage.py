"""The checkpoint lineage: every checkpoint of a thread as a DAG of parent edges.

A fork (update_state or invoke on an older checkpoint) gives a checkpoint a second child, so the
thread branches; branch 0 always ends at the head. Nodes are coloured by ``source`` and labelled
with step, updated channels and next nodes, never with raw uuids (c0..cN are chronological).
Next: ``versions.py`` shows the versions behind each label.
"""

from __future__ import annotations

import html
import textwrap
from typing import Any

from lgcheckpoint.viz.history import (
    ERROR_SOURCE, RETURN, VIEW_LIMIT, History, Step, load_history, short,
)
from lgcheckpoint.viz.palette import (
    SOURCE_FILLS,
    STRONG_BLUE,
    STRONG_ORANGE,
    STRONG_RED,
    WHITE,
)
from lgcheckpoint.viz.render import DotView, graph_header, quote

SOURCE_COLOURS = SOURCE_FILLS  # fill by source: input blue, loop grey, update green, fork violet
INTERRUPT_COLOUR, ERROR_COLOUR, SELECTED_COLOUR = STRONG_ORANGE, STRONG_RED, STRONG_BLUE


MAX_NODES = 120  # checkpoints drawn per namespace; older ones collapse into one box
MAX_SUBGRAPHS = 12  # subgraph namespaces drawn as clusters


def as_history(source: Any, config: dict | None = None, graph: Any = None) -> History:
    """Accept a History (as read, complete if you read it so), a saver or a compiled graph (the
    newest VIEW_LIMIT checkpoints: bounded work on a thread of any length)."""
    if isinstance(source, History):
        return source
    return load_history(source, config or {}, graph, limit=VIEW_LIMIT)


LABEL_WIDTH = 34  # characters per line of a checkpoint's label


def step_label(step: Step, max_channels: int = 4, ns_name: str = "") -> str:
    """What a reader needs at a glance: step, source, what changed, what runs next. A subgraph's
    checkpoints are named after it (``research.c0``) and never marked HEAD: the thread has one."""
    head = step.is_head and not ns_name
    key = f"{ns_name}.{step.key}" if ns_name else step.key
    lines = [("HEAD  " if head else "") + f"{key}  step {step.step}  {step.source}"]
    if step.updated_channels:
        shown = step.updated_channels[:max_channels]
        more = len(step.updated_channels) - len(shown)
        updated = "updated: " + ", ".join(shown) + (f" +{more}" if more else "")
        # narrow nodes, so that branches fit side by side; a channel name is never cut
        lines += textwrap.wrap(updated, LABEL_WIDTH, break_long_words=False)
    lines.append("next: " + (", ".join(step.next) or "-"))
    if head and step.waiting != step.next:  # some tasks of the step already finished
        lines.append("waiting: " + (", ".join(step.waiting) or "-"))
    for tw in step.tasks:
        for value in (v for c, v in tw.regular if c == RETURN):  # a @task call's saved result
            lines.append(f"{tw.name} returned {short(value, 16)}")
        if tw.interrupts:
            lines.append(f"INTERRUPT in {tw.name}")
        if tw.errors:  # a task that failed and later succeeded keeps its error write
            handled = tw.error_source is not None
            how = " (handled)" if handled else " (retried ok)" if tw.regular else ""
            lines.append(f"ERROR in {tw.name}{how}: {error_text(tw.errors[0])}")
    return "\n".join(lines)


def error_text(error: Any) -> str:
    """Errors are saved as text (LangGraph stores repr(exception)) or as exception objects."""
    return short(error if isinstance(error, str) else repr(error), 40)


def node_attrs(step: Step, selected: bool, ns_name: str = "") -> str:
    """Fill by source; a red border for errors, orange for interrupts, thick blue when selected,
    thick for the head (of the thread, not of a subgraph)."""
    fill = SOURCE_COLOURS.get(step.source, WHITE)
    attrs = [f"label={quote(step_label(step, ns_name=ns_name))}", f'fillcolor="{fill}"']
    if selected:
        attrs += [f'color="{SELECTED_COLOUR}"', "penwidth=4"]
    elif step.errors:
        attrs += [f'color="{ERROR_COLOUR}"', "penwidth=2.5"]
    elif step.interrupts:
        attrs += [f'color="{INTERRUPT_COLOUR}"', "penwidth=2.5"]
    if step.is_head and not selected and not ns_name:
        attrs += ["penwidth=3.5"]
    return ", ".join(attrs)


def steps_dot(steps: list[Step], prefix: str, selected: str | None, indent: str,
              truncated: bool = False, ns_name: str = "") -> list[str]:
    """Node and parent-edge lines for one namespace. An edge to a checkpoint's second (third…)
    child is dashed: it starts the newer branch, the first child continues the older one; an
    edge is labelled with the branch its child is on when that differs from its parent's. Only
    the newest MAX_NODES are drawn: the older ones (and any not read) become one box."""
    by_key = {s.key: s for s in steps}
    shown = steps[-MAX_NODES:]
    hidden = len(steps) - len(shown)
    lines = [f"{indent}{prefix}{s.key} [{node_attrs(s, prefix + s.key == selected, ns_name)}];"
             for s in shown]
    if hidden or truncated:
        text = (f"{hidden} older checkpoints not drawn" if hidden else "") + \
            ("\n(and older ones not read)" if truncated else "")
        lines.append(f'{indent}{prefix}older [label={quote(text.strip())}, style="dashed"];')
    first = shown[0].index if shown else 0
    for s in shown:
        parent = by_key.get(s.parent)
        if parent is not None and parent.index >= first:
            newer = parent.children.index(s.key) > 0  # children are in chronological order
            label = f'label="branch {s.branch}"' if parent.branch != s.branch or newer else ""
            attrs = ", ".join(a for a in ("style=dashed" if newer else "", label) if a)
            style = f" [{attrs}]" if attrs else ""
            lines.append(f"{indent}{prefix}{s.parent} -> {prefix}{s.key}{style};")
        elif s.parent is not None or (truncated and s is steps[0]):
            lines.append(f"{indent}{prefix}older -> {prefix}{s.key} [style=dashed];")
    return lines


def lineage_dot(history: History, selected: str | None = None, subgraphs: bool = True) -> str:
    """Deterministic DOT text for the lineage (same history -> same text)."""
    lines = graph_header("lineage")
    lines += steps_dot(history.steps, "", selected, "  ", history.truncated)
    ids = {s.checkpoint_id: s.key for s in history.steps[-MAX_NODES:]}
    namespaces = sorted(history.subgraphs.items())[-MAX_SUBGRAPHS:] if subgraphs else []
    for i, (ns, sub) in enumerate(namespaces):
        node = ns.split(":", 1)[0]
        lines += [f"  subgraph cluster_s{i} {{", f"    label={quote('subgraph ' + node)};",
                  '    style="dashed";']
        lines += steps_dot(sub.steps, f"s{i}", selected, "    ", sub.truncated, node)
        lines.append("  }")
        if sub.steps:  # the enclosing checkpoint the subgraph ran under
            parent_id = sub.steps[0].metadata.get("parents", {}).get(history.ns)
            if parent_id in ids:
                lines.append(f"  {ids[parent_id]} -> s{i}{sub.steps[0].key} [style=dotted];")
    lines.append("}")
    return "\n".join(lines) + "\n"


MAX_LISTED = 60  # channels listed in a checkpoint's details


def describe(step: Step) -> str:
    """A plain-text account of one checkpoint (what the lineage shows when you select it)."""
    out = [f"{step.key}: step {step.step}, source {step.source}, branch {step.branch}"
           + (", HEAD" if step.is_head else ""),
           f"parent: {step.parent or '-'}   children: {', '.join(step.children) or '-'}",
           "updated: " + (", ".join(step.updated_channels[:MAX_LISTED]) or "-"),
           "versions: " + " ".join(f"{c}={v}" for c, v in
                                   list(step.channel_versions.items())[:MAX_LISTED])]
    for node, why in sorted(step.triggered.items()):
        reasons = ", ".join(f"{t.channel} {t.current} > seen {t.seen}" for t in why)
        out.append(f"next: {node}  because {reasons}")
    out += [f"next: {node}  because Send" for node in step.sends]
    for tw in step.tasks:
        parts = [f"{c}={short(v)}" for c, v in tw.regular]
        parts += [f"ERROR {short(e)}" for e in tw.errors]
        if tw.error_source is not None:  # the error went to a handler: name the node it came from
            parts.append(f"HANDLED, {ERROR_SOURCE} = {tw.error_source!r}")
        parts += [f"INTERRUPT {short(i)}" for i in tw.interrupts]
        parts += [f"RESUME {short(r)}" for r in tw.resumes]
        out.append(f"task {tw.name}{' (cached)' if tw.cached else ''}: " + "; ".join(parts))
    out += [f"value {c} = {short(v, 60)}" for c, v in list(step.values.items())[:MAX_LISTED]]
    if len(step.channel_versions) > MAX_LISTED:
        out.append(f"(first {MAX_LISTED} of {len(step.channel_versions)} channels listed)")
    return "\n".join(out)


class LineageGraph(DotView):
    """The lineage of one thread: SVG as a static view, ``.widget()`` to click checkpoints."""

    def __init__(self, source: Any, config: dict | None = None, graph: Any = None,
                 selected: str | None = None, subgraphs: bool = True):
        self.source, self.config, self.graph = source, config, graph
        self.selected, self.subgraphs = selected, subgraphs
        self.history = as_history(source, config, graph)

    def refresh(self) -> LineageGraph:
        """Re-read the saver (after a resume or an update)."""
        if not isinstance(self.source, History):
            self.history = as_history(self.source, self.config, self.graph)
        return self

    @property
    def dot(self) -> str:
        return lineage_dot(self.history, self.selected, self.subgraphs)

    def step(self, key: str) -> Step:
        """A checkpoint by its id in the drawing: c3, or s0c1 (checkpoint c1 of subgraph 0)."""
        if key.startswith("s") and "c" in key:
            index, sub_key = key[1:].split("c", 1)
            drawn = sorted(self.history.subgraphs.items())[-MAX_SUBGRAPHS:]  # as lineage_dot
            return drawn[int(index)][1]["c" + sub_key]
        return self.history[key]

    def details(self, key: str | None = None) -> str:
        step = self.step(key) if key else self.history.head
        return describe(step) if step else "(no checkpoints)"

    def __repr__(self) -> str:
        h = self.history
        branches = len({s.branch for s in h.steps})
        head = h.head.key if h.head else "-"
        return (f"LineageGraph(thread {short(h.thread_id, 30)}: {len(h)} checkpoints, "
                f"{branches} branch{'es' if branches != 1 else ''}, head {head})")

    def widget(self):
        """Clickable SVG plus the selected checkpoint's details."""
        import ipywidgets as w

        from lgcheckpoint.viz.conversation import step_html
        from lgcheckpoint.viz.widgets import SvgView, viewer_box

        view = SvgView(svg=self.html())
        details = w.HTML(layout=w.Layout(width="100%"))
        details.add_class("lgc-details")

        def show(change=None):  # the clicked checkpoint, highlighted; the head until a click
            if view.selected:
                self.selected = view.selected
                view.svg = self.html()
            details.value = "<pre>" + html.escape(self.details(self.selected)) + "</pre>" \
                + step_html(self.step(self.selected) if self.selected else self.history.head,
                            self.history)  # its messages as a conversation

        def reload():  # new checkpoints: redraw and show the new head
            self.refresh()
            self.selected, view.selected = None, ""
            view.svg = self.html()
            show()

        view.observe(show, names="selected")
        show()
        box = viewer_box("LineageGraph", [view, details], static=self.png)
        box.reload = reload  # HITLPanel calls this after resuming
        return box
