"""``lgcheckpoint studio``: what it loads and the errors it gives, without starting a server (the
page itself is driven in test_studio_browser.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack

import nbformat
import pytest

from lgcheckpoint.cli import main
from lgcheckpoint.viz.studio_app import (
    DEMOS,
    StudioError,
    fold_wal,
    open_graph,
    open_studio,
    voila_command,
)


def test_bad_specs_get_one_clear_line(capsys, tmp_path):
    assert main(["studio", "no_colon"]) == 2
    assert "write MODULE:ATTR" in capsys.readouterr().err
    assert main(["studio", "lgcheckpoint.tour:missing"]) == 2
    assert "lgcheckpoint.tour has no 'missing'" in capsys.readouterr().err
    assert main(["studio", "no.such.module:x"]) == 2
    assert "cannot import no.such.module" in capsys.readouterr().err
    assert main(["studio", "lgcheckpoint.tour:Trip", "--write", str(tmp_path / "x.ipynb")]) == 2
    assert "Trip() returned dict, not a compiled graph" in capsys.readouterr().err
    assert main(["studio", "lgcheckpoint.demos.travel_planner:EXAMPLE_INPUT"]) == 2
    assert "a function build(checkpointer)" in capsys.readouterr().err
    assert main(["studio", "lgcheckpoint.tour:after_review"]) == 2
    assert "after_review(checkpointer=...) failed" in capsys.readouterr().err
    assert main(["studio", "travel_planner", "--db", str(tmp_path / "no" / "dir.sqlite")]) == 2
    assert "no folder for" in capsys.readouterr().err


def test_write_gives_a_one_cell_notebook_that_opens_the_studio(tmp_path, capsys):
    path = tmp_path / "page.ipynb"
    db = tmp_path / "trip.sqlite"
    assert main(["studio", "travel_planner", "--db", str(db), "--thread", "t1",
                 "--input", '{"destination": "Oslo", "days": 2}', "--write", str(path)]) == 0
    (cell,) = nbformat.read(path, as_version=4).cells
    assert "open_studio('lgcheckpoint.demos.travel_planner:build_travel_planner'" in cell.source
    assert f"db={str(db)!r}" in cell.source and "thread='t1'" in cell.source
    namespace: dict = {}
    exec(cell.source.rsplit("\n", 2)[0], namespace)  # noqa: S102 - the page's cell, minus display
    studio = namespace["studio"]
    studio.run(studio.input)
    assert studio.pending and studio.input == {"destination": "Oslo", "days": 2}
    assert db.exists()


def test_a_compiled_graph_gets_the_db_saver_and_a_factory_is_called_with_it(tmp_path):
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    with ExitStack() as stack:
        graph = open_graph(stack, "lgcheckpoint.demos:build_approval_agent",
                           str(tmp_path / "a.sqlite"))
        assert isinstance(graph.checkpointer, SqliteSaver)
    studio = open_studio("approval_agent")  # in memory, with the demo's input
    studio.run(studio.input)
    assert [i.value["question"] for i in studio.pending] == ["Run this tool call?"]
    assert set(DEMOS) == {"travel_planner", "approval_agent"}


def test_a_langgraph_graph_gets_a_langgraph_saver(tmp_path):
    module = tmp_path / "lg_app.py"
    module.write_text(
        "from typing import TypedDict\n"
        "from langgraph.graph import StateGraph, START\n"
        "class S(TypedDict):\n    n: int\n"
        "g = StateGraph(S)\ng.add_node('inc', lambda s: {'n': s['n'] + 1})\n"
        "g.add_edge(START, 'inc')\ngraph = g.compile()\n")
    with ExitStack() as stack:
        graph = open_graph(stack, f"{module}:graph", str(tmp_path / "lg.sqlite"))
        assert type(graph.checkpointer).__module__.startswith("langgraph.checkpoint.sqlite")
        from lgcheckpoint.viz import Studio

        studio = Studio(graph, {"configurable": {"thread_id": "x"}})
        studio.step({"n": 1})
        studio.step()
        assert studio.ended and studio.last_result == {"n": 2}
    with pytest.raises(StudioError, match="no such file"):
        open_graph(ExitStack(), f"{tmp_path / 'nope.py'}:graph", None)


def test_the_page_is_served_locally_with_no_sources_and_the_chosen_theme(tmp_path):
    command = voila_command(tmp_path / "p.ipynb", 9999, "dark", browser=False, token="t0k")
    assert command[1:3] == ["-m", "voila"] and "--theme=dark" in command
    assert "--Voila.ip=127.0.0.1" in command and "--strip_sources=True" in command
    assert "--no-browser" in command and json.dumps(command)
    # a token on every request; tracebacks stay in the terminal, not on the page
    assert "--Voila.token=t0k" in command and "--show_tracebacks=False" in command
    kiosk = voila_command(tmp_path / "p.ipynb", 9999, "light", browser=False, token="")
    assert "--Voila.token=" in kiosk


@pytest.mark.postgres
def test_a_postgres_uri_gives_a_postgres_saver(postgres_uri):
    from psycopg.conninfo import conninfo_to_dict

    from lgcheckpoint.checkpoint.postgres import PostgresSaver

    p = conninfo_to_dict(postgres_uri)
    user, port = p.get('user', 'postgres'), p.get('port', 5432)
    uri = f"postgresql://{user}@{p['host']}:{port}/{p['dbname']}"
    with ExitStack() as stack:
        graph = open_graph(stack, DEMOS["travel_planner"][0], uri)
        assert isinstance(graph.checkpointer, PostgresSaver)
        from lgcheckpoint.viz import Studio

        studio = Studio(graph, {"configurable": {"thread_id": "pg"}})
        studio.run(DEMOS["travel_planner"][1])
        assert studio.pending and len(studio.history) == 4


def test_a_kernel_stopped_hard_leaves_no_wal_files_once_the_command_ends(tmp_path):
    db = tmp_path / "trip.sqlite"
    killed = ("import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
              "c.execute('PRAGMA journal_mode=WAL'); c.execute('CREATE TABLE t (x)'); "
              "c.execute('INSERT INTO t VALUES (1)'); c.commit(); os._exit(0)")
    subprocess.run([sys.executable, "-c", killed, str(db)], check=True)
    sidecars = [db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]
    assert all(p.exists() for p in sidecars)  # what a page's kernel, killed, leaves
    fold_wal(db)  # what `lgcheckpoint studio` does when Voilà has stopped
    assert not any(p.exists() for p in sidecars)
    import sqlite3

    assert sqlite3.connect(db).execute("SELECT x FROM t").fetchall() == [(1,)]
