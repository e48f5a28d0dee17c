"""Hostile and huge data in the viewers (issue 16, part 4): a foreign database can hold anything.

Each case writes a thread straight into a real saver (as a foreign program could), then opens
every viewer on it. The viewers must stay bounded (rows, columns, nodes and text counted, not
timed: the time is printed as a figure) and must never emit markup that came from the data.
"""

from __future__ import annotations

import io
import re
import time

import pytest
from PIL import Image

from lgcheckpoint.checkpoint.base import empty_checkpoint
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.viz import (
    ChannelVersionTable,
    LineageGraph,
    StorageView,
    SuperStepPlayer,
    VersionsSeenMatrix,
    load_history,
)
from lgcheckpoint.viz.history import VIEW_LIMIT, short
from lgcheckpoint.viz.lineage import MAX_NODES
from lgcheckpoint.viz.versions import MAX_CHANNELS, MAX_ROWS

SCRIPT = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
DOT_BREAK = '"]; evil [label="injected"]; x -> y ['  # tries to close a DOT label
MATH = "$\\frac{1}{0}$ $unbalanced"  # matplotlib would parse $...$ as mathtext
TEXT_LIMIT = 400_000  # characters of any one viewer output, whatever the data holds


def write_thread(saver, thread_id: str, steps: list[dict], writes: dict[int, list] | None = None):
    """Put one checkpoint per entry of ``steps`` ({channel: value}), each the child of the last,
    every channel's version bumped; ``writes[i]`` = [(task_id, channel, value)] on checkpoint i."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    versions: dict[str, int] = {}
    for i, values in enumerate(steps):
        checkpoint = empty_checkpoint()
        for channel in values:
            versions[channel] = versions.get(channel, 0) + 1
        checkpoint["channel_values"] = dict(values)
        checkpoint["channel_versions"] = dict(versions)
        checkpoint["versions_seen"] = {name: {c: 1 for c in list(values)[:3]}
                                       for name in (f"node{IMG}", DOT_BREAK)}
        new = {c: versions[c] for c in values}
        config = saver.put(config, checkpoint, {"source": "loop", "step": i}, new)
        for task_id, channel, value in (writes or {}).get(i, []):
            saver.put_writes(config, [(channel, value)], task_id)
    return {"configurable": {"thread_id": thread_id}}


def outputs(saver, config) -> dict[str, str | bytes]:
    """Every static output and every widget HTML of every viewer, keyed by where it came from."""
    out: dict[str, str | bytes] = {}
    for name, viewer in [("lineage", LineageGraph(saver, config)),
                         ("table", ChannelVersionTable(saver, config)),
                         ("values", ChannelVersionTable(saver, config, show="values")),
                         ("matrix", VersionsSeenMatrix(saver, config)),
                         ("player", SuperStepPlayer(saver, config)),
                         ("storage", StorageView(saver, config))]:
        for mime, data in viewer._repr_mimebundle_().items():
            out[f"{name} {mime}"] = data
        if hasattr(viewer, "dot"):
            out[f"{name} dot"] = viewer.dot
    lineage = LineageGraph(saver, config)
    out["details text/plain"] = lineage.details()
    box = lineage.widget()
    out["lineage widget"] = box.children[0].svg + box.children[1].value
    return out


def assert_no_markup_from_data(out: dict) -> None:
    for where, data in out.items():
        if isinstance(data, bytes):
            assert data[:8] == b"\x89PNG\r\n\x1a\n", where
            continue
        assert len(data) < TEXT_LIMIT, (where, len(data))
        if where.endswith("text/plain"):
            continue  # shown as text, never parsed
        if where.endswith("dot"):  # data only inside quoted strings, never an HTML-like label
            assert "label=<" not in data, where
            continue
        low = data.lower()
        assert "<script" not in low and "<img" not in low and "onerror=\"" not in low, where


def node_count(svg: str) -> int:
    return svg.count('class="node"')


@pytest.fixture(params=["memory", "sqlite"])
def saver(request, tmp_path):
    if request.param == "memory":
        yield InMemorySaver()
    else:
        with SqliteSaver.from_conn_string(str(tmp_path / "foreign.sqlite")) as s:
            yield s


def test_markup_in_thread_ids_names_and_values(saver):
    thread = SCRIPT + IMG
    steps = [{f"chan{IMG}": SCRIPT, "branch:to:" + DOT_BREAK: None, MATH: IMG},
             {f"chan{IMG}": IMG + SCRIPT, "branch:to:" + DOT_BREAK: None, MATH: MATH}]
    writes = {1: [("task-1", f"chan{IMG}", SCRIPT), ("task-1", "__error__", SCRIPT),
                  ("task-1", "__interrupt__", IMG)]}
    config = write_thread(saver, thread, steps, writes)
    started = time.perf_counter()
    out = outputs(saver, config)
    print(f"markup case: {len(out)} outputs in {time.perf_counter() - started:.2f} s")
    assert_no_markup_from_data(out)
    # the DOT label that tries to close itself and add a node adds nothing: 2 checkpoints drawn
    assert node_count(out["lineage image/svg+xml"]) == 2
    assert "injected" not in re.sub(r"<text[^>]*>[^<]*</text>", "", out["lineage image/svg+xml"])
    assert "&lt;script&gt;" in out["table text/html"] or "&lt;img" in out["table text/html"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out["details text/plain"].replace("<", "&lt;"
                                                                             ).replace(">", "&gt;")


def test_a_100_mb_value_is_summarised(tmp_path):
    with SqliteSaver.from_conn_string(str(tmp_path / "huge.sqlite")) as saver:
        summarise_huge_value(saver)


def summarise_huge_value(saver):
    huge = "x" * 100_000_000
    config = write_thread(saver, "huge", [{"small": 1}, {"small": 2, "blob": huge}])
    started = time.perf_counter()
    out = outputs(saver, config)
    elapsed = time.perf_counter() - started
    assert_no_markup_from_data(out)  # every output stays under TEXT_LIMIT characters
    largest = max(len(v) for v in out.values())
    print(f"100 MB value in SQLite: 7 viewers (each reads the thread) in {elapsed:.2f} s, "
          f"largest output {largest:,} bytes")


def test_deeply_nested_values_are_summarised():
    saver = InMemorySaver()
    nested: object = "leaf"
    for _ in range(200):  # the serializer refuses deeper values; a foreign serde may not
        nested = [nested, {"k": nested}] if isinstance(nested, str) else [nested]
    config = write_thread(saver, "deep", [{"v": nested}, {"v": nested}])
    started = time.perf_counter()
    out = outputs(saver, config)
    print(f"nested 200 deep: {len(out)} outputs in {time.perf_counter() - started:.2f} s")
    assert_no_markup_from_data(out)
    much_deeper: object = []
    for _ in range(100_000):  # deeper than Python's recursion limit
        much_deeper = [much_deeper]
    assert short(much_deeper) == "[[[[[...]]]]]"


def test_ten_thousand_channels():
    saver = InMemorySaver()
    channels = {f"channel_{i:05d}": i for i in range(10_000)}
    config = write_thread(saver, "wide", [channels, {"channel_00000": -1}])
    started = time.perf_counter()
    out = outputs(saver, config)
    print(f"10,000 channels: {len(out)} outputs in {time.perf_counter() - started:.2f} s")
    assert_no_markup_from_data(out)
    table = out["table text/html"]
    header_cells = len(re.findall(r"<th[ >]", table))
    assert header_cells == MAX_CHANNELS + 1 + 2  # channels shown + 'checkpoint' + 2 row labels
    assert "9960 more channels not shown" in table
    for key in ("table image/png", "matrix image/png", "lineage image/png"):
        assert Image.open(io.BytesIO(out[key])).width <= 1008, key


def test_a_hundred_thousand_checkpoints():
    saver = InMemorySaver()
    started = time.perf_counter()
    config = write_thread(saver, "long", [{"n": i} for i in range(100_000)])
    written = time.perf_counter() - started
    started = time.perf_counter()
    lineage = LineageGraph(saver, config)
    svg = lineage.svg()
    opened = time.perf_counter() - started
    assert len(lineage.history) == VIEW_LIMIT and lineage.history.truncated
    assert node_count(svg) == MAX_NODES + 1  # the newest MAX_NODES and one 'older' box
    assert f"{VIEW_LIMIT - MAX_NODES} older checkpoints not drawn" in lineage.dot
    started = time.perf_counter()
    table = ChannelVersionTable(saver, config)._repr_html_()
    matrix = VersionsSeenMatrix(saver, config).png()
    tables = time.perf_counter() - started
    assert table.count("<tr>") == 1 + MAX_ROWS and "older checkpoints were not read" in table
    assert matrix[:4] == b"\x89PNG"
    everything = load_history(saver, config)  # reading all of it stays possible, on request
    assert len(everything) == 100_000 and not everything.truncated
    print(f"100,000 checkpoints: written in {written:.1f} s; lineage ({VIEW_LIMIT} read, "
          f"{MAX_NODES} drawn) {opened:.2f} s; table + matrix {tables:.2f} s")
