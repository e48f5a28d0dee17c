"""Issue 3 core scenarios on every lgcheckpoint saver, each compared to LangGraph + InMemorySaver.

The saver must not change what a run observes: a SQLite file or a Postgres database gives the same
normalised history (checkpoints, versions, writes, metadata) as LangGraph's in-memory reference.
"""

import contextlib

import pytest

from tests.differential.harness import assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_issue3 import ISSUE3

CORE = [name for name in ISSUE3 if name != "no_checkpointer"]
TABLES = "checkpoints, checkpoint_blobs, checkpoint_writes"


@contextlib.contextmanager
def fresh_postgres(lib, uri):
    """The library's PostgresSaver on the session database, emptied so threads do not collide."""
    with lib.PostgresSaver.from_conn_string(uri) as saver:
        saver.setup()
        import psycopg

        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f"TRUNCATE {TABLES}")
        yield saver


@pytest.fixture(params=["sqlite", "postgres"])
def ours_saver(request):
    """A factory for one of our persistent savers (memory is covered by test_issue3)."""
    if request.param == "sqlite":
        path = request.getfixturevalue("sqlite_path")
        return lambda lib: lib.SqliteSaver.from_conn_string(path)
    uri = request.getfixturevalue("postgres_uri")
    return lambda lib: fresh_postgres(lib, uri)


@pytest.mark.parametrize("name", CORE)
def test_saver_same_as_langgraph_memory(name, ours_saver):
    scenario = ISSUE3[name]
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS, ours_saver), "langgraph", "ours")
