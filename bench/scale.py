"""Benchmark: how cost grows with thread length, thread count, fan-out, state width and workers.

    python bench/scale.py [--quick] [--only thread,threads,fanout,width,workers,concurrent,floor]
                          [--repeats 3] [--out bench/results]

Each point runs each library (LangGraph, lgcheckpoint) in its own fresh subprocess
(bench/scale_work.py), the two alternating (A/B, then B/A) so background load hits both alike;
figures are medians over ``--repeats``. One dimension is swept at a time; the slope of a curve on
log-log axes (the fitted exponent: 0 = flat, 1 = linear) is what we compare, since a machine
shared with other work slows everything by a constant factor but leaves slopes alone.

Writes ``scale.json`` (every raw figure), one PNG per dimension (``scale-<sweep>.png``) and
``scale.md`` (the exponent table) into ``--out``. A Postgres row needs a server at
``LGCHECKPOINT_POSTGRES_URI``; a scratch database is created and dropped afterwards.
Next: bench/scale_work.py (what one subprocess measures).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from bench_runtime import scratch_postgres  # bench/ is on the path: the scripts run from there

PACKAGES = ["langgraph", "lgcheckpoint"]
LABELS = {"langgraph": "LangGraph 1.2.24", "lgcheckpoint": "lgcheckpoint"}
WORK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scale_work.py")
POSTGRES = os.environ.get(
    "LGCHECKPOINT_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres")

# sizes per sweep (and saver): full, then --quick
SIZES = {
    ("thread", "memory"): ([100, 1000, 10_000], [100, 1000]),
    ("thread", "sqlite"): ([100, 1000, 10_000, 100_000], [100, 1000]),
    ("thread", "postgres"): ([100, 1000, 10_000, 100_000], [100, 1000]),
    ("threads", "memory"): ([10, 100, 1000, 10_000], [10, 1000]),
    ("threads", "sqlite"): ([10, 100, 1000, 10_000, 100_000], [10, 1000]),
    ("threads", "postgres"): ([10, 100, 1000, 10_000, 100_000], [10, 300]),
    ("fanout", None): ([10, 100, 1000], [10, 300]),
    ("width", None): ([10, 100, 1000], [10, 1000]),
    ("workers", None): ([1, 2, 4, 8], [1, 2]),
    ("concurrent", None): ([1, 10, 100, 1000], [1, 30]),
}
SAVERS = {"thread": ["memory", "sqlite", "postgres"], "threads": ["memory", "sqlite", "postgres"],
          "fanout": [None], "width": [None], "workers": [None], "concurrent": [None],
          "floor": ["sqlite", "postgres"]}
UNITS = {"bytes": "bytes", "step_bytes": "bytes", "step_wal": "bytes", "floor_wal": "bytes",
         "steps_per_s": "super-steps/s"}
SHORT = {"langgraph": "LG", "lgcheckpoint": "ours"}


def run_work(job: dict) -> dict:
    """One subprocess of scale_work.py; its JSON answer, or {"error": last line of stderr}."""
    proc = subprocess.run([sys.executable, WORK, json.dumps(job)], capture_output=True,
                          text=True, timeout=3600, check=False)
    if proc.returncode:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def fresh_schema(pg_uri: str) -> str:
    """A new empty schema in the scratch database: each subprocess starts with empty tables."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    schema = f"s_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return make_conninfo(pg_uri, options=f"-csearch_path={schema}")


def where_for(saver: str | None, package: str, tmp: str, pg_uri: str | None) -> str:
    if saver == "sqlite":
        return os.path.join(tmp, f"{package}-{uuid.uuid4().hex[:8]}.sqlite")
    if saver == "postgres" or saver is None and pg_uri:
        return fresh_schema(pg_uri) if pg_uri else ""
    return ""


