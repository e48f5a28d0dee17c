"""``lgcheckpoint tour`` and ``lgcheckpoint inspect``: the viewers without Jupyter.

``tour`` runs the travel planner on a SQLite file, answers its approval question, prints every
checkpoint and writes a standalone HTML report. ``inspect`` does the same for any checkpoint
database — a SQLite file or a Postgres URI, ours or LangGraph's — without building foreign types
and without changing anything: a SQLite file is opened immutable (no ``-wal``/``-shm`` files
appear beside it) unless a writer's WAL is live, a Postgres session is read-only. Every problem
the user can fix is one line on stderr (exit code 2); a reader that stops early (``| head``) ends
the output quietly.
"""

from __future__ import annotations

import argparse
import base64
import html
import os
import sqlite3
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

REQUIRED_SQLITE_TABLES = {"checkpoints", "writes"}
REQUIRED_POSTGRES_TABLES = ("checkpoints", "checkpoint_writes", "checkpoint_blobs")
# a foreign database can hold anything: the terminal gets bounded lines
THREADS_LISTED = 20  # thread ids named in the "threads:" line
LINES_PER_HISTORY = 200  # newest checkpoints printed per namespace (--all prints every one)
NAMESPACES_LISTED = 20  # subgraph namespaces printed (--all prints every one)
FIELD_WIDTH = 60  # characters of one name (thread id, channel, node) before it is cut
# what the plain install lacks, by the extra that brings it (a Postgres URI needs the driver)
EXTRA_OF = {"psycopg": "postgres", "psycopg_pool": "postgres", "aiosqlite": "sqlite",
            "ipywidgets": "viz", "anywidget": "viz", "voila": "studio", "nbformat": "studio",
            "jupyterlab": "all"}


