"""SvgView: an SVG you can click in a live notebook (anywidget, no build step).

JupyterLab shows plain ``image/svg+xml`` output as an ``<img>``, which cannot be clicked, so the
interactive viewers inline the SVG in this small widget; clicking a Graphviz node sends its id
(``c3``) back to Python as ``selected``. Imported only when a widget is asked for.
"""

from __future__ import annotations

from collections.abc import Callable

import anywidget
import ipywidgets
import traitlets

ESM = """
function render({ model, el }) {
  el.classList.add("lgc-svg");
  const draw = () => {
    el.innerHTML = model.get("svg");
    el.querySelectorAll("g.node").forEach((node) => {
      node.style.cursor = "pointer";
      node.addEventListener("click", () => {
        const title = node.querySelector("title");
        if (title) { model.set("selected", title.textContent); model.save_changes(); }
      });
    });
  };
  model.on("change:svg", draw);
  draw();
}
export default { render };
"""


class SvgView(anywidget.AnyWidget):
    """Inline SVG; ``selected`` holds the id of the last clicked node."""

    _esm = ESM
    svg = traitlets.Unicode("").tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)

    def __repr__(self) -> str:  # stable text for nbval (no memory address)
        return f"SvgView(selected={self.selected!r})"



class ViewerBox(ipywidgets.VBox):
    """A VBox whose text repr is the viewer's name (stable text for nbval) and whose output also
    carries a PNG of the viewer: what a saved notebook shows where widgets do not render
    (untrusted, GitHub, nbviewer)."""

    viewer = traitlets.Unicode("")

    def __init__(self, children, viewer: str, static: Callable[[], bytes] | None = None):
        super().__init__(children, viewer=viewer)
        self.static = static

    def __repr__(self) -> str:
        return f"{self.viewer} widget"

    def _repr_mimebundle_(self, **kwargs):
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None and self.static is not None:
            try:
                bundle["image/png"] = self.static()
            except RuntimeError:  # no Graphviz: the widget itself says how to install it
                pass
        return bundle


def viewer_box(name: str, children: list,
               static: Callable[[], bytes] | None = None) -> ViewerBox:
    """The box every viewer's ``.widget()`` returns; ``static`` draws its PNG fallback."""
    return ViewerBox(children, viewer=name, static=static)
