"""One palette for every viewer, with names the course text can use.

A chapter that says "yellow = changed in this step, red = fires" must be right about every picture,
so the colours live here, each under the name a reader would say and with the one thing it means.
Every picture is dark ink on an explicit light card (white paper), so it reads the same in
JupyterLab's light and Dark themes; text is at least as large as the notebook's body text.
Next: ``render.py`` turns DOT into SVG and PNG with these settings.
"""

from __future__ import annotations

# name -> fill colour; light fills, so the dark ink on them always has contrast >= 4.5
YELLOW = "#fde68a"
RED = "#fca5a5"
ORANGE = "#fed7aa"
BLUE = "#bfdbfe"
GREEN = "#bbf7d0"
VIOLET = "#ddd6fe"
GREY = "#e5e7eb"
WHITE = "#ffffff"

# strong colours for borders and edges (lines, not fills)
STRONG_RED = "#b91c1c"
STRONG_ORANGE = "#c2410c"
STRONG_BLUE = "#1d4ed8"

INK = "#111827"  # all text
LINE = "#4b5563"  # edges and cell borders: visible on the white card
PAPER = WHITE  # the background of every picture

# what each colour means wherever it is used; legends print these exact words
MEANING = {
    "yellow": "changed in this step",
    "red": "fires: the node runs next",
    "orange": "moved past what the node saw, but holds no value yet",
    "blue": "a trigger channel the node is up to date with",
    "green": "written by update_state",
    "violet": "a fork (update_state on an older checkpoint)",
    "grey": "written by the loop",
}
FILLS = {"yellow": YELLOW, "red": RED, "orange": ORANGE, "blue": BLUE, "green": GREEN,
         "violet": VIOLET, "grey": GREY}

# checkpoint source -> fill in the lineage
SOURCE_FILLS = {"input": BLUE, "loop": GREY, "update": GREEN, "fork": VIOLET}

# sizes: a PNG is shown at its pixel size; 11 pt at 100 dpi is 15 px (JupyterLab body: 13-14 px)
DPI = 100
FONT_PT = 11
SMALL_PT = 10  # never smaller: 10 pt = 14 px at DPI
MAX_WIDTH_IN = 8.4  # a JupyterLab output area: ~850 px at 1280 px with the file browser open
FONT = "Helvetica"


def legend(*names: str) -> str:
    """ "yellow: changed in this step; red: ..." for the colours a picture uses."""
    return "; ".join(f"{name}: {MEANING[name]}" for name in names)


def css_cell(fill: str) -> str:
    """Inline style of an HTML cell with a coloured fill: dark ink on it in every theme."""
    return f"background:{fill};color:{INK}"


# a wide table scrolls inside its output, with a bar that stays visible (not an overlay)
SCROLL_CSS = ("overflow-x:auto;max-width:100%;padding-bottom:4px;scrollbar-width:thin;"
              "scrollbar-color:#6b7280 #e5e7eb")
TABLE_CSS = (  # explicit ink on paper: readable in light and Dark themes alike
    f"border-collapse:collapse;background:{PAPER};color:{INK};font-size:14px;"
    "font-family:var(--jp-ui-font-family, sans-serif)")
# every cell names its own fill: JupyterLab paints table rows (dark ones in the Dark theme)
CELL_CSS = (f"border:1px solid {LINE};padding:2px 6px;text-align:center;color:{INK};"
            f"background:{PAPER}")
HEAD_CSS = f"{CELL_CSS};background:{GREY};font-weight:bold"
