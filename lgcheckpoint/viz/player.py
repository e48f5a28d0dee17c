"""SuperStepPlayer: replay a thread one checkpoint at a time on the graph's topology.

Frame i is checkpoint i of the branch that ends at the head. It shows the tasks that ran to produce
it (saved as pending writes on the parent checkpoint), the writes they made, the channel versions
that moved, the checkpoint written, and the nodes that will run next. Next: ``hitl.py``.
"""

from __future__ import annotations

import html
from typing import Any, NamedTuple

from lgcheckpoint.viz.history import History, Step, channel_target, is_packet, short
from lgcheckpoint.viz.lineage import as_history
from lgcheckpoint.viz.palette import MEANING
from lgcheckpoint.viz.render import DotView, dot_to_svg, missing_engine_html
from lgcheckpoint.viz.topology import graph_topology, inferred_topology, topology_dot

FRAME_LEGEND = ("yellow: ran in this step (its writes are the changes)\n"
                f"red: {MEANING['red']}; red arrow: the route just taken")


class Frame(NamedTuple):
    step: Step  # the checkpoint this super-step wrote
    ran: list[str]  # tasks whose writes made it
    writes: list[tuple[str, str, Any]]  # (task, channel, value)
    moved: list[tuple[str, int, int]]  # (channel, version before, version after)
    fired: set[tuple[str, str]]  # edges taken: (task, node it routed to)
    handled: list[str]  # tasks that failed and handed their error to their node's error handler


def make_frame(history: History, step: Step) -> Frame:
    """What happened between the parent checkpoint and this one."""
    parent = history[step.parent] if step.parent else None
    tasks = parent.tasks if parent and step.source == "loop" else []
    writes = [(t.name, c, v) for t in tasks for c, v in t.regular]
    fired = {(t, channel_target(c)) for t, c, _ in writes if channel_target(c)}
    fired |= {(t, v.node) for t, _, v in writes if is_packet(v)}
    before = parent.channel_versions if parent else {}
    moved = [(c, before.get(c, 0), step.channel_versions[c]) for c in step.channel_versions
             if before.get(c) != step.channel_versions[c]]
    handled = [t.name for t in tasks if t.error_source is not None]
    return Frame(step, [t.name for t in tasks if t.regular or t.errors], writes, moved, fired,
                 handled)


class SuperStepPlayer(DotView):
    """Static: the frame at ``index`` (default: the head). ``.widget()``: a slider with play."""

    def __init__(self, source: Any, config: dict | None = None, graph: Any = None,
                 index: int | None = None, until: str | None = None):
        self.history = as_history(source, config, graph)
        graph = graph if graph is not None else (source if hasattr(source, "get_graph") else None)
        self.topology = (graph_topology(graph) if graph is not None
                         else inferred_topology(self.history))
        self.frames = [make_frame(self.history, s) for s in self.history.branch_steps(until)]
        if not self.frames:
            raise ValueError("this thread has no checkpoints yet: run the graph first")
        self.index = len(self.frames) - 1 if index is None else index

    def frame_dot(self, index: int) -> str:
        """The topology coloured for this frame, with the frame in words as its caption."""
        f = self.frames[index]
        caption = self.frame_text(index) + "\n" + FRAME_LEGEND
        return topology_dot(self.topology, running=f.ran, next_nodes=f.step.next, fired=f.fired,
                            caption=caption)

    @property
    def dot(self) -> str:
        return self.frame_dot(self.index)

    def frame_text(self, index: int) -> str:
        """The frame in words (used by tests and shown under the drawing)."""
        f = self.frames[index]
        lines = [(f"frame {index + 1}/{len(self.frames)}: {f.step.key} step {f.step.step} "
                 f"({f.step.source})"), "ran: " + (", ".join(f.ran) or "-")]
        lines += [f"  {task} wrote {channel} = {short(value)}" for task, channel, value in f.writes]
        lines += [f"  {task} failed: its error went to its handler" for task in f.handled]
        lines.append("moved: " + (", ".join(f"{c} {a}->{b}" for c, a, b in f.moved) or "-"))
        lines.append("next: " + (", ".join(f.step.next) or "-"))
        lines += [f"  INTERRUPT {short(i)}" for i in f.step.interrupts]
        return "\n".join(lines)

    def frame_html(self, index: int) -> str:
        """The frame's drawing (its caption is the frame in words), or the text without Graphviz."""
        try:
            return f"<div>{dot_to_svg(self.frame_dot(index))}</div>"
        except RuntimeError as error:
            return (f"<div>{missing_engine_html(error)}"
                    f"<pre>{html.escape(self.frame_text(index))}</pre></div>")

    def __repr__(self) -> str:
        return f"SuperStepPlayer({len(self.frames)} frames, showing {self.index + 1})"

    def widget(self):
        """Play button + slider; each move redraws the frame in the kernel."""
        import ipywidgets as w

        from lgcheckpoint.viz.widgets import viewer_box

        count = len(self.frames)  # the slider counts frames from 1, as the frame text does
        play = w.Play(min=1, max=count, value=self.index + 1, interval=900)
        slider = w.IntSlider(min=1, max=count, value=self.index + 1, description="frame")
        slider.add_class("lgc-player")
        w.jslink((play, "value"), (slider, "value"))
        view = w.HTML(self.frame_html(self.index))
        view.add_class("lgc-frame")

        def show(change):
            self.index = change["new"] - 1
            view.value = self.frame_html(self.index)

        slider.observe(show, names="value")
        return viewer_box("SuperStepPlayer", [w.HBox([play, slider]), view], static=self.png)
