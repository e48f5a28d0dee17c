"""The course's own pictures, drawn with matplotlib from public data (histories, saved tuples).

Each function draws one idea a chapter explains and shows it (``plt.show()`` stores image/png):
``super_steps`` (01), ``versions_moving`` (02), ``checkpoint_anatomy`` (03),
``storage_side_by_side`` (05), ``bar_chart`` (06), ``conformance`` (13), ``task_runs`` (17).
Text is 12 pt (larger than the notebook's body text at 100 %), the
background is white in light and dark themes, and the colours are the viewers' (``viz/palette.py``):
yellow means changed in this step, as in the version table.
Nothing in the runtime imports this module. Next: lgcheckpoint/course.py
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
from matplotlib.patches import FancyBboxPatch, Patch

from lgcheckpoint.viz import palette
from lgcheckpoint.viz.history import History

FONT = 12
DPI = 100
MAX_WIDTH = 8.4  # inches: 840 px at 100 dpi fits the output area at 1280 px, browser open
BLUE, ORANGE, GREEN, GREY = palette.STRONG_BLUE, palette.STRONG_ORANGE, "#15803d", palette.LINE
# yellow: changed (ran) in this step, as the viewers
YELLOW, PALE_BLUE = palette.YELLOW, palette.BLUE
# constrained layout keeps tick labels and titles inside the figure's width (no wider PNG)
plt.rcParams.update({"font.size": FONT, "figure.facecolor": "white", "axes.facecolor": "white",
                     "savefig.facecolor": "white", "figure.constrained_layout.use": True})


def super_steps(history: History, title: str = "") -> None:
    """Checkpoints as vertical lines; between two of them, the tasks of one super-step."""
    steps = history.steps
    nodes = sorted({n for s in steps for n in s.next}, key=lambda n: min(
        i for i, s in enumerate(steps) if n in s.next))
    _, ax = plt.subplots(figsize=(min(MAX_WIDTH, 1.8 * len(steps) + 1), 0.7 * len(nodes) + 1.8),
                           dpi=DPI)
    for i, step in enumerate(steps):
        ax.plot([i, i], [-0.6, len(nodes) - 0.4], color=BLUE, lw=2)
        ax.text(i, -0.75, f"c{i}\nstep {step.step}", ha="center", va="top", color=BLUE,
                fontsize=FONT)
        for name in step.next:  # the tasks of the super-step that starts at this checkpoint
            y = len(nodes) - 1 - nodes.index(name)
            ax.add_patch(FancyBboxPatch((i + 0.12, y - 0.3), 0.76, 0.6, boxstyle="round,pad=0.02",
                                        facecolor=YELLOW, edgecolor=GREY, lw=1.5))
    ax.set_xlim(-0.5, len(steps) + (0.5 if steps and steps[-1].next else -0.3))
    ax.set_ylim(-1.8, len(nodes) - 0.3)
    ax.set_xticks([])
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_yticks([len(nodes) - 1 - i for i in range(len(nodes))], nodes, fontsize=FONT)
    ax.set_title(title or "blue lines: checkpoints; yellow boxes: the tasks of one super-step",
                 fontsize=FONT)
    plt.show()


def versions_moving(history: History, channels: list[str] | None = None, title: str = "") -> None:
    """A grid: rows are channels, columns checkpoints; orange cells are versions that moved."""
    steps = history.steps
    channels = channels or history.channels
    _, ax = plt.subplots(figsize=(min(MAX_WIDTH, 0.9 * len(steps) + 3.2),
                                    0.45 * len(channels) + 1.4), dpi=DPI)
    for col, step in enumerate(steps):
        parent = history[step.parent] if step.parent else None
        for row, channel in enumerate(channels):
            version = step.channel_versions.get(channel)
            before = parent.channel_versions.get(channel) if parent else None
            moved = version is not None and version != before
            ax.add_patch(plt.Rectangle((col, -row - 1), 1, 1, facecolor=YELLOW if moved else
                                       "white", edgecolor=GREY, lw=0.8))
            if version is not None:
                ax.text(col + 0.5, -row - 0.5, str(version), ha="center", va="center",
                        fontsize=FONT, color="black", weight="bold" if moved else "normal")
    ax.set_xlim(0, len(steps))
    ax.set_ylim(-len(channels), 0)
    ax.set_xticks([c + 0.5 for c in range(len(steps))],
                  [f"c{i}\nstep {s.step}" for i, s in enumerate(steps)], fontsize=FONT)
    ax.set_yticks([-r - 0.5 for r in range(len(channels))], channels, fontsize=FONT)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    ax.set_title(title or "channel versions per checkpoint (yellow: changed in this step; "
                 "blank: not written yet)", fontsize=FONT, pad=12)
    plt.show()


def clip(text: Any, width: int) -> str:
    """Text cut to ``width`` characters with an ellipsis."""
    text = str(text)
    return text if len(text) <= width else text[:width - 1] + "…"


def checkpoint_anatomy(saved: Any, width: int = 58) -> None:
    """One CheckpointTuple as nested boxes: the tuple's parts around the checkpoint's fields."""
    cp, md = saved.checkpoint, saved.metadata

    def number(version: Any) -> str:
        return str(version).split(".")[0].lstrip("0") or "0"

    def versions(mapping: dict) -> str:
        return clip(", ".join(f"{k}: {number(v)}" for k, v in mapping.items()), width)

    inner = [("v", str(cp["v"])), ("id", cp["id"]), ("ts", cp["ts"])]
    inner += [("channel_values" if i == 0 else "", clip(f"{k} = {v!r}", width))
              for i, (k, v) in enumerate(cp["channel_values"].items())]
    inner += [("channel_versions", versions(cp["channel_versions"]))]
    inner += [("versions_seen" if i == 0 else "", clip(f"{n}: {{{versions(seen)}}}", width))
              for i, (n, seen) in enumerate(cp["versions_seen"].items())]
    inner += [("updated_channels", clip(cp.get("updated_channels"), width))]
    before = [("config", clip(saved.config["configurable"], width)),
              ("metadata", clip({k: md[k] for k in ("source", "step", "parents") if k in md},
                                 width))]
    after = [("parent_config", "the previous checkpoint's config" if saved.parent_config
              else "None: this is the first checkpoint"),
             ("pending_writes", f"{len(saved.pending_writes or [])} writes saved after it")]
    lines = [("CheckpointTuple", "", 0)] + [(n, t, 1) for n, t in before]
    lines += [("checkpoint", "", 1)] + [(n, t, 2) for n, t in inner] + [(n, t, 1) for n, t in after]
    step = 0.5
    height = step * (len(lines) + 1)
    _, ax = plt.subplots(figsize=(MAX_WIDTH, height + 0.2), dpi=DPI)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, height)
    ax.axis("off")
    y_of = [height - step * (i + 1) for i in range(len(lines))]
    first, last = lines.index(("checkpoint", "", 1)), len(before) + 1 + len(inner)
    ax.add_patch(FancyBboxPatch((0.05, 0.1), 9.9, height - 0.3, boxstyle="round,pad=0.02",
                                facecolor=PALE_BLUE, edgecolor=BLUE, lw=2))
    ax.add_patch(FancyBboxPatch((0.3, y_of[last] - 0.3), 9.5, y_of[first] - y_of[last] + 0.6,
                                boxstyle="round,pad=0.02", facecolor="white",
                                edgecolor=ORANGE, lw=2))
    for (name, text, depth), y in zip(lines, y_of):
        colour = {"CheckpointTuple": BLUE, "checkpoint": ORANGE}.get(name, "black")
        ax.text(0.25 + 0.3 * depth, y, name, weight="bold", color=colour, fontsize=FONT,
                va="center")
        ax.text(3.3, y, text, family="monospace", fontsize=FONT - 1, va="center")
    plt.show()


def storage_side_by_side(views: dict[str, Any], title: str = "") -> None:
    """One panel per saver: bytes each checkpoint added, split into row / blobs / writes."""
    fig, axes = plt.subplots(1, len(views), figsize=(MAX_WIDTH, 3.6), dpi=DPI, sharey=True,
                             sharex=True)
    axes = axes if len(views) > 1 else [axes]
    for ax, (name, view) in zip(axes, views.items()):
        rows = view.per_checkpoint
        labels = [f"step {r.step}" for r in rows]
        parts = [("checkpoint row", [r.checkpoint / 1000 for r in rows], BLUE),
                 ("new blobs", [r.blob_bytes / 1000 for r in rows], ORANGE),
                 ("pending writes", [r.writes / 1000 for r in rows], GREEN)]
        left = [0.0] * len(rows)
        for label, kb, colour in parts:
            ax.barh(labels, kb, left=left, color=colour, label=label)
            left = [a + b for a, b in zip(left, kb)]
        total = sum(left)
        ax.set_title(f"{name}\n{total:.0f} kB in all", fontsize=FONT)
        ax.set_xlabel("kB added by this checkpoint", fontsize=FONT)
        ax.invert_yaxis() if ax is axes[0] else None
    axes[-1].legend(handles=[Patch(color=c, label=lbl) for lbl, _, c in parts], fontsize=FONT - 1,
                    loc="lower right")
    if title:
        fig.suptitle(title, fontsize=FONT)
    plt.show()


def bar_chart(values: dict[str, float], unit: str, title: str,
              colours: dict[str, str] | None = None) -> None:
    """A horizontal bar per label, its value written at the end of the bar."""
    fig, ax = plt.subplots(figsize=(min(MAX_WIDTH, 7.5), 0.55 * len(values) + 1.3), dpi=DPI)
    labels = list(values)
    bars = ax.barh(labels, list(values.values()),
                   color=[(colours or {}).get(k, BLUE) for k in labels])
    ax.bar_label(bars, [f"{v:g} {unit}" for v in values.values()], padding=4, fontsize=FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, max(values.values()) * 1.3 or 1)
    ax.set_title(title, fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    plt.show()


def conformance(scores: dict[str, tuple[int, int]], title: str) -> None:
    """One bar per capability of the conformance suite: tests passed (green) and failed (red)."""
    _, ax = plt.subplots(figsize=(min(MAX_WIDTH, 8.0), 0.5 * len(scores) + 1.3), dpi=DPI)
    names = list(scores)
    passed = [scores[n][0] for n in names]
    failed = [scores[n][1] for n in names]
    ax.barh(names, passed, color=GREEN, label="passed")
    ax.barh(names, failed, left=passed, color=palette.STRONG_RED, label="failed")
    for y, (ok, bad) in enumerate(zip(passed, failed)):
        ax.text(ok + bad + 0.3, y, f"{ok}/{ok + bad}", va="center", fontsize=FONT)
    ax.invert_yaxis()
    ax.set_xlim(0, max(p + f for p, f in zip(passed, failed)) * 1.25 or 1)
    ax.set_xlabel("tests", fontsize=FONT)
    ax.legend(fontsize=FONT - 1, loc="lower right")
    ax.set_title(title, fontsize=FONT)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    plt.show()


RUN_COLOURS = {"ran": YELLOW, "interrupted": palette.ORANGE, "saved result": PALE_BLUE,
               "not reached": "white"}


def task_runs(runs: dict[str, dict[str, str]], title: str = "") -> None:
    """One column per run of a thread, one row per task: did it run, stop, or reuse its saved
    result? ``runs`` maps a run's label to {task: one of RUN_COLOURS}."""
    tasks = list(dict.fromkeys(t for cells in runs.values() for t in cells))
    _, ax = plt.subplots(figsize=(min(MAX_WIDTH, 2.6 * len(runs) + 2.2), 0.65 * len(tasks) + 1.4),
                         dpi=DPI)
    for x, cells in enumerate(runs.values()):
        for y, task in enumerate(tasks):
            what = cells.get(task, "not reached")
            ax.add_patch(FancyBboxPatch((x + 0.06, len(tasks) - 1 - y - 0.32), 0.88, 0.64,
                                        boxstyle="round,pad=0.02", facecolor=RUN_COLOURS[what],
                                        edgecolor=GREY, lw=1.2))
            ax.text(x + 0.5, len(tasks) - 1 - y, what, ha="center", va="center", fontsize=FONT)
    ax.set_xlim(0, len(runs))
    ax.set_ylim(-0.6, len(tasks) - 0.4)
    ax.set_xticks([x + 0.5 for x in range(len(runs))], list(runs), fontsize=FONT)
    ax.set_yticks([len(tasks) - 1 - y for y in range(len(tasks))], tasks, fontsize=FONT)
    ax.tick_params(length=0)
    ax.xaxis.tick_top()
    for side in ax.spines.values():
        side.set_visible(False)
    if title:
        ax.set_title(title, fontsize=FONT, pad=12)
    plt.show()