class CliError(Exception):
    """A problem the user can fix; printed as one line, exit code 2."""


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one command."""
    parser = argparse.ArgumentParser(prog="lgcheckpoint", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    tour = commands.add_parser("tour", help="run the travel-planner tour and write an HTML report")
    tour.add_argument("--db", default="lgcheckpoint-tour.sqlite", help="SQLite file to write")
    tour.add_argument("--html", default="lgcheckpoint-tour.html", help="report to write")
    tour.add_argument("--answer", default="approve",
                      help="the human's answer to the approval question")
    inspect = commands.add_parser("inspect",
                                  help="show the checkpoints of a SQLite file or Postgres URI")
    inspect.add_argument("db", help="a SQLite file, or a postgresql:// URI")
    inspect.add_argument("--thread", help="thread id (default: list the threads, show the first)")
    inspect.add_argument("--html", help="also write a standalone HTML report here")
    inspect.add_argument("--all", action="store_true",
                         help=f"print every checkpoint (default: the newest {LINES_PER_HISTORY} "
                              "of each namespace)")
    run = commands.add_parser("run", help="run a LangGraph program unchanged on lgcheckpoint")
    run.add_argument("--inspect", action="store_true",
                     help="afterwards, print the checkpoints of every saver the program left")
    run.add_argument("script", help="a Python file that imports langgraph")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the program's own arguments")
    from lgcheckpoint.viz import studio_app  # the studio's page: its own module

    studio_app.add_arguments(commands.add_parser("studio", help="drive a graph live in a page"))
    course = commands.add_parser("course", help="copy the course into a folder and open JupyterLab")
    course.add_argument("dir", nargs="?", default="lgcheckpoint-course",
                        help="folder for the notebooks (default: ./lgcheckpoint-course)")
    course.add_argument("--no-lab", action="store_true", help="only copy; do not start JupyterLab")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run_program(args.script, args.args, args.inspect)
    if args.command == "studio":
        try:
            return studio_app.main(args)
        except ModuleNotFoundError as err:  # the studio page needs its extra
            return missing_extra(err)
    if args.command == "course":
        return open_course(args.dir, lab=not args.no_lab)
    try:
        check_report_path(args.html)
        with ExitStack() as stack:
            if args.command == "tour":
                saver, config = run_tour(stack, args.db, args.answer)
                print_history(saver, config)
                write_report(saver, config, args.html, title="lgcheckpoint tour")
            else:
                saver = open_saver(stack, args.db)
                config = {"configurable": {"thread_id": pick_thread(saver, args.thread)}}
                print_history(saver, config, every=args.all)
                if args.html:
                    write_report(saver, config, args.html, title=f"lgcheckpoint inspect {args.db}")
    except CliError as err:
        print(f"lgcheckpoint: {one_line(err)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:  # a Postgres URI needs the driver
        return missing_extra(err)
    return 0


def missing_extra(err: ModuleNotFoundError) -> int:
    """A package of an extra is missing: name the extra in one line, not a traceback."""
    extra = EXTRA_OF.get((err.name or "").partition(".")[0])
    if extra is None:  # not an extra's package: a real bug, shown as one
        raise err
    print(f"lgcheckpoint: this needs {err.name}: pip install \"lgcheckpoint[{extra}]\"",
          file=sys.stderr)
    return 2


def open_course(folder: str, lab: bool) -> int:
    """Copy the course into ``folder`` and replace this process with JupyterLab on chapter 00."""
    import importlib.util

    from lgcheckpoint.course import FIRST_CHAPTER, CourseNotCopied, copy_course

    if lab and importlib.util.find_spec("jupyterlab") is None:  # say so before copying anything
        print("lgcheckpoint: JupyterLab is not installed: pip install \"lgcheckpoint[all]\" "
              "(or copy only, with --no-lab)", file=sys.stderr)
        return 2
    try:
        copied = copy_course(folder)
    except CourseNotCopied as err:
        print(f"lgcheckpoint: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a folder we may not write, a full disk
        print(f"lgcheckpoint: cannot copy the course into {folder}: {err.strerror or err}",
              file=sys.stderr)
        return 2
    say(f"course in {folder}: {len(copied)} files copied" if copied
        else f"course in {folder}: already there, nothing copied")
    if lab:
        os.chdir(folder)
        os.execv(sys.executable, [sys.executable, "-m", "jupyterlab", FIRST_CHAPTER])
    return 0


def run_program(script: str, args: list[str], inspect: bool = False) -> int:
    """Run ``script`` as ``__main__`` with every ``langgraph`` import served by lgcheckpoint."""
    import runpy

    from lgcheckpoint import swap

    if not Path(script).is_file():
        print(f"lgcheckpoint: no such file: {script} (give the Python file to run)",
              file=sys.stderr)
        return 2
    swap.install()
    sys.argv = [script, *args]  # what the program sees, as under `python script args`
    sys.path[0] = str(Path(script).resolve().parent)  # its own folder, as `python script` has
    try:
        runpy.run_path(script, run_name="__main__")
    finally:  # also after an error: where it stopped is what a learner wants to see
        if inspect:
            inspect_savers()
    return 0


def inspect_savers() -> None:
    """``run --inspect``: each saver still alive, printed as ``inspect`` prints a database.

    Its checkpoints and writes are copied into an in-memory SQLite saver that stores them as
    LangGraph's SqliteSaver does; ``print_history`` reads that copy (no foreign types built)."""
    import gc
    from itertools import groupby

    from lgcheckpoint.checkpoint.base import BaseCheckpointSaver
    from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    savers = [obj for obj in gc.get_objects() if isinstance(obj, BaseCheckpointSaver)]
    say(f"\nlgcheckpoint run --inspect: {len(savers)} checkpoint saver(s) left by the program")
    for saver in savers:
        tuples = read_all(saver)
        if isinstance(tuples, str):
            say(f"{type(saver).__name__}: cannot be read after the run ({tuples})")
            continue
        copy = SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False),
                           serde=JsonPlusSerializer(inspect=True))
        for saved in tuples:
            where = {**saved.config["configurable"], **(saved.parent_config or {}).get(
                "configurable", {"checkpoint_id": None})}
            if where["checkpoint_id"] is None:  # the first checkpoint of a namespace
                del where["checkpoint_id"]
            stored = copy.put({"configurable": where}, saved.checkpoint, saved.metadata,
                              saved.checkpoint["channel_versions"])
            for task_id, writes in groupby(saved.pending_writes or [], key=lambda w: w[0]):
                copy.put_writes(stored, [(channel, value) for _, channel, value in writes],
                                task_id)
        threads = sorted({str(saved.config["configurable"]["thread_id"]) for saved in tuples})
        say(f"{type(saver).__name__}: {len(tuples)} checkpoints, threads: "
            f"{', '.join(plain(t) for t in threads)}")
        for thread in threads:
            print_history(copy, {"configurable": {"thread_id": thread}})


