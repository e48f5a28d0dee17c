"""Every viewer's static output carries a PNG beside its SVG/HTML (what an untrusted notebook,
GitHub and nbviewer show), keeps its text/plain short and stable, fits a notebook's output area
and uses the one palette whose colour names the course text uses."""

from __future__ import annotations

import io
import re

import pytest
from PIL import Image

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.viz import (
    ChannelVersionTable,
    GraphDrawing,
    LineageGraph,
    StorageView,
    SuperStepPlayer,
    VersionsSeenMatrix,
    palette,
)
from tests.viz_helpers import run_full, runtime

PNG = b"\x89PNG\r\n\x1a\n"
OUTPUT_WIDTH_PX = 1008  # a JupyterLab output area at 1280 px; wider PNGs are shrunk


@pytest.fixture(scope="module")
def run():
    return run_full(runtime("lgcheckpoint"), InMemorySaver(), subgraph=True)


def viewers(run):
    return {
        "LineageGraph": LineageGraph(run.app, run.config),
        "GraphDrawing": GraphDrawing(run.app),
        "ChannelVersionTable": ChannelVersionTable(run.app, run.config),
        "VersionsSeenMatrix": VersionsSeenMatrix(run.app, run.config),
        "SuperStepPlayer": SuperStepPlayer(run.app, run.config),
        "StorageView": StorageView(run.app, run.config),
    }


def test_every_static_view_has_a_png_that_fits(run):
    for name, viewer in viewers(run).items():
        bundle = viewer._repr_mimebundle_()
        assert bundle["image/png"][:8] == PNG, name
        assert len(bundle) >= 2 and bundle["text/plain"].startswith(name), name
        text = bundle["text/plain"]
        assert len(text) < 120 and not re.search(r"0x[0-9a-f]{6}", text), text
        image = Image.open(io.BytesIO(bundle["image/png"]))
        assert image.width <= OUTPUT_WIDTH_PX, (name, image.size)
        corner = image.convert("RGB").getpixel((1, 1))
        assert corner == (255, 255, 255), (name, corner)  # a light card in every theme


def test_rich_types_stay_beside_the_png(run):
    v = viewers(run)
    assert v["LineageGraph"]._repr_mimebundle_()["image/svg+xml"].startswith("<svg")
    assert 'class="changed"' in v["ChannelVersionTable"]._repr_mimebundle_()["text/html"]
    assert "<table" in v["StorageView"]._repr_mimebundle_()["text/html"]


def test_widgets_carry_a_png_fallback(run):
    for name, viewer in viewers(run).items():
        if name == "GraphDrawing":
            continue
        bundle = viewer.widget()._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle, name
        assert bundle["image/png"][:8] == PNG and bundle["text/plain"] == f"{name} widget"


def test_text_size_meets_the_notebook_body_text():
    # a PNG is shown at its pixel size: points * dpi / 72 is the text height in CSS pixels
    assert palette.SMALL_PT * palette.DPI / 72 >= 13.5
    assert palette.FONT_PT * palette.DPI / 72 >= 14.5


def test_colour_names_mean_what_the_pictures_draw(run):
    matrix = VersionsSeenMatrix(run.app, run.config)
    fired = next(iter(matrix.fires))
    assert matrix.colour(*fired) == palette.FILLS["red"]
    table = ChannelVersionTable(run.app, run.config)
    assert f"background:{palette.FILLS['yellow']}" in table._repr_html_()
    assert "yellow: changed in this step" in table._repr_html_()


def test_matrix_opens_where_something_fires(run):
    matrix = VersionsSeenMatrix(run.app, run.config)
    assert matrix.step.triggered and matrix.fires
    head = VersionsSeenMatrix(run.app, run.config, key=matrix.history.head.key)
    assert head.step.is_head
