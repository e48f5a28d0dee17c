"""``lgcheckpoint studio MODULE:ATTR``: the Studio as a web page for a room with a projector.

It writes a one-cell notebook that builds the graph on the chosen saver and shows
``Studio(...).widget()``, then serves it with Voilà, which runs the notebook in a kernel and shows
only its widgets — no code cells. Everything is local: no account, no network. Like Jupyter, the
page needs a token (printed in its URL): a page on 127.0.0.1 is open to every user and process of
the machine, and it can approve an interrupt. ``--no-token`` is for a kiosk. Tracebacks stay in
the terminal; the page shows one line per error.
``ATTR`` is a compiled graph or a function ``build(checkpointer)`` that returns one; two demos
have short names: ``travel_planner`` and ``approval_agent``.
End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import importlib.util
import json
import secrets
import signal
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

DEMOS = {  # short name -> (MODULE:ATTR, an input that starts a run)
    "travel_planner": ("lgcheckpoint.demos.travel_planner:build_travel_planner",
                       {"destination": "Kyoto", "days": 3}),
    "approval_agent": ("lgcheckpoint.demos.approval_agent:build_approval_agent",
                       {"messages": [{"role": "user", "content":
                                      "My order #1042 arrived torn, I want a refund"}]}),
}


class StudioError(Exception):
    """A problem the user can fix (bad spec, missing file): one line, exit code 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("graph", help="MODULE:ATTR (a compiled graph or a build(checkpointer) "
                        "function), a file.py:ATTR, or a demo: " + ", ".join(DEMOS))
    parser.add_argument("--db", help="a SQLite file (created if missing) or a postgresql:// URI;"
                        " default: in memory")
    parser.add_argument("--thread", default="studio", help="thread id (default: studio)")
    parser.add_argument("--input", help="JSON input that starts a run (default: the demo's)")
    parser.add_argument("--port", type=int, default=8866, help="port of the page (default 8866)")
    parser.add_argument("--theme", choices=["light", "dark"], default="light")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--no-token", action="store_true",
                        help="serve the page without a token (a kiosk: anyone on this machine "
                        "can open it and answer its interrupts)")
    parser.add_argument("--write", metavar="NOTEBOOK", help="only write the notebook and exit")


def main(args: argparse.Namespace) -> int:
    """Check the graph loads, write the notebook, serve it with Voilà until interrupted."""
    try:
        spec, example = DEMOS.get(args.graph, (args.graph, None))
        start = json.loads(args.input) if args.input else example
        with ExitStack() as stack:  # fail here, with a clear line, not inside the page's kernel
            open_graph(stack, spec, args.db)
        folder = Path(args.write).parent if args.write else Path(tempfile.mkdtemp("-studio"))
        notebook = write_notebook(Path(args.write) if args.write else folder / "studio.ipynb",
                                  spec, args.db, args.thread, start)
    except (StudioError, json.JSONDecodeError) as error:
        print(f"lgcheckpoint studio: {error}", file=sys.stderr)
        return 2
    if args.write:
        print(f"notebook written to {notebook}")
        return 0
    token = "" if args.no_token else secrets.token_urlsafe(24)
    command = voila_command(notebook, args.port, args.theme, not args.no_browser, token)
    url = f"http://127.0.0.1:{args.port}/" + (f"?token={token}" if token else "")
    print(f"lgcheckpoint studio: {url}  (Ctrl-C stops it)", flush=True)
    voila = subprocess.Popen(command)
    # stopping this command stops the page: SIGTERM is passed on, Ctrl-C reaches both
    signal.signal(signal.SIGTERM, lambda *_: voila.terminate())
    try:
        return voila.wait()
    except KeyboardInterrupt:
        voila.terminate()
        return voila.wait()
    finally:
        if args.db and "://" not in args.db:
            fold_wal(Path(args.db))


def fold_wal(db: Path) -> None:
    """Open and close the SQLite file once: as its last connection, SQLite checkpoints the WAL
    and removes the -wal and -shm files a page's kernel left if it was stopped hard."""
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def voila_command(notebook: Path, port: int, theme: str, browser: bool,
                  token: str) -> list[str]:
    """Voilà on 127.0.0.1 with sources stripped, tracebacks kept in the terminal, the chosen
    theme, and ``token`` required on every request ("" = none: a kiosk)."""
    return [sys.executable, "-m", "voila", str(notebook), f"--port={port}",
            "--Voila.ip=127.0.0.1", f"--theme={theme}", "--strip_sources=True",
            "--show_tracebacks=False", f"--Voila.token={token}",
            *([] if browser else ["--no-browser"])]


