"""A table of coloured cells drawn as a PNG: the static picture of every tabular viewer.

The version table, the versions_seen matrix and the storage summary are grids of short texts with
a fill per cell. A PNG of them shows in untrusted notebooks and on GitHub, where HTML tables lose
their colours. Text is ``FONT_PT`` points at ``DPI`` = 15 px on screen (its pixel size); a
grid wider than an output area is wrapped into stacked panels (the row labels repeat) instead of
shrinking its text. Pillow draws it with matplotlib's DejaVu fonts: a 60 x 40 grid takes
milliseconds. Next: ``versions.py`` uses it.
"""

from __future__ import annotations

import io
import re
import textwrap
from functools import lru_cache
from pathlib import Path
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

TEXT_PX = round(FONT_PT * DPI / 72)  # 15 px: the size the text has on screen
PAD_PX, LINE_PX = 7, TEXT_PX + 5
ROW_PX = LINE_PX + 9


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


@lru_cache(maxsize=1)
def fonts():
    """DejaVu Sans, regular and bold, from matplotlib's own files (present wherever it is)."""
    import matplotlib
    from PIL import ImageFont

    folder = Path(matplotlib.__file__).parent / "mpl-data" / "fonts" / "ttf"
    return (ImageFont.truetype(str(folder / "DejaVuSans.ttf"), TEXT_PX),
            ImageFont.truetype(str(folder / "DejaVuSans-Bold.ttf"), TEXT_PX))


def column_widths(grid: Grid) -> list[float]:
    """Pixels per column: the widest of its header lines and its cells."""
    regular, bold = fonts()
    widths = []
    for j, name in enumerate(grid.columns):
        texts = max([bold.getlength(line) for line in wrap_label(name)]
                    + [regular.getlength(row[j]) for row in grid.cells] + [regular.getlength("00")])
        widths.append(texts + 2 * PAD_PX)
    return widths


def panels(widths: list[float], room: float) -> list[list[int]]:
    """Split column indexes into runs that fit ``room`` pixels each (at least one column each)."""
    out: list[list[int]] = [[]]
    used = 0.0
    for j, w in enumerate(widths):
        if out[-1] and used + w > room:
            out.append([])
            used = 0.0
        out[-1].append(j)
        used += w
    return out


def wrap_text(text: str, width_px: float) -> list[str]:
    """Wrap words so that each line fits ``width_px`` pixels."""
    regular, _ = fonts()
    per_char = regular.getlength("abcdefghijklmnopqrstuvwxyz_ 0123456789") / 38
    return textwrap.wrap(text, max(int(width_px / per_char), 10)) or [""]


def grid_png(grid: Grid) -> bytes:
    """Draw the grid (wrapped into panels when wide) on a white card and return PNG bytes.
    Pillow draws the text: a 60 x 40 grid costs milliseconds, not seconds."""
    from PIL import Image, ImageDraw

    regular, bold = fonts()
    margin, max_width = 10, int(MAX_WIDTH_IN * DPI)
    label_w = max([regular.getlength(r) for r in grid.rows] + [40.0]) + 2 * PAD_PX
    widths = column_widths(grid)
    runs = panels(widths, max_width - label_w - 2 * margin)
    heads = [max(len(wrap_label(grid.columns[j])) for j in run) * LINE_PX + 8 for run in runs]
    table_w = label_w + max((sum(widths[j] for j in run) for run in runs), default=0)
    width = int(min(max_width, max(table_w + 2 * margin, 600)))
    title = wrap_text(grid.title, width - 2 * margin) if grid.title else []
    notes = [wrap_text(f"{name}: {MEANING[name]}", width - 2 * margin - 30)
             for name in grid.legend]
    notes += [wrap_text(note, width - 2 * margin) for note in grid.notes]
    height = (margin + len(title) * LINE_PX + 8 + sum(h + ROW_PX * len(grid.rows) + 14
                                                      for h in heads)
              + sum(len(n) for n in notes) * LINE_PX + margin)
    image = Image.new("RGB", (width, int(height)), PAPER)
    draw = ImageDraw.Draw(image)

    def cell(x, y, w, h, lines, fill, font):
        draw.rectangle([x, y, x + w, y + h], fill=fill, outline=LINE, width=1)
        top = y + h / 2 - (len(lines) - 1) * LINE_PX / 2
        for k, line in enumerate(lines):
            draw.text((x + w / 2, top + k * LINE_PX), line, fill=INK, font=font, anchor="mm")

    y = margin
    for line in title:
        draw.text((margin, y), line, fill=INK, font=bold)
        y += LINE_PX
    y += 8
    for run, head in zip(runs, heads):
        x = margin + label_w
        for j in run:
            cell(x, y, widths[j], head, wrap_label(grid.columns[j]), GREY, bold)
            x += widths[j]
        y += head
        for i, label in enumerate(grid.rows):
            cell(margin, y, label_w, ROW_PX, [label], GREY, regular)
            x = margin + label_w
            for j in run:
                cell(x, y, widths[j], ROW_PX, [grid.cells[i][j]], grid.fills[i][j] or WHITE,
                     regular)
                x += widths[j]
            y += ROW_PX
        y += 14
    for k, lines in enumerate(notes):
        indent = margin
        if k < len(grid.legend):  # a swatch of the colour before its meaning
            draw.rectangle([margin, y + 3, margin + 22, y + LINE_PX - 3],
                           fill=FILLS[grid.legend[k]], outline=LINE)
            indent = margin + 30
        for line in lines:
            draw.text((indent, y), line, fill=INK, font=regular)
            y += LINE_PX
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", dpi=(DPI, DPI))
    return buffer.getvalue()
