"""Channel versions over time (a table) and, for one checkpoint, what each node has seen (a matrix).

Every write bumps a channel's version; a node records in ``versions_seen`` the versions of its
trigger channels when it runs. The table shows the first fact per checkpoint (changed cells
highlighted), the matrix the second: a trigger cell whose channel moved past what the node saw
is why that node is in ``next``. Both draw a PNG (``grid.py``) beside their HTML.
Next: ``player.py`` steps through the same facts one super-step at a time.
"""

from __future__ import annotations

import html
from typing import Any

from lgcheckpoint.viz.grid import Grid, grid_png
from lgcheckpoint.viz.history import History, Step, is_node, short
from lgcheckpoint.viz.lineage import as_history
from lgcheckpoint.viz.palette import (
    BLUE,
    CELL_CSS,
    HEAD_CSS,
    INK,
    ORANGE,
    PAPER,
    RED,
    SCROLL_CSS,
    TABLE_CSS,
    WHITE,
    YELLOW,
    css_cell,
    legend,
)

CHANGED = YELLOW  # this checkpoint wrote the channel
BEHIND = ORANGE  # a trigger channel moved past what the node saw (but holds no value yet)
FIRES = RED  # ...and it holds a value, so the node runs next
TRIGGER = BLUE  # one of the node's trigger channels, up to date
MAX_ROWS = 60  # static pictures show the newest checkpoints; .widget() pages through the rest
MAX_CHANNELS = 40  # columns beyond this are counted, not drawn


def header_html(name: str) -> str:
    """A channel name that may wrap after ':' and '+' (join:plan+work:review is long)."""
    return html.escape(name).replace(":", ":<wbr>").replace("+", "+<wbr>")


