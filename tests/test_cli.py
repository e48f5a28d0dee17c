"""The ``lgcheckpoint`` command: the tour, and ``inspect`` on ours and on a LangGraph file."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lgcheckpoint.cli import main

FIXTURE = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "langgraph_support.sqlite"


@pytest.mark.lesson("00_tour")
def test_tour_runs_resumes_and_writes_a_report(tmp_path, capsys):
    db, report = tmp_path / "tour.sqlite", tmp_path / "tour.html"
    assert main(["tour", "--db", str(db), "--html", str(report)]) == 0
    out = capsys.readouterr().out
    assert "asks: Approve this plan?" in out and "booked: 3-day trip to Kyoto" in out
    assert "c3   step   2 loop" in out and "[interrupt]" in out
    page = report.read_text()
    assert "<svg" in page and "lgc-table" in page and "data:image/png;base64," in page
    # running it again starts the thread afresh instead of piling on
    assert main(["tour", "--db", str(db), "--html", str(report)]) == 0
    assert "thread 'tour': 6 checkpoints" in capsys.readouterr().out


def test_inspect_reads_a_langgraph_written_database_without_building_its_types(tmp_path, capsys):
    before = FIXTURE.read_bytes()
    assert main(["inspect", str(FIXTURE), "--html", str(tmp_path / "lg.html")]) == 0
    out = capsys.readouterr().out
    assert "threads: ticket-42" in out and "8 checkpoints" in out
    assert "c5   step   2 update parent c2" in out  # the fork
    assert FIXTURE.read_bytes() == before, "inspect must not write to the file"
    # messages are on LangGraph's safe list (built with the [messages] extra); without the extra,
    # and for the app's own Customer class on no list, inspect shows the stored fields inertly
    code = ("import sys; sys.modules['langchain_core'] = None; "
            "import lgcheckpoint.cli as c; c.main(['inspect', sys.argv[1]]); "
            "print(sorted(m for m, v in sys.modules.items() if v is not None "
            "and m.startswith(('langchain', 'support_desk'))))")
    res = subprocess.run([sys.executable, "-c", code, str(FIXTURE)], capture_output=True,
                         text=True, check=True)
    assert "8 checkpoints" in res.stdout and res.stdout.strip().endswith("[]"), \
        "inspect imported a stored type's module: it must show foreign types inertly"


def test_inspect_errors_say_what_to_do(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "missing.sqlite")]) == 2
    assert "no such file" in capsys.readouterr().err
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database")
    assert main(["inspect", str(junk)]) == 2
    assert "not a SQLite database" in capsys.readouterr().err
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    assert main(["inspect", str(other)]) == 2
    assert "no checkpoint tables" in capsys.readouterr().err
    with sqlite3.connect(other) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
        assert tables == ["t"], "inspect wrote tables"
    assert main(["inspect", str(FIXTURE), "--thread", "nope"]) == 2
    assert "unknown thread 'nope'; the database has: ticket-42" in capsys.readouterr().err


def test_inspect_names_what_is_wrong_with_a_folder_a_foreign_uri_and_an_empty_name(tmp_path,
                                                                                   capsys):
    for target, says in [(str(tmp_path), "is a folder, not a database file"),
                         ("mysql://root@localhost/db", "mysql:// databases are not supported"),
                         ("", "no database given")]:
        assert main(["inspect", target]) == 2
        err = capsys.readouterr().err
        assert says in err and "no such file" not in err, (target, err)
        assert "postgresql:// URI" in err  # and what to give instead


def test_report_names_the_checkpoint_its_versions_seen_matrix_shows(tmp_path, capsys):
    db, report = tmp_path / "tour.sqlite", tmp_path / "tour.html"
    assert main(["tour", "--db", str(db), "--html", str(report)]) == 0
    capsys.readouterr()
    page = report.read_text()
    # the tour's head (c5) has ended, so the matrix shows c4, where book fires; it says so
    assert "<h2>versions_seen at c4, the newest checkpoint where a node fires (the head is c5)" \
        in page and "versions_seen at the head" not in page
