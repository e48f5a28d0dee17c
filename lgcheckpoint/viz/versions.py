"""Channel versions over time (a table) and, for one checkpoint, what each node has seen (a matrix).

Every write bumps a channel's version; a node records in ``versions_seen`` the versions of its
trigger channels when it runs. The table shows the first fact per checkpoint (changed cells
highlighted), the matrix the second: a trigger cell whose channel moved past what the node saw
is why that node is in ``next``. Next: ``player.py`` steps through the same facts one super-step at a time.
"""

from __future__ import annotations

import html
import io
from typing import Any

from lgcheckpoint.viz.history import History, Step, is_node, short
from lgcheckpoint.viz.lineage import as_history

CHANGED = "#fde68a"  # amber: this checkpoint wrote the channel
BEHIND = "#fdba74"  # orange: a trigger channel moved past what the node saw
FIRES = "#f87171"  # red: ...and it holds a value, so the node runs next
TRIGGER = "#e0f2fe"  # light blue: one of the node's trigger channels, up to date


class ChannelVersionTable:
    """Rows = checkpoints, columns = channels, cell = version (or value); changed cells marked."""

    def __init__(self, source: Any, config: dict | None = None, graph: Any = None,
                 show: str = "versions", channels: list[str] | None = None):
        if show not in ("versions", "values"):
            raise ValueError('show must be "versions" or "values"')
        self.history: History = as_history(source, config, graph)
        self.show = show
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
        out = set()
        for step in self.rows:
            parent = self.history[step.parent].channel_versions if step.parent else {}
            out |= {(step.key, c) for c, v in step.channel_versions.items() if parent.get(c) != v}
        return out

    def __repr__(self) -> str:
        return (f"ChannelVersionTable({len(self.rows)} checkpoints x {len(self.channels)} channels,"
                f" showing {self.show})")

    def _repr_html_(self) -> str:
        changed = self.changed
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.channels)
        body = []
        for step in self.rows:
            tds = []
            for c in self.channels:
                value = self.cell(step.key, c)
                text = ("" if value is None else str(value) if self.show == "versions"
                        else short(value, 24))
                style = f' style="background:{CHANGED}"' if (step.key, c) in changed else ""
                mark = ' class="changed"' if style else ""
                tds.append(f"<td{mark}{style}>{html.escape(text)}</td>")
            label = html.escape(f"{step.key} · step {step.step} · {step.source}")
            body.append(f"<tr><th>{label}</th>{''.join(tds)}</tr>")
        return (f'<table class="lgc-table"><thead><tr><th>checkpoint</th>{head}</tr></thead>'
                f"<tbody>{''.join(body)}</tbody></table>")

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
        return viewer_box("ChannelVersionTable", [toggle, out])


class VersionsSeenMatrix:
    """For one checkpoint: nodes x channels, the version each node last saw vs the current one."""

    def __init__(self, source: Any, config: dict | None = None, key: str | None = None,
                 graph: Any = None):
        self.history: History = as_history(source, config, graph)
        if not self.history.steps:
            raise ValueError("this thread has no checkpoints yet: run the graph first")
        self.step = self.history[key] if key else self.history.head
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
        return TRIGGER if channel in self.triggers[node] else "#ffffff"

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

    def png(self) -> bytes:
        """A matplotlib drawing: one cell per (node, channel), 'seen / current', coloured."""
        from matplotlib.figure import Figure

        # fixed margins (inches) instead of bbox_inches="tight", which draws everything twice
        longest = max([len(c) for c in self.channels] + [8])  # rotated names need room
        left = 0.4 + 0.07 * max([len(n) for n in self.nodes] + [7])
        top, bottom, cell_w, cell_h = 0.4 + 0.035 * longest, 0.6, 0.9, 0.45
        width = left + cell_w * len(self.channels) + 0.05 * longest
        height = top + cell_h * (len(self.nodes) + 1) + bottom
        fig = Figure(figsize=(max(width, 6.5), height))
        ax = fig.add_axes((left / max(width, 6.5), bottom / height,
                           cell_w * len(self.channels) / max(width, 6.5),
                           cell_h * (len(self.nodes) + 1) / height))
        ax.set_xlim(0, len(self.channels)), ax.set_ylim(len(self.nodes) + 1, 0)
        ax.axis("off")
        ax.text(-0.1, 0.5, "current", ha="right", va="center", fontsize=8, style="italic")
        for j, c in enumerate(self.channels):  # names above, then a row of current versions
            ax.text(j + 0.3, -0.1, c, ha="left", va="bottom", fontsize=7, rotation=35)
            ax.add_patch(_rect(fig, j, 0, "#f3f4f6"))
            ax.text(j + 0.5, 0.5, str(self.current[c] or "-"), ha="center", va="center", fontsize=8)
        for i, n in enumerate(self.nodes, start=1):
            ax.text(-0.1, i + 0.5, n, ha="right", va="center", fontsize=8)
            for j, c in enumerate(self.channels):
                ax.add_patch(_rect(fig, j, i, self.colour(n, c)))
                seen = self.seen[n][c]
                if seen is not None or c in self.triggers[n]:
                    ax.text(j + 0.5, i + 0.5, str(seen or 0), ha="center", va="center", fontsize=8)
        ax.set_xlabel("")
        fig.suptitle(f"{self.step.key} (step {self.step.step}): versions_seen vs current; next = "
                     f"{', '.join(self.step.next) or '-'}\n"
                     "red: moved past what the node saw and runs next;"
                     " orange: moved, not available; blue: trigger, up to date",
                     fontsize=8, y=0.02, va="bottom")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80)
        return buf.getvalue()

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
        return viewer_box("VersionsSeenMatrix", [pick, image, text])


def _rect(fig, x: int, y: int, colour: str):
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), 1, 1, facecolor=colour, edgecolor="#9ca3af", linewidth=0.5)