def read_all(saver: Any) -> list | str:
    """Every checkpoint of a saver, or why it cannot be read (its connection or loop closed)."""
    import warnings

    with warnings.catch_warnings():  # an async saver's dead loop leaves a coroutine unawaited
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return list(saver.list(None))
        except Exception as err:  # noqa: BLE001 - any failure: say it, go on to the next saver
            return one_line(err)


def one_line(err: BaseException) -> str:
    """Driver messages span lines (psycopg adds hints); the terminal gets one."""
    return " ".join(str(err).split())


def say(text: str = "") -> None:
    """Print a line; if the reader has gone (``| head``), keep working with output discarded."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def check_report_path(out: str | None) -> None:
    """Refuse a report path we cannot write before printing anything."""
    if out is None:
        return
    folder = Path(out).resolve().parent
    if not folder.is_dir():
        raise CliError(f"cannot write the report {out}: folder {folder} does not exist "
                       "(create it, or give --html a path in an existing folder)")
    if Path(out).is_dir():
        raise CliError(f"cannot write the report {out}: it is a folder; give a file name")


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
    say(f"the graph stopped and asks: {asked['question']} ({asked['plan']})  "
        f"-> answering {answer!r}")
    result = graph.invoke(Command(resume=answer), config)
    state = {k: v for k, v in result.items() if k != "__interrupt__"}
    if result.get("__interrupt__"):  # a rejected plan is redrafted and asked about again
        again = result["__interrupt__"][0].value
        say(f"the graph stopped again and asks: {again['question']} ({again['plan']}); "
            "it waits for an answer (no final state yet)")
        say(f"state so far: {state}")
    else:
        say(f"final state: {state}")
    say(f"checkpoints saved in {db}\n")
    return saver, config


def open_saver(stack: ExitStack, target: str) -> Any:
    """A read-only saver for a SQLite file or Postgres URI that builds no foreign types."""
    from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer(inspect=True)
    if target.startswith(("postgresql://", "postgres://")):
        return open_postgres(stack, target, serde)
    path = Path(target)
    if not path.is_file():
        raise CliError(f"{not_a_database(target)}: "
                       "give a SQLite checkpoint database file or a postgresql:// URI")
    try:
        conn = stack.enter_context(
            sqlite3.connect(read_only_uri(path), uri=True, check_same_thread=False))
        tables = {row[0] for row in
                  conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.DatabaseError as err:
        raise CliError(f"{target} is not a SQLite database we can read ({one_line(err)})") from err
    if not REQUIRED_SQLITE_TABLES <= tables:
        raise CliError(f"{target} has no checkpoint tables (found: {sorted(tables) or 'none'}); "
                       "was it written by SqliteSaver?")
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(conn, serde=serde)
    saver.is_setup = True  # read only: never create tables in someone else's file
    return saver


def not_a_database(target: str) -> str:
    """Why ``target`` names no database we can open, in the user's words."""
    scheme = target.partition("://")[0] if "://" in target else ""
    if not target.strip():
        return "no database given (an empty name)"
    if scheme:
        return f"{scheme}:// databases are not supported (only SQLite and Postgres)"
    if Path(target).is_dir():
        return f"{target} is a folder, not a database file"
    return f"no such file: {target}"


def read_only_uri(path: Path) -> str:
    """Immutable when the file holds everything; read-only when a writer's WAL is live."""
    uri = path.resolve().as_uri()
    if Path(f"{path}-wal").exists():  # a live WAL holds the newest pages: read it too
        return uri + "?mode=ro"
    return uri + "?immutable=1"  # no locks, no -wal/-shm files: the folder is left as it was


