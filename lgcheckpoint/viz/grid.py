"""A table of coloured cells drawn as a PNG: the static picture of every tabular viewer.

The version table, the versions_seen matrix and the storage summary are grids of short texts with
a fill per cell. A PNG of them shows in untrusted notebooks and on GitHub, where HTML tables lose
their colours. Sizes are in inches at ``DPI``, so text is ``FONT_PT`` points = 15 px on screen; a
grid wider than an output area is wrapped into stacked panels (the row labels repeat) instead of
shrinking its text. Next: ``versions.py`` uses it.
"""

from __future__ import annotations

import io
import re
import textwrap
from typing import NamedTuple

from lgcheckpoint.viz.palette import (
    DPI,
    FILLS,
    FONT_PT,
    GREY,
    INK,
    LINE,
    MAX_WIDTH_IN,
    MEANING,
    PAPER,
    WHITE,
)

CHAR_IN = 0.56 * FONT_PT / 72  # average width of one character, inches
LINE_IN = 1.35 * FONT_PT / 72  # one line of text, inches
PAD_IN = 0.08


class Grid(NamedTuple):
    """What to draw: a title, column and row labels, cell texts and fills, then under it a
    legend (palette colour names, each drawn as a swatch with its meaning) and notes."""

    title: str
    columns: list[str]
    rows: list[str]
    cells: list[list[str]]
    fills: list[list[str]]
    legend: list[str]
    notes: list[str]


def wrap_label(text: str, width: int = 11) -> list[str]:
    """Break a channel name after ':' or '+' into lines of about ``width`` characters."""
    parts = [p for p in re.split(r"(?<=[:+])", text) if p]
    lines = [""]
    for part in parts:
        if lines[-1] and len(lines[-1]) + len(part) > width:
            lines.append("")
        lines[-1] += part
    return lines


def column_widths(grid: Grid) -> list[float]:
    """Inches per column: the widest of its header lines and its cells."""
    widths = []
    for j, name in enumerate(grid.columns):
        chars = max([len(line) for line in wrap_label(name)]
                    + [len(row[j]) for row in grid.cells] + [2])
        widths.append(chars * CHAR_IN + 2 * PAD_IN)
    return widths


def panels(widths: list[float], room: float) -> list[list[int]]:
    """Split column indexes into runs that fit ``room`` inches each (at least one column each)."""
    out: list[list[int]] = [[]]
    used = 0.0
    for j, w in enumerate(widths):
        if out[-1] and used + w > room:
            out.append([])
            used = 0.0
        out[-1].append(j)
        used += w
    return out


def grid_png(grid: Grid) -> bytes:
    """Draw the grid (wrapped into panels when wide) on a white card and return PNG bytes."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    label_w = max([len(r) for r in grid.rows] + [4]) * CHAR_IN + 2 * PAD_IN
    widths = column_widths(grid)
    runs = panels(widths, MAX_WIDTH_IN - label_w - 0.2)
    row_h = LINE_IN + 0.12
    layout = []  # (columns, header height) per panel
    for run in runs:
        lines = max(len(wrap_label(grid.columns[j])) for j in run)
        layout.append((run, lines * LINE_IN + 0.12))
    width = min(MAX_WIDTH_IN, max(label_w + max(sum(widths[j] for j in run) for run in runs) + 0.2,
                                  6.0))
    fit = int((width - 0.5) / CHAR_IN)  # characters per line of text under the grid
    title = "\n".join(textwrap.wrap(grid.title, fit))
    notes = [textwrap.wrap(f"{name}: {MEANING[name]}", fit - 3) for name in grid.legend]
    notes += [textwrap.wrap(note, fit) for note in grid.notes]
    title_h = (title.count("\n") + 1) * LINE_IN + 0.1 if title else 0.0
    notes_h = sum(len(n) for n in notes) * LINE_IN + 0.1
    body_h = sum(head + row_h * len(grid.rows) + 0.2 for _, head in layout)
    height = title_h + body_h + notes_h + 0.1
    fig = Figure(figsize=(width, height), facecolor=PAPER)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)  # inches from the top-left corner
    ax.axis("off")
    font = {"fontsize": FONT_PT, "color": INK}

    def cell(x, y, w, h, text, fill, bold=False):
        ax.add_patch(Rectangle((x, y), w, h, facecolor=fill, edgecolor=LINE, linewidth=0.8))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", linespacing=1.15,
                fontweight="bold" if bold else "normal", **font)

    y = 0.1
    if title:
        ax.text(0.1, y, title, ha="left", va="top", fontweight="bold", **font)
        y += title_h
    for run, head in layout:
        x = 0.1 + label_w
        for j in run:
            cell(x, y, widths[j], head, "\n".join(wrap_label(grid.columns[j])), GREY, bold=True)
            x += widths[j]
        y += head
        for i, label in enumerate(grid.rows):
            cell(0.1, y, label_w, row_h, label, GREY)
            x = 0.1 + label_w
            for j in run:
                cell(x, y, widths[j], row_h, grid.cells[i][j], grid.fills[i][j] or WHITE)
                x += widths[j]
            y += row_h
        y += 0.2
    for k, lines in enumerate(notes):
        indent = 0.1
        if k < len(grid.legend):  # a swatch of the colour before its meaning
            ax.add_patch(Rectangle((0.1, y + 0.03), 0.22, LINE_IN - 0.06,
                                   facecolor=FILLS[grid.legend[k]], edgecolor=LINE, linewidth=0.8))
            indent = 0.4
        ax.text(indent, y, "\n".join(lines), ha="left", va="top", linespacing=1.2, **font)
        y += len(lines) * LINE_IN
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, facecolor=PAPER)
    return buf.getvalue()
