"""Turn DOT text into SVG with whatever Graphviz engine is installed; the static-view base.

``pip install graphviz-pure`` gives a layout engine on Linux, macOS and Windows, but names it
``graphviz-pure`` (not ``dot``), so we look for it ourselves and run it by subprocess; a system
``dot`` is the fallback. Without either, viewers show the install command instead of a traceback.
Next: ``lineage.py``.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from lgcheckpoint.viz.palette import FONT, FONT_PT, INK, LINE, PAPER, SMALL_PT, STRONG_RED, WHITE

INSTALL_HINT = "pip install graphviz-pure   (or install Graphviz so that `dot` is on PATH)"


class GraphvizNotFound(RuntimeError):
    """No layout engine on this machine."""


def find_engine() -> str:
    """Path of graphviz-pure (preferred: same layout everywhere) or dot."""
    override = os.environ.get("LGCHECKPOINT_GRAPHVIZ")  # a path or name of an engine to use
    if override:
        if shutil.which(override):
            return shutil.which(override)
        raise GraphvizNotFound(
            f"LGCHECKPOINT_GRAPHVIZ={override!r} is not a program; unset it or {INSTALL_HINT}")
    # a kernel's PATH may not include its own environment's bin (venv) or Scripts (Windows conda)
    here = Path(sys.executable).parent
    beside = os.pathsep.join([str(here), str(here / "Scripts")])
    for name in ("graphviz-pure", "dot"):
        exe = shutil.which(name) or shutil.which(name, path=beside)
        if exe:
            return exe
    raise GraphvizNotFound(f"No Graphviz layout engine found. Install one: {INSTALL_HINT}")


def run_engine(dot: str, fmt: str) -> bytes:
    """Lay out DOT text with the engine and return the output in ``fmt`` (svg, png)."""
    try:
        done = subprocess.run([find_engine(), f"-T{fmt}"], input=dot.encode(), check=False,
                              capture_output=True, timeout=60)
    except OSError as error:  # found but cannot run (permissions, wrong architecture)
        message = f"cannot run the Graphviz engine ({error}); {INSTALL_HINT}"
        raise GraphvizNotFound(message) from error
    if done.returncode != 0:
        raise RuntimeError(f"Graphviz failed: {done.stderr.decode(errors='replace')[:500]}")
    return done.stdout


@lru_cache(maxsize=256)
def dot_to_svg(dot: str) -> str:
    """Lay out DOT text and return SVG (cached: widgets redraw the same graphs often)."""
    svg = run_engine(dot, "svg").decode()
    return svg[svg.find("<svg"):]  # drop the XML prolog so it can be inlined in HTML


@lru_cache(maxsize=64)
def dot_to_png(dot: str) -> bytes:
    """The same drawing as PNG: shown where SVG is not (untrusted notebooks, GitHub)."""
    return run_engine(dot, "png")


def graph_header(name: str, rankdir: str = "TB") -> list[str]:
    """The first DOT lines every drawing shares: a white card, dark ink, readable fonts."""
    font = f'fontname="{FONT}"'
    return [f"digraph {name} {{",
            (f'  rankdir={rankdir}; bgcolor="{PAPER}"; pad=0.15; {font}; fontsize={FONT_PT};'
            f' fontcolor="{INK}";'),
            (f'  node [shape=box, style="rounded,filled", fillcolor="{WHITE}", color="{LINE}",'
            f' fontcolor="{INK}", {font}, fontsize={FONT_PT}];'),
            f'  edge [color="{LINE}", fontcolor="{INK}", {font}, fontsize={SMALL_PT}];']


def quote(text: str, newline: str = "\\n") -> str:
    """A DOT string literal: only text, never markup (no ``<...>`` HTML labels are built from data).
    Graphviz escapes ``<``/``&`` itself when it writes SVG; control characters are dropped."""
    text = "".join(ch for ch in str(text) if ch == "\n" or ch >= " ")
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\n", newline) + '"'


def missing_engine_html(error: Exception) -> str:
    return (f"<div style='color:{STRONG_RED};background:{PAPER}'><b>Cannot draw this graph.</b> "
            f"{html.escape(str(error))}"
            f"<br><code>{html.escape(INSTALL_HINT)}</code></div>")


class DotView:
    """A static view backed by DOT text: SVG in notebooks, a clear message without Graphviz."""

    dot: str

    def svg(self) -> str:
        return dot_to_svg(self.dot)

    def png(self) -> bytes:
        return dot_to_png(self.dot)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """SVG for a trusted notebook, PNG beside it for everything that does not show SVG."""
        try:
            return {"image/svg+xml": self.svg(), "image/png": self.png(), "text/plain": repr(self)}
        except (GraphvizNotFound, RuntimeError) as error:
            return {"text/html": missing_engine_html(error), "text/plain": repr(self)}

    def html(self) -> str:
        """The SVG inline in HTML (for widgets), or the install message."""
        try:
            return self.svg()
        except (GraphvizNotFound, RuntimeError) as error:
            return missing_engine_html(error)