def open_postgres(stack: ExitStack, target: str, serde: Any) -> Any:
    """A read-only session on a database that has the checkpoint tables."""
    import psycopg

    from lgcheckpoint.checkpoint.postgres import PostgresSaver

    try:
        conn = stack.enter_context(psycopg.connect(
            target, autocommit=True, prepare_threshold=0, connect_timeout=10,
            options="-c default_transaction_read_only=on"))
        found = conn.execute("SELECT " + ", ".join(
            f"to_regclass('{t}')" for t in REQUIRED_POSTGRES_TABLES)).fetchone()
    except psycopg.Error as err:
        raise CliError(f"cannot read {target}: {one_line(err)}") from err
    if missing := [t for t, oid in zip(REQUIRED_POSTGRES_TABLES, found) if oid is None]:
        raise CliError(
            f"{target} has no checkpoint tables (missing: {', '.join(missing)}); inspect only "
            "reads and never creates them: give the database (and search_path) your graph's "
            "PostgresSaver writes to")
    return PostgresSaver(conn, serde=serde)


def pick_thread(saver: Any, wanted: str | None) -> str:
    """The thread to show: the one asked for, else the first; name a few of them either way."""
    marker = "?" if isinstance(saver.conn, sqlite3.Connection) else "%s"
    total = saver.conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
    if not total:
        raise CliError("the database holds no checkpoints")
    first = [row[0] for row in saver.conn.execute(  # by SQL: no checkpoint is read for a name
        f"SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id LIMIT {THREADS_LISTED}")]
    more = f" … ({total} threads; --thread picks one)" if total > len(first) else ""
    say(f"threads: {', '.join(plain(t) for t in first)}{more}")
    if wanted is None:
        return first[0]
    found = saver.conn.execute(
        f"SELECT 1 FROM checkpoints WHERE thread_id = {marker} LIMIT 1", (wanted,)).fetchone()
    if found is None:
        raise CliError(f"unknown thread '{plain(wanted)}'; the database has: "
                       f"{', '.join(plain(t) for t in first)}{more}")
    return wanted


def plain(value: Any, width: int = FIELD_WIDTH) -> str:
    """Stored text as one safe terminal field: control characters escaped, long text cut."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(value))
    return text if len(text) <= width else text[:width - 1] + "…"


def print_history(saver: Any, config: dict, every: bool = False) -> None:
    """One line per checkpoint, oldest first: the root graph, then each subgraph namespace.
    Without --all only the newest LINES_PER_HISTORY of a namespace are read (counted in SQL), so
    a thread of any length prints at once; keys still number the namespace's whole history."""
    from lgcheckpoint.viz.conversation import change_lines
    from lgcheckpoint.viz.deltas import delta_marks
    from lgcheckpoint.viz.history import build_history

    thread_id = config["configurable"]["thread_id"]
    counts = namespace_counts(saver, thread_id)
    total, subs = sum(counts.values()), len(counts) - 1
    split = f" ({counts['']} in the root graph, {total - counts['']} in {subs} subgraph " \
            f"namespace{'s' * (subs != 1)})" if subs else ""
    say(f"thread '{plain(thread_id)}': {total} checkpoints{split}")
    shown = list(counts) if every else list(counts)[:NAMESPACES_LISTED + 1]
    for ns in shown:
        if ns:
            say(f" subgraph '{plain(ns, 2 * FIELD_WIDTH)}': {counts[ns]} checkpoints")
        where = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
        tuples = list(saver.list(where, limit=None if every else LINES_PER_HISTORY))
        part = build_history(str(thread_id), ns, tuples)
        older = counts[ns] - len(part.steps)  # the window's first step is number `older`
        if older:
            say(f"  … {older} older checkpoints not shown (--all shows them)")
        parents = {t.checkpoint["id"]: (t.parent_config or {}).get("configurable", {}).get(
            "checkpoint_id") for t in tuples}
        for step in part.steps:
            marks = " [interrupt]" * bool(step.interrupts) + " [error]" * bool(step.errors)
            marks += plain(delta_marks(step.values, older), 2 * FIELD_WIDTH)
            parent_id = parents[step.checkpoint_id]
            parent = "-" if parent_id is None else f"c{older + int(step.parent[1:])}" \
                if step.parent else f"c{rank(saver, where, parent_id)}"
            updated = plain(",".join(step.updated_channels) or "-")
            after = plain(",".join(step.next)) or "-"
            say(f"  c{older + step.index:<3} step {step.step:>3} {plain(step.source, 8):<6} "
                f"parent {parent:<4} updated {updated:<30} next {after}{marks}")
            for line in change_lines(step, part[step.parent] if step.parent else None):
                say(f"       {line}")  # the conversation: what this checkpoint added or dropped
    if len(shown) < len(counts):
        say(f" … {len(counts) - len(shown)} more subgraph namespaces (--all shows them)")