def run_workers(package: str, count: int, pg_uri: str, seconds: float) -> dict:
    """``count`` processes on one Postgres, released together once all are ready; steps/s."""
    procs = [subprocess.Popen(
        [sys.executable, WORK, json.dumps({"sweep": "workers", "package": package,
                                           "where": fresh_schema(pg_uri), "seconds": seconds})],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(count)]
    for proc in procs:  # each says "ready" when imported, connected and warm
        proc.stdout.readline()
    for proc in procs:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write("go\n")
            proc.stdin.flush()
    rate = 0.0
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        if proc.returncode:
            return {"error": (err.strip().splitlines() or ["failed"])[-1][:200]}
        answer = json.loads(out.strip().splitlines()[-1])
        rate += answer["steps"] / answer["elapsed"]
    return {"steps_per_s": rate}


def measure(sweep: str, saver: str | None, size: int | None, repeats: int, tmp: str,
            pg_uri: str | None, quick: bool) -> dict:
    """Medians per package and metric at one point of one sweep."""
    runs: dict[str, list[dict]] = {p: [] for p in PACKAGES}
    for i in range(repeats):
        for package in PACKAGES if i % 2 == 0 else PACKAGES[::-1]:  # A/B, then B/A
            if sweep == "workers":
                runs[package].append(run_workers(package, size, pg_uri, 5 if quick else 10))
                continue
            job = {"sweep": sweep, "package": package, "saver": saver, "size": size,
                   "where": where_for(saver, package, tmp, pg_uri), "quick": quick}
            runs[package].append(run_work(job))
    result = {}
    for package, answers in runs.items():
        errors = [a["error"] for a in answers if "error" in a]
        if errors:
            result[package] = {"error": errors[-1]}
            continue
        result[package] = {k: statistics.median(a[k] for a in answers) for k in answers[0]
                           if answers[0][k] is not None}
    return result


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares exponent b of y = a * x^b over the points (log-log)."""
    points = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y and y > 0]
    if len(points) < 2:
        return None
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx


def curves(results: dict) -> dict:
    """{(sweep, saver, metric): {package: [(size, value), ...]}} from the raw results."""
    out: dict = {}
    for key, by_size in results.items():
        sweep, saver = key.split("/")
        for size, by_package in by_size.items():
            for package, metrics in by_package.items():
                for metric, value in metrics.items():
                    if metric in ("error", "step_bytes"):
                        continue
                    curve = out.setdefault((sweep, saver, metric), {})
                    curve.setdefault(package, []).append((int(size), value))
    return out


def table(results: dict) -> str:
    """Markdown: every curve's exponent for both libraries, and its values at both ends."""
    lines = [("| sweep | saver | metric | LangGraph exponent | ours exponent "
              "| LangGraph (smallest → largest) | ours (smallest → largest) |"),
             "|---|---|---|---:|---:|---|---|"]
    for (sweep, saver, metric), by_package in sorted(curves(results).items()):
        if sweep == "floor":
            continue
        cells = []
        for package in PACKAGES:
            points = sorted(by_package.get(package, []))
            s = slope(points)
            cells.append(("—" if s is None else f"{s:.2f}",
                          " → ".join(fmt(v, metric) for _, v in points[:1] + points[-1:])))
        lines.append(f"| {sweep} | {saver} | {metric} | {cells[0][0]} | {cells[1][0]} "
                     f"| {cells[0][1]} | {cells[1][1]} |")
    return "\n".join(lines)


def floor_table(results: dict) -> str:
    """Per-step cost with durability="sync" as a multiple of one bare commit of the same bytes.

    Then where the step's time goes (µs): the loop alone (no saver), the saver's work with the
    commit flush off (less the loop), and the flush (the step with it on, less without); the
    floor's bare INSERT split the same way.
    """
    lines = ["| saver | package | µs per durable step | bare commit µs | step / floor "
             "| step: loop + saver + flush | floor: insert + flush | WAL bytes: step / floor |",
             "|---|---|---:|---:|---:|---|---|---|"]
    for key, by_size in results.items():
        if not key.startswith("floor/"):
            continue
        for package, m in next(iter(by_size.values())).items():
            if "error" in m:
                lines.append(f"| {key[6:]} | {package} | failed: {m['error']} | | | | | |")
                continue
            us = {name: value * 1e6 for name, value in m.items()}
            step_split = floor_split = wal = "—"  # runs from before the split was measured lack it
            if "step_no_flush" in us:
                loop, no_flush, floor_no_flush = (
                    us["loop_only"], us["step_no_flush"], us["floor_no_flush"])
                step_split = f"{loop:.0f} + {no_flush - loop:.0f} + {us['step'] - no_flush:.0f}"
                floor_split = f"{floor_no_flush:.0f} + {us['floor'] - floor_no_flush:.0f}"
                wal = f"{m['step_wal']:,.0f} / {m['floor_wal']:,.0f}"
            lines.append(f"| {key[6:]} | {package} | {us['step']:.0f} | {us['floor']:.0f} "
                         f"| {m['step'] / m['floor']:.2f} | {step_split} | {floor_split} | {wal} |")
    return "\n".join(lines)


def fmt(value: float, metric: str) -> str:
    if metric in UNITS:
        return f"{value:,.0f} {UNITS[metric]}"
    return f"{value * 1e3:.3g} ms" if value >= 1e-3 else f"{value * 1e6:.3g} µs"


TITLES = {"none": "per step, no saver", "memory": "per step, InMemorySaver",
          "per_task": "per Send task (InMemorySaver)", "steps_per_s": "total throughput"}
XLABELS = {"thread": "checkpoints in the thread", "threads": "threads in the database",
           "fanout": "Send tasks in one step", "width": "channels (one changed per step)",
           "workers": "worker processes on one Postgres",
           "concurrent": "concurrent ainvoke on one AsyncPostgresSaver"}


def plot(results: dict, out_dir: str) -> list[str]:
    """One PNG per sweep: a panel per (saver, metric), both libraries on log-log axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 13})
    by_sweep: dict[str, list] = {}
    for (sweep, saver, metric), by_package in sorted(curves(results).items()):
        if sweep != "floor":
            by_sweep.setdefault(sweep, []).append((saver, metric, by_package))
    written = []
    for sweep, panels in by_sweep.items():
        cols = min(4, len(panels))
        rows = math.ceil(len(panels) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.9 * rows), squeeze=False)
        for ax, (saver, metric, by_package) in zip(axes.flat, panels):
            for package, style in zip(PACKAGES, ("o--", "s-")):
                points = sorted(by_package.get(package, []))
                if points:
                    s = slope(points)
                    ax.loglog(*zip(*points), style, label=f"{LABELS[package]} "
                              f"(slope {s:.2f})" if s is not None else LABELS[package])
            name = TITLES.get(metric, metric)
            title = name if saver == "None" else f"{saver}: {name}"
            ax.set_title(title, fontsize=13)
            ax.set_ylabel(UNITS.get(metric, "seconds"), fontsize=12)
            ax.legend(fontsize=12)
            ax.grid(True, which="major", alpha=0.3)
        for ax in list(axes.flat)[len(panels):]:
            ax.axis("off")
        fig.supxlabel(XLABELS[sweep], fontsize=14)
        fig.tight_layout()
        path = os.path.join(out_dir, f"scale-{sweep}.png")
        fig.savefig(path, dpi=80)
        plt.close(fig)
        written.append(path)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes, one run each (<5 min)")
    ap.add_argument("--only", default="thread,threads,fanout,width,workers,concurrent,floor")
    ap.add_argument("--repeats", type=int, default=None, help="runs per point (default 3; quick 1)")
    ap.add_argument("--max-size", type=int, default=None, help="leave out larger sizes")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(WORK), "results"))
    ap.add_argument("--replot", nargs="+", metavar="JSON",
                    help="measure nothing: merge these scale.json files, write plots and table")
    args = ap.parse_args()
    repeats = args.repeats or (1 if args.quick else 3)
    os.makedirs(args.out, exist_ok=True)
    results: dict = {}
    for path in args.replot or ():
        with open(path) as f:
            results.update(json.load(f))
    json_path = os.path.join(args.out, "scale.json")
    if args.replot:
        args.only = ""
        with open(json_path, "w") as f:
            json.dump(results, f, indent=1)
    database = contextlib.nullcontext() if args.replot else scratch_postgres()
    with tempfile.TemporaryDirectory() as tmp, database as pg_uri:
        for sweep in filter(None, args.only.split(",")):
            for saver in SAVERS[sweep]:
                if (saver == "postgres" or sweep in ("workers", "concurrent")) and not pg_uri:
                    continue
                sizes = [None] if sweep == "floor" else [
                    n for n in SIZES[(sweep, saver)][args.quick] if n <= (args.max_size or n)]
                key = f"{sweep}/{saver}"
                for size in sizes:
                    started = time.perf_counter()
                    point = measure(sweep, saver, size, repeats, tmp, pg_uri, args.quick)
                    results.setdefault(key, {})[str(size or 0)] = point
                    print(f"{key:<22}{size or '':>8}  {time.perf_counter() - started:6.1f} s  "
                          + "  ".join(f"{SHORT[p]}: " + ", ".join(
                              f"{k}={fmt(v, k)}" for k, v in m.items() if k != "error")
                              + (f" FAILED {m['error']}" if "error" in m else "")
                              for p, m in point.items()), flush=True)
                    with open(json_path, "w") as f:  # after every point: a crash keeps the rest
                        json.dump(results, f, indent=1)
    run = "replotted" if args.replot else "--quick" if args.quick else "full"
    runs = "" if args.replot else f", {repeats} run(s) per point"
    report = (f"Exponents (slope on log-log axes), {run} run{runs}\n\n"
              f"{table(results)}\n\n{floor_table(results)}\n")
    with open(os.path.join(args.out, "scale.md"), "w") as f:
        f.write(report)
    print(report)
    print("plots:", ", ".join(plot(results, args.out)))


if __name__ == "__main__":
    main()