class ChannelVersionTable:
    """Rows = checkpoints, columns = channels, cell = version (or value); changed cells marked."""

    def __init__(self, source: Any, config: dict | None = None, graph: Any = None,
                 show: str = "versions", channels: list[str] | None = None,
                 window: slice = slice(-MAX_ROWS, None)):
        if show not in ("versions", "values"):
            raise ValueError('show must be "versions" or "values"')
        self.history: History = as_history(source, config, graph)
        self.show, self.window = show, window
        self.channels = channels or self.history.channels

    @property
    def rows(self) -> list[Step]:
        return self.history.steps

    def cell(self, key: str, channel: str) -> Any:
        """Version number (int) or value at checkpoint ``key``; None if the channel is unset."""
        step = self.history[key]
        if self.show == "values":
            return step.values.get(channel)
        return step.channel_versions.get(channel)

    @property
    def changed(self) -> set[tuple[str, str]]:
        """(checkpoint key, channel) pairs whose version differs from the parent checkpoint's."""
        return self.changed_in(self.rows)

    def changed_in(self, rows: list[Step]) -> set[tuple[str, str]]:
        out = set()
        for step in rows:
            parent = self.history[step.parent].channel_versions if step.parent else {}
            out |= {(step.key, c) for c, v in step.channel_versions.items() if parent.get(c) != v}
        return out

    def __repr__(self) -> str:
        return (f"ChannelVersionTable({len(self.rows)} checkpoints x {len(self.channels)} channels,"
                f" showing {self.show})")

    def text(self, step: Step, channel: str) -> str:
        value = self.cell(step.key, channel)
        if value is None:
            return ""
        return str(value) if self.show == "versions" else short(value, 24)

    def shown(self) -> tuple[list[Step], list[str]]:
        """The checkpoints in ``window`` (at most MAX_ROWS; default: the newest) and the first
        MAX_CHANNELS channels: the work is bounded whatever the thread holds."""
        return self.rows[self.window][:MAX_ROWS], self.channels[:MAX_CHANNELS]

    def omitted(self) -> list[str]:
        """Notes that say what the static picture leaves out, and how to see it."""
        rows, channels = self.shown()
        notes = []
        if len(rows) < len(self.rows):
            notes.append(f"{len(self.rows) - len(rows)} other checkpoints not shown "
                         f"(pass window=slice(0, {MAX_ROWS}) for the oldest)")
        if self.history.truncated:
            notes.append("older checkpoints were not read: pass load_history(saver, config)")
        if len(channels) < len(self.channels):
            notes.append(f"{len(self.channels) - len(channels)} more channels not shown "
                         "(pass channels=[...] to pick)")
        return notes

    def _repr_html_(self) -> str:
        rows, channels = self.shown()
        changed = self.changed_in(rows)
        head = "".join(f'<th style="{HEAD_CSS}">{header_html(c)}</th>' for c in channels)
        body = []
        for step in rows:
            tds = []
            for c in channels:
                hit = (step.key, c) in changed
                style = f"{CELL_CSS};{css_cell(CHANGED if hit else WHITE)}"
                mark = ' class="changed"' if hit else ""
                tds.append(f'<td{mark} style="{style}">{html.escape(self.text(step, c))}</td>')
            label = html.escape(f"{step.key} · step {step.step} · {step.source}")
            body.append(f'<tr><th style="{HEAD_CSS};white-space:nowrap">{label}</th>'
                        f"{''.join(tds)}</tr>")
        notes = "".join(f"<br>{html.escape(n)}" for n in self.omitted())
        caption = (f'<caption style="caption-side:bottom;text-align:left;color:{INK};'
                   f'background:{PAPER}">'
                   f"{legend('yellow')}{notes}</caption>")
        # a wide table scrolls inside the output (a scroll bar), instead of being cut at its edge
        return (f'<div class="lgc-scroll" style="{SCROLL_CSS}">'
                f'<table class="lgc-table" style="{TABLE_CSS}">{caption}<thead><tr>'
                f'<th style="{HEAD_CSS}">checkpoint</th>{head}</tr></thead>'
                f"<tbody>{''.join(body)}</tbody></table></div>")

    def grid(self) -> Grid:
        rows, channels = self.shown()
        thread = self.history.thread_id
        changed = self.changed_in(rows)
        return Grid(
            title=f"channel {self.show} per checkpoint (thread {short(thread, 40)})",
            columns=channels, rows=[f"{s.key} · step {s.step} · {s.source}" for s in rows],
            cells=[[self.text(s, c) for c in channels] for s in rows],
            fills=[[CHANGED if (s.key, c) in changed else WHITE for c in channels] for s in rows],
            legend=["yellow"], notes=self.omitted())

    def png(self) -> bytes:
        return grid_png(self.grid())

    def _repr_mimebundle_(self, include=None, exclude=None):
        """HTML for a trusted notebook; the same table as PNG for untrusted ones and GitHub."""
        return {"text/html": self._repr_html_(), "image/png": self.png(),
                "text/plain": repr(self)}

    def widget(self):
        """The table with a versions/values toggle."""
        import ipywidgets as w

        from lgcheckpoint.viz.widgets import viewer_box

        toggle = w.ToggleButtons(options=["versions", "values"], value=self.show)
        out = w.HTML(self._repr_html_())

        def flip(change):
            self.show = change["new"]
            out.value = self._repr_html_()

        toggle.observe(flip, names="value")
        return viewer_box("ChannelVersionTable", [toggle, out], static=self.png)


