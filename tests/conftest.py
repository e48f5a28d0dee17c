"""Shared fixtures (a real Postgres database per test session or worker, a SQLite file per test),
``--lesson NN``, ``--screenshots``, and the whole suite on parallel workers when ``pytest`` runs
it all."""

import os
import sys
import uuid
from pathlib import Path

import pytest

from tests import browser_checks

RELIABILITY_FIGURES = Path(__file__).resolve().parent.parent / "test-artifacts" / "reliability.txt"
# `pytest` alone runs the whole suite on this many pytest-xdist workers (`-n 0` runs it serially):
# a worker often waits on a kernel, a subprocess, Postgres or the browser, so on a 2-core machine
# 3 workers keep both cores busy (/proc/stat over a whole run: 18 of 633 core-seconds idle); 4
# took 5 % more CPU (contention) and finished later
WORKERS = 3
# on workers each file is one unit (a notebook's cells share a kernel, a module's fixtures are
# built once) except in these, whose tests take a minute each; the longest units start first (as
# measured on a whole run), so no worker is left with one at the end while the others idle
ONE_UNIT_EACH = ("tests/test_browser.py",)
START_FIRST = ("tests/test_website.py", "tests/test_notebooks_guard.py",
               "tests/reliability/test_crash_resume.py", "tests/test_browser.py",
               "tests/test_langgraph_suite.py", "tests/test_swap.py", "tests/test_wheel.py",
               "tests/test_studio_browser.py", "tests/test_course_browser.py",
               "tests/differential/test_savers.py", "tests/test_viz_hostile.py",
               "tests/test_conversation_browser.py", "tests/test_postgres_saver.py",
               "tests/reliability/test_two_humans.py", "tests/test_cli_terminal.py")

POSTGRES_URI = os.environ.get(
    "LGCHECKPOINT_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def _server_or_skip() -> None:
    """Skip loudly without a server on a developer machine; fail under CI, where one must run."""
    try:
        import psycopg

        with psycopg.connect(POSTGRES_URI, connect_timeout=3, autocommit=True):
            return
    except Exception as exc:  # noqa: BLE001 - any failure means "no usable server"
        reason = f"NO POSTGRES SERVER at {POSTGRES_URI} ({exc}); set LGCHECKPOINT_POSTGRES_URI"
        if os.environ.get("CI"):
            pytest.fail(reason + " -- CI must provide one", pytrace=False)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_uri():
    """A fresh database on the test server, dropped after the session; yields its URI."""
    _server_or_skip()
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"lgc_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_URI, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(POSTGRES_URI)
    params["dbname"] = name
    yield make_conninfo(**params)
    with psycopg.connect(POSTGRES_URI, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sqlite_path(tmp_path):
    """A SQLite database file (not :memory:) in the test's own folder."""
    return str(tmp_path / "checkpoints.sqlite")


def keep_bytecode_out_of_tree() -> None:
    """With PYTHONDONTWRITEBYTECODE set (some machines set it), each of the run's ~200 processes
    (workers, kernels, CLIs, crash trials) would compile the package again from source, about a
    minute of the whole run: their bytecode goes to a cache outside the tree instead, and no
    __pycache__ appears in it either way."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        prefix = str(Path.home() / ".cache" / "lgcheckpoint-tests" / "pycache")
        os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = prefix
        del os.environ["PYTHONDONTWRITEBYTECODE"]
        sys.dont_write_bytecode = False


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads -n
def pytest_cmdline_main(config):
    """The whole suite (no paths, no --lesson, no -n) runs on WORKERS workers, by file."""
    keep_bytecode_out_of_tree()
    if not hasattr(config.option, "numprocesses") or hasattr(config, "workerinput"):
        return  # no pytest-xdist, or a worker (it runs this hook too, and must not fork again)
    whole_suite = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    if (whole_suite and config.option.numprocesses is None and config.getoption("--lesson") is None
            and not config.getoption("usepdb") and not config.getoption("collectonly")):
        config.option.numprocesses = WORKERS
    if config.option.numprocesses and config.option.dist == "no":
        config.option.dist = "loadfile"  # a notebook's cells share one kernel: never split them
        config.option.loadscopereorder = False  # keep START_FIRST first, not the biggest files


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadfile, except that each browser test (minutes alone) is a unit of its own."""
    if config.option.dist != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(ONE_UNIT_EACH) else nodeid.split("::", 1)[0]

    return ByFile(config, log)


def pytest_addoption(parser):
    parser.addoption("--lesson", default=None, metavar="NN",
                     help="run only the tests of one course chapter, e.g. --lesson 04")
    parser.addoption("--screenshots", action="store_true",
                     help="keep a PNG of every page the browser tests check, in test-artifacts/")


def pytest_configure(config):
    browser_checks.SCREENSHOTS = config.getoption("--screenshots")


def pytest_collection_modifyitems(config, items):
    """On workers, START_FIRST first. --lesson 04 keeps the tests marked
    @pytest.mark.lesson("04_...") and nothing else."""
    if hasattr(config, "workerinput"):
        rank = {path: i for i, path in enumerate(START_FIRST)}
        items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
    chapter = config.getoption("--lesson")
    if chapter is None:
        return
    keep, drop = [], []
    for item in items:
        names = [str(m.args[0]) for m in item.iter_markers("lesson") if m.args]
        (keep if any(n.split("_")[0] == chapter or n == chapter for n in names) else drop).append(
            item)
    if not keep:
        raise pytest.UsageError(f"no test is marked for lesson {chapter!r}: "
                                "use a chapter number such as --lesson 04")
    config.hook.pytest_deselected(items=drop)
    items[:] = keep


# --- tests/reliability writes its figures to one file; on parallel workers the controller starts
# that file afresh (before any worker runs a test) and shows it at the end
_RELIABILITY_RAN = pytest.StashKey[bool]()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    if any(i.startswith("tests/reliability/") for i in ids) and not node.config.stash.get(
            _RELIABILITY_RAN, False):
        node.config.stash[_RELIABILITY_RAN] = True
        RELIABILITY_FIGURES.unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter, config):
    if config.stash.get(_RELIABILITY_RAN, False) and RELIABILITY_FIGURES.exists():
        terminalreporter.section("reliability figures")
        for line in RELIABILITY_FIGURES.read_text().splitlines():
            terminalreporter.write_line(line)

