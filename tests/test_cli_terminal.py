"""``lgcheckpoint`` as a terminal user meets it (issue 16, part 3), each case a subprocess.

Every case checks the exit code, that a problem is one clear line on stderr with no traceback, and
that no file was created or changed beside the user's database.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import TypedDict

import pytest


def lgcheckpoint(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lgcheckpoint", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120, env={**os.environ}, check=False)


def folder_state(folder: Path) -> dict[str, str]:
    """Every file in the folder with a digest of its bytes: what 'nothing changed' compares."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def assert_one_clear_line(res: subprocess.CompletedProcess, *words: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lgcheckpoint: "), res.stderr
    assert "Traceback" not in res.stderr and "Error:" not in res.stderr.split(": ", 1)[0]
    for word in words:
        assert word in lines[0], (word, lines[0])


class S(TypedDict):
    x: int


@pytest.fixture(scope="module")
def langgraph_wal_file(tmp_path_factory) -> Path:
    """A file LangGraph's SqliteSaver wrote (WAL mode), with a subgraph: 4 + 4 checkpoints."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    def bump(s: S) -> S:
        return {"x": s["x"] + 1}

    inner = StateGraph(S)
    inner.add_node("i1", bump)
    inner.add_node("i2", bump)
    inner.add_edge(START, "i1")
    inner.add_edge("i1", "i2")
    inner.add_edge("i2", END)
    outer = StateGraph(S)
    outer.add_node("a", bump)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "a")
    outer.add_edge("a", "sub")
    outer.add_edge("sub", END)
    path = tmp_path_factory.mktemp("lgwal") / "lg.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        outer.compile(checkpointer=saver).invoke({"x": 1}, {"configurable": {"thread_id": "t"}})
    assert path.read_bytes()[18:20] == b"\x02\x02", "expected a WAL-mode file"
    assert sorted(p.name for p in path.parent.iterdir()) == ["lg.sqlite"]
    return path


def test_inspect_leaves_a_langgraph_wal_file_and_its_folder_as_they_were(langgraph_wal_file):
    folder = langgraph_wal_file.parent
    before = folder_state(folder)
    ok = lgcheckpoint("inspect", str(langgraph_wal_file))
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr
    failed = lgcheckpoint("inspect", str(langgraph_wal_file), "--thread", "nope")
    assert_one_clear_line(failed, "unknown thread 'nope'")
    assert folder_state(folder) == before, "inspect created or changed files"


def test_inspect_shows_subgraph_checkpoints(langgraph_wal_file):
    res = lgcheckpoint("inspect", str(langgraph_wal_file))
    assert ("thread 't': 8 checkpoints (4 in the root graph, 4 in 1 subgraph namespace)"
            in res.stdout)
    assert " subgraph 'sub:" in res.stdout
    steps = [line for line in res.stdout.splitlines() if " step " in line]
    assert len(steps) == 8  # every checkpoint the thread holds has its line


def test_html_into_a_missing_folder_is_one_line_before_any_output(langgraph_wal_file, tmp_path):
    target = tmp_path / "missing" / "report.html"
    res = lgcheckpoint("inspect", str(langgraph_wal_file), "--html", str(target))
    assert_one_clear_line(res, "does not exist", "missing")
    assert res.stdout == ""  # refused before printing the history
    assert not target.parent.exists()
    tour = lgcheckpoint("tour", "--db", str(tmp_path / "t.sqlite"), "--html", str(target))
    assert_one_clear_line(tour, "does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "the tour wrote its database anyway"


def test_postgres_database_without_checkpoint_tables(postgres_uri):
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"lgc_empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    uri = make_conninfo(**{**conninfo_to_dict(postgres_uri), "dbname": name})
    parts = conninfo_to_dict(uri)
    url = (f"postgresql://{parts.get('user', 'postgres')}@{parts.get('host', '127.0.0.1')}:"
           f"{parts.get('port', 5432)}/{name}")
    try:
        res = lgcheckpoint("inspect", url)
        assert_one_clear_line(res, "has no checkpoint tables", "inspect only reads")
        assert "setup()" not in res.stderr  # wrong advice for a read-only inspector
        with psycopg.connect(uri, autocommit=True) as conn:
            tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            assert tables.fetchone()[0] == 0, "inspect created tables"
    finally:
        with psycopg.connect(postgres_uri, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_piped_into_head_ends_quietly_and_finishes_its_work(langgraph_wal_file, tmp_path):
    report = tmp_path / "report.html"
    proc = subprocess.Popen([sys.executable, "-m", "lgcheckpoint", "inspect",
                             str(langgraph_wal_file), "--html", str(report)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()  # what `head -1` reads; then it goes away
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert first.startswith("threads: ")
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err and err == "", err
    assert report.exists()  # the report asked for is still written
    shell = subprocess.run(f"'{sys.executable}' -m lgcheckpoint inspect "
                           f"'{langgraph_wal_file}' | head -1", shell=True, capture_output=True,
                           text=True, timeout=120, check=False)
    assert shell.stdout.startswith("threads: ") and shell.stderr == "", shell.stderr


def test_tour_answer_no_does_not_claim_a_final_state(tmp_path):
    res = lgcheckpoint("tour", "--answer", "no", "--db", str(tmp_path / "t.sqlite"),
                       "--html", str(tmp_path / "t.html"))
    assert res.returncode == 0, res.stderr
    assert "final state:" not in res.stdout
    assert "stopped again and asks: Approve this plan?" in res.stdout
    assert "(revised: no)" in res.stdout
    yes = lgcheckpoint("tour", "--db", str(tmp_path / "t.sqlite"),
                       "--html", str(tmp_path / "t.html"))
    assert "final state:" in yes.stdout and "booked:" in yes.stdout


# --- hostile and huge data (issue 16, part 4: the inspect side) ---------------------------------
NODE = "<img src=x onerror=alert(1)>"
THREAD = "<script>alert('t')</script>\x1b[2J"


class Hostile(TypedDict, total=False):
    v: str
    n: int


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory) -> Path:
    """Markup and terminal escapes in names and values, a 20 MB value, a long thread, 32 threads."""
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver
    from lgcheckpoint.graph import END, START, StateGraph

    path = tmp_path_factory.mktemp("hostile") / "hostile.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        marked = StateGraph(Hostile)
        marked.add_node(NODE, lambda s: {"v": "<script>alert('v')</script>\x1b[31m"})
        marked.add_edge(START, NODE)
        marked.add_edge(NODE, END)
        marked.compile(checkpointer=saver).invoke({"v": "<b>x</b>"},
                                                  {"configurable": {"thread_id": THREAD}})
        huge = StateGraph(Hostile)
        huge.add_node("a", lambda s: {"v": "y" * 20_000_000})
        huge.add_edge(START, "a")
        huge.add_edge("a", END)
        huge.compile(checkpointer=saver).invoke({"v": "x"}, {"configurable": {"thread_id": "big"}})
        loop = StateGraph(Hostile)
        loop.add_node("loop", lambda s: {"n": s["n"] + 1})
        loop.add_edge(START, "loop")
        loop.add_conditional_edges("loop", lambda s: END if s["n"] >= 400 else "loop")
        looping = loop.compile(checkpointer=saver)
        looping.invoke({"n": 0}, {"configurable": {"thread_id": "long"}, "recursion_limit": 999})
        for i in range(29):
            looping.invoke({"n": 399}, {"configurable": {"thread_id": f"t{i:02d}"}})
    return path


def test_inspect_never_prints_or_writes_markup_and_escapes_from_the_data(hostile_db, tmp_path):
    report = tmp_path / "r.html"
    res = lgcheckpoint("inspect", str(hostile_db), "--thread", THREAD, "--html", str(report))
    assert res.returncode == 0, res.stderr
    assert not [c for c in res.stdout if not c.isprintable() and c != "\n"], "control characters"
    assert "\\x1b[2J" in res.stdout  # shown, escaped
    page = report.read_text()
    for raw in ("<script>alert", "<img src=x", "\x1b"):
        assert raw not in page, raw
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the node is named, as text


def test_inspect_output_stays_bounded(hostile_db, tmp_path):
    big = lgcheckpoint("inspect", str(hostile_db), "--thread", "big", "--html",
                       str(tmp_path / "big.html"))
    assert big.returncode == 0, big.stderr
    assert len(big.stdout) < 5_000 and (tmp_path / "big.html").stat().st_size < 1_000_000
    first = big.stdout.splitlines()[0]
    assert first.endswith("… (32 threads; --thread picks one)") and first.count(",") == 19
    long = lgcheckpoint("inspect", str(hostile_db), "--thread", "long")
    lines = long.stdout.splitlines()
    assert "thread 'long': 402 checkpoints" in long.stdout
    assert "202 older checkpoints not shown (--all shows them)" in long.stdout
    assert len(lines) <= 205 and lines[-1].startswith("  c401 ")  # the newest are the ones shown
    every = lgcheckpoint("inspect", str(hostile_db), "--thread", "long", "--all")
    assert len([line for line in every.stdout.splitlines() if " step " in line]) == 402
