"""Shared fixtures: a real Postgres database per test session, and a SQLite file per test."""

import os
import uuid

import pytest

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


def pytest_addoption(parser):
    parser.addoption("--lesson", default=None, metavar="NN",
                     help="run only the tests of one course chapter, e.g. --lesson 04")


def pytest_collection_modifyitems(config, items):
    """--lesson 04 keeps the tests marked @pytest.mark.lesson("04_...") and nothing else."""
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