CELL = """\
from lgcheckpoint.viz.studio_app import open_studio
studio = open_studio({spec!r}, db={db!r}, thread={thread!r}, input={start!r})
studio.widget(keys_everywhere=True)
"""


def write_notebook(path: Path, spec: str, db: str | None, thread: str, start: Any) -> Path:
    """One code cell; Voilà shows its output (the widget) and never its source."""
    import nbformat

    db = str(Path(db).resolve()) if db and "://" not in db else db  # the kernel's cwd differs
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells.append(nbformat.v4.new_code_cell(CELL.format(spec=spec, db=db, thread=thread,
                                                          start=start)))
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


_open = ExitStack()  # the page's kernel keeps its saver open as long as it runs
atexit.register(_open.close)  # then closes it: SQLite folds its -wal/-shm files back in


def open_studio(spec: str, db: str | None = None, thread: str = "studio", input: Any = None,
                **options: Any):
    """The Studio over ``spec`` on ``db`` (what the page's one cell calls)."""
    from lgcheckpoint.viz.studio import Studio

    spec, example = DEMOS.get(spec, (spec, None))
    graph = open_graph(_open, spec, db)
    return Studio(graph, {"configurable": {"thread_id": thread}},
                  input=example if input is None else input, **options)


def open_graph(stack: ExitStack, spec: str, db: str | None) -> Any:
    """Import ``spec`` and give the graph a saver: ``db``'s, else its own, else in memory."""
    target = load_attr(spec)
    if hasattr(target, "invoke") and hasattr(target, "get_graph"):
        if db is None and getattr(target, "checkpointer", None) not in (None, True, False):
            return target
        return with_saver(target, open_saver(stack, package_of(target), db))
    if callable(target):
        package = package_of(target)
        try:
            graph = target(checkpointer=open_saver(stack, package, db))
        except TypeError as error:  # not a build(checkpointer) function
            raise StudioError(f"{spec}(checkpointer=...) failed: {error}") from error
        if not (hasattr(graph, "invoke") and hasattr(graph, "get_graph")):
            raise StudioError(f"{spec}() returned {type(graph).__name__}, not a compiled graph")
        return graph
    raise StudioError(f"{spec} is a {type(target).__name__}: give a compiled graph or a "
                      "function build(checkpointer) that returns one")


def load_attr(spec: str) -> Any:
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise StudioError(f"{spec!r}: write MODULE:ATTR, e.g. lgcheckpoint.tour:build_tour_graph"
                          f" (or a demo: {', '.join(DEMOS)})")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise StudioError(f"no such file: {module_name}")
            loader = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ImportError as error:
        raise StudioError(f"cannot import {module_name}: {error}") from error
    if not hasattr(module, attr):
        raise StudioError(f"{module_name} has no {attr!r}")
    return getattr(module, attr)


def package_of(obj: Any) -> str:
    """``langgraph`` for LangGraph graphs, else ``lgcheckpoint``: its savers fit its graphs."""
    module = getattr(obj, "__module__", None) or type(obj).__module__
    return "langgraph" if module.split(".")[0] == "langgraph" else "lgcheckpoint"


def open_saver(stack: ExitStack, package: str, db: str | None) -> Any:
    """An InMemorySaver, a SqliteSaver on a file, or a PostgresSaver (tables set up)."""
    if db is None:
        return importlib.import_module(f"{package}.checkpoint.memory").InMemorySaver()
    if db.startswith(("postgresql://", "postgres://")):
        module = importlib.import_module(f"{package}.checkpoint.postgres")
        try:
            saver = stack.enter_context(module.PostgresSaver.from_conn_string(db))
            saver.setup()
        except Exception as error:  # connection errors come in many types
            raise StudioError(f"cannot use {db}: {error}") from error
        return saver
    if not Path(db).parent.is_dir():
        raise StudioError(f"no folder for {db}")
    module = importlib.import_module(f"{package}.checkpoint.sqlite")
    return stack.enter_context(module.SqliteSaver.from_conn_string(db))


def with_saver(graph: Any, saver: Any) -> Any:
    """The same compiled graph on another saver (LangGraph: ``copy``; ours: a shallow copy)."""
    if hasattr(graph, "copy"):
        return graph.copy(update={"checkpointer": saver})
    import copy

    twin = copy.copy(graph)
    twin.checkpointer = saver
    return twin
