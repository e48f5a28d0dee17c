"""``lgcheckpoint tour`` and ``lgcheckpoint inspect``: the viewers without Jupyter.

``tour`` runs the travel planner on a SQLite file, answers its approval question, prints every
checkpoint and writes a standalone HTML report. ``inspect`` does the same for any checkpoint
database — a SQLite file or a Postgres URI, ours or LangGraph's — without building foreign types.
"""

from __future__ import annotations

import argparse
import base64
import html
import sqlite3
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

REQUIRED_SQLITE_TABLES = {"checkpoints", "writes"}


class CliError(Exception):
    """A problem the user can fix; printed as one line, exit code 2."""


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command."""
    parser = argparse.ArgumentParser(prog="lgcheckpoint", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    tour = commands.add_parser("tour", help="run the travel-planner tour and write an HTML report")
    tour.add_argument("--db", default="lgcheckpoint-tour.sqlite", help="SQLite file to write")
    tour.add_argument("--html", default="lgcheckpoint-tour.html", help="report to write")
    tour.add_argument("--answer", default="approve", help="the human's answer to the approval question")
    inspect = commands.add_parser("inspect", help="show the checkpoints of a SQLite file or Postgres URI")
    inspect.add_argument("db", help="a SQLite file, or a postgresql:// URI")
    inspect.add_argument("--thread", help="thread id (default: list the threads, show the first)")
    inspect.add_argument("--html", help="also write a standalone HTML report here")
    from lgcheckpoint.viz import studio_app  # the studio's page: its own module

    studio_app.add_arguments(commands.add_parser("studio", help="drive a graph live in a page"))
    args = parser.parse_args(argv)
    if args.command == "studio":
        return studio_app.main(args)
    try:
        with ExitStack() as stack:
            if args.command == "tour":
                saver, config = run_tour(stack, args.db, args.answer)
                print_history(saver, config)
                write_report(saver, config, args.html, title="lgcheckpoint tour")
            else:
                saver = open_saver(stack, args.db)
                config = {"configurable": {"thread_id": pick_thread(saver, args.thread)}}
                print_history(saver, config)
                if args.html:
                    write_report(saver, config, args.html, title=f"lgcheckpoint inspect {args.db}")
    except CliError as err:
        print(f"lgcheckpoint: {err}", file=sys.stderr)
        return 2
    return 0


def run_tour(stack: ExitStack, db: str, answer: str) -> tuple[Any, dict]:
    """Run the tour graph until its interrupt, then resume it with ``answer``."""
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver
    from lgcheckpoint.tour import build_tour_graph
    from lgcheckpoint.types import Command

    saver = stack.enter_context(SqliteSaver.from_conn_string(db))
    graph = build_tour_graph(saver)
    config = {"configurable": {"thread_id": "tour"}}
    saver.delete_thread("tour")  # a rerun starts the thread afresh
    asked = graph.invoke({"destination": "Kyoto", "days": 3}, config)["__interrupt__"][0].value
    print(f"the graph stopped and asks: {asked['question']} ({asked['plan']})  -> answering {answer!r}")
    result = graph.invoke(Command(resume=answer), config)
    print("final state:", {k: v for k, v in result.items() if k != "__interrupt__"})
    print(f"checkpoints saved in {db}\n")
    return saver, config


def open_saver(stack: ExitStack, target: str) -> Any:
    """A read-only-minded saver for a SQLite file or Postgres URI that builds no foreign types."""
    from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer(inspect=True)
    if target.startswith(("postgresql://", "postgres://")):
        from lgcheckpoint.checkpoint.postgres import PostgresSaver

        try:
            saver = stack.enter_context(PostgresSaver.from_conn_string(target))
        except Exception as err:
            raise CliError(f"cannot connect to {target}: {err}") from err
        saver.serde = serde
        return saver
    path = Path(target)
    if not path.is_file():
        raise CliError(f"no such file: {target} (give a SQLite checkpoint database or a postgresql:// URI)")
    try:
        conn = stack.enter_context(sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False))
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as err:
        raise CliError(f"{target} is not a SQLite database ({err})") from err
    if not REQUIRED_SQLITE_TABLES <= tables:
        raise CliError(f"{target} has no checkpoint tables (found: {sorted(tables) or 'none'}); "
                       "was it written by SqliteSaver?")
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(conn, serde=serde)
    saver.is_setup = True  # read only: never create tables in someone else's file
    return saver


def pick_thread(saver: Any, wanted: str | None) -> str:
    """The thread to show: the one asked for, else the first; list them either way."""
    threads = sorted({t.config["configurable"]["thread_id"] for t in saver.list(None)})
    if not threads:
        raise CliError("the database holds no checkpoints")
    print(f"threads: {', '.join(threads)}")
    if wanted is None:
        return threads[0]
    if wanted not in threads:
        raise CliError(f"unknown thread {wanted!r}; the database has: {', '.join(threads)}")
    return wanted


def print_history(saver: Any, config: dict) -> None:
    """One line per checkpoint, oldest first: the lineage as text."""
    from lgcheckpoint.viz import load_history

    history = load_history(saver, config)
    print(f"thread {config['configurable']['thread_id']!r}: {len(history)} checkpoints")
    for step in history.steps:
        marks = " [interrupt]" * bool(step.interrupts) + " [error]" * bool(step.errors)
        parent = step.parent or "-"
        print(f"  {step.key:<4} step {step.step:>3} {step.source:<6} parent {parent:<4} "
              f"updated {','.join(step.updated_channels) or '-':<30} next {','.join(step.next) or '-'}{marks}")


def write_report(saver: Any, config: dict, out: str, title: str) -> None:
    """A standalone HTML page: lineage SVG, version table, versions_seen matrix."""
    from lgcheckpoint.viz import ChannelVersionTable, GraphvizNotFound, LineageGraph, VersionsSeenMatrix

    parts = [f"<h1>{html.escape(title)}</h1>"]
    try:
        parts += ["<h2>Lineage</h2>", LineageGraph(saver, config).svg()]
    except GraphvizNotFound as err:
        parts += ["<h2>Lineage</h2>", f"<p>{html.escape(str(err))}</p>"]
    parts += ["<h2>Channel versions</h2>",  # wide tables scroll instead of overflowing the page
              f"<div style='overflow-x:auto'>{ChannelVersionTable(saver, config)._repr_html_()}</div>"]
    png = VersionsSeenMatrix(saver, config).png()
    parts += ["<h2>versions_seen at the head</h2>",
              f'<img alt="versions_seen matrix" src="data:image/png;base64,{base64.b64encode(png).decode()}">']
    Path(out).write_text("<!doctype html><meta charset='utf-8'><body style='font-family:sans-serif'>"
                         + "\n".join(parts) + "</body>")
    print(f"\nreport written to {out}")