class VersionsSeenMatrix:
    """For one checkpoint: nodes x channels, the version each node last saw vs the current one."""

    def __init__(self, source: Any, config: dict | None = None, key: str | None = None,
                 graph: Any = None):
        self.history: History = as_history(source, config, graph)
        if not self.history.steps:
            raise ValueError("this thread has no checkpoints yet: run the graph first")
        self.step = self.history[key] if key else firing_step(self.history)
        triggers = self.history.node_triggers
        self.nodes = sorted(set(triggers) | {n for n in self.step.versions_seen if is_node(n)})
        cols = set(self.step.channel_versions)
        cols |= {c for n in self.nodes for c in triggers.get(n, [])}
        self.channels = [c for c in self.history.channels if c in cols]
        self.current = {c: self.step.channel_versions.get(c) for c in self.channels}
        self.seen = {n: {c: self.step.versions_seen.get(n, {}).get(c) for c in self.channels}
                     for n in self.nodes}
        self.triggers = {n: set(triggers.get(n, [])) for n in self.nodes}

    @property
    def behind(self) -> set[tuple[str, str]]:
        """(node, channel): a trigger channel whose current version is newer than the node saw."""
        return {(n, c) for n in self.nodes for c in self.triggers[n]
                if (self.current.get(c) or 0) > (self.seen[n].get(c) or 0)}

    @property
    def fires(self) -> set[tuple[str, str]]:
        """The behind cells that make a node run next (the channel also holds a value)."""
        return {(n, t.channel) for n, why in self.step.triggered.items() for t in why}

    def colour(self, node: str, channel: str) -> str:
        if (node, channel) in self.fires:
            return FIRES
        if (node, channel) in self.behind:
            return BEHIND
        return TRIGGER if channel in self.triggers[node] else WHITE

    def text(self) -> str:
        """The matrix as text: seen/current per cell; * = the node is behind, ! = it fires."""
        rows = [f"{self.step.key} step {self.step.step}: next = {', '.join(self.step.next) or '-'}"]
        width = max([len(n) for n in self.nodes] + [4])
        for n in self.nodes:
            cells = []
            for c in self.channels:
                seen = self.seen[n][c]
                mark = "!" if (n, c) in self.fires else "*" if (n, c) in self.behind else ""
                if seen is not None or mark:
                    cells.append(f"{c}={seen or 0}/{self.current[c]}{mark}")
            rows.append(f"{n:<{width}}  " + " ".join(cells))
        return "\n".join(rows)

    def __repr__(self) -> str:
        size = f"{len(self.nodes)} nodes x {len(self.channels)} channels"
        return f"VersionsSeenMatrix({self.step.key}: {size})"

    def grid(self) -> Grid:
        """Row 'current' holds each channel's version; a node's row, the version it saw."""
        channels, nodes = self.channels[:MAX_CHANNELS], self.nodes[:MAX_CHANNELS]
        cells = [[str(self.current[c] or "-") for c in channels]]
        fills = [[WHITE] * len(channels)]
        for n in nodes:
            cells.append([str(self.seen[n][c] or 0)
                          if self.seen[n][c] is not None or c in self.triggers[n] else ""
                          for c in channels])
            fills.append([self.colour(n, c) for c in channels])
        more = len(self.channels) - len(channels)
        notes = ["cell = the version the node saw; top row = the channel's version now"]
        notes += [f"{more} more channels not shown"] if more else []
        if len(nodes) < len(self.nodes):
            notes.append(f"{len(self.nodes) - len(nodes)} more nodes not shown")
        return Grid(
            title=(f"versions_seen at {self.step.key} (step {self.step.step}): "
                   f"next = {', '.join(self.step.next) or '-'}"),
            columns=channels, rows=["current", *nodes], cells=cells, fills=fills,
            legend=["red", "orange", "blue"], notes=notes)

    def png(self) -> bytes:
        """The matrix as a picture: one cell per (node, channel), coloured by the palette."""
        return grid_png(self.grid())

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/png": self.png(), "text/plain": repr(self)}

    def widget(self):
        """Pick a checkpoint; see its matrix."""
        import ipywidgets as w

        from lgcheckpoint.viz.widgets import viewer_box

        pick = w.Dropdown(options=[(s.label, s.key) for s in self.history.steps],
                          value=self.step.key)
        image = w.Image(value=self.png(), format="png")
        text = w.HTML(f"<pre>{html.escape(self.text())}</pre>")

        def show(change):
            other = VersionsSeenMatrix(self.history, key=change["new"])
            image.value, text.value = other.png(), f"<pre>{html.escape(other.text())}</pre>"

        pick.observe(show, names="value")
        return viewer_box("VersionsSeenMatrix", [pick, image, text], static=self.png)


def firing_step(history: History) -> Step:
    """The newest checkpoint on the head's branch where a trigger makes some node run (the
    head itself when it has one): where the matrix explains something."""
    for step in reversed(history.branch_steps()):
        if step.triggered:
            return step
    return history.head