def namespace_counts(saver: Any, thread_id: str) -> dict[str, int]:
    """Checkpoints per namespace of a thread, root ("") first, then the subgraphs by name."""
    marker = "?" if isinstance(saver.conn, sqlite3.Connection) else "%s"
    rows = saver.conn.execute(
        "SELECT checkpoint_ns, count(*) FROM checkpoints WHERE thread_id = "
        f"{marker} GROUP BY checkpoint_ns", (thread_id,)).fetchall()
    counts = {ns: n for ns, n in rows}
    return {"": counts.pop("", 0), **dict(sorted(counts.items()))}


def rank(saver: Any, where: dict, checkpoint_id: str) -> int:
    """A checkpoint's number in its namespace (how many are older), for a parent not read."""
    marker = "?" if isinstance(saver.conn, sqlite3.Connection) else "%s"
    conf = where["configurable"]
    return saver.conn.execute(
        f"SELECT count(*) FROM checkpoints WHERE thread_id = {marker} AND checkpoint_ns = "
        f"{marker} AND checkpoint_id < {marker}",
        (conf["thread_id"], conf["checkpoint_ns"], checkpoint_id)).fetchone()[0]


def write_report(saver: Any, config: dict, out: str, title: str) -> None:
    """A standalone HTML page: lineage SVG, version table, versions_seen matrix."""
    from lgcheckpoint.viz import (
        ChannelVersionTable,
        GraphvizNotFound,
        LineageGraph,
        VersionsSeenMatrix,
    )
    from lgcheckpoint.viz.conversation import report_html

    parts = [f"<h1>{html.escape(title)}</h1>"]
    try:
        parts += ["<h2>Lineage</h2>", LineageGraph(saver, config).svg()]
    except GraphvizNotFound as err:
        parts += ["<h2>Lineage</h2>", f"<p>{html.escape(str(err))}</p>"]
    parts += ["<h2>Channel versions</h2>",  # wide tables scroll instead of overflowing the page
              ("<div style='overflow-x:auto'>"
               f"{ChannelVersionTable(saver, config)._repr_html_()}</div>")]
    matrix = VersionsSeenMatrix(saver, config)  # at the newest checkpoint where a node fires
    png, head = matrix.png(), matrix.history.head
    where = "the head" if head is None or matrix.step.key == head.key else \
        f"the newest checkpoint where a node fires (the head is {head.key})"
    parts += [f"<h2>versions_seen at {matrix.step.key}, {where}</h2>",
              ('<img alt="versions_seen matrix" '
               f'src="data:image/png;base64,{base64.b64encode(png).decode()}">')]
    if chat := report_html(matrix.history):  # the messages, if the thread holds any
        parts += ["<h2>Conversation per checkpoint</h2>", chat]
    try:
        Path(out).write_text("<!doctype html><meta charset='utf-8'>"
                             "<body style='font-family:sans-serif'>"
                             + "\n".join(parts) + "</body>")
    except OSError as err:
        raise CliError(f"cannot write the report {out}: {err.strerror or err}") from err
    say(f"\nreport written to {out}")
