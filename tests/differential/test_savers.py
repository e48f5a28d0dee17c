"""Every scenario on our persistent savers (SQLite file, Postgres), compared with LangGraph.

Issue 3 scenarios are compared with LangGraph + InMemorySaver: the saver must not change what a run
observes. Issue 4 scenarios are compared with LangGraph on the same kind of saver, because there
LangGraph's own savers differ from each other (two interrupts in one node: InMemorySaver keeps
every answer in the ``__resume__`` write, SqliteSaver and PostgresSaver keep the first one).
Async scenarios use LangGraph + InMemorySaver there, as LangGraph's sync savers cannot serve
ainvoke; they also run on the async savers (AsyncSqliteSaver, AsyncPostgresSaver) against
LangGraph's async saver of the same kind.
"""

import contextlib

import pytest

from tests.differential.harness import assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import LOOP
from tests.differential.scenarios_interrupts import INTERRUPTS

CORE = [name for name in LOOP if name != "no_checkpointer"]
ASYNC = {name: fn for name, fn in {**LOOP, **INTERRUPTS}.items() if name.startswith("async")}
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


@contextlib.asynccontextmanager
async def fresh_async_postgres(lib, uri):
    """The library's AsyncPostgresSaver on the session database, emptied first."""
    async with lib.AsyncPostgresSaver.from_conn_string(uri) as saver:
        await saver.setup()
        import psycopg

        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute(f"TRUNCATE {TABLES}")
        yield saver


def saver_of(kind: str, request):
    """A factory of one saver kind for either library (None for "memory": the harness's own)."""
    if kind == "memory":
        return None
    if kind in ("sqlite", "aio-sqlite"):
        path, cls = request.getfixturevalue("sqlite_path"), (
            "SqliteSaver" if kind == "sqlite" else "AsyncSqliteSaver")
        return lambda lib: getattr(lib, cls).from_conn_string(f"{path}.{lib.name}")
    uri = request.getfixturevalue("postgres_uri")
    fresh = fresh_postgres if kind == "postgres" else fresh_async_postgres
    return lambda lib: fresh(lib, uri)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def saver_factory(request):
    """A factory for one kind of persistent saver, taking the library.

    (InMemorySaver is test_loop_same_as_langgraph.py's.)
    """
    return saver_of(request.param, request)


@pytest.mark.parametrize("name", CORE)
def test_loop_scenario_on_saver_same_as_langgraph_memory(name, saver_factory):
    scenario = LOOP[name]
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS, saver_factory))


@pytest.mark.parametrize("name", list(INTERRUPTS))
def test_interrupt_scenario_on_saver_same_as_langgraph_same_saver(name, saver_factory):
    scenario, reference = INTERRUPTS[name], saver_factory
    if "async" in name:  # LangGraph's SqliteSaver and PostgresSaver have no async methods
        reference = None
    assert_same(name, record(scenario, LANGGRAPH, reference), record(scenario, OURS, saver_factory))


@pytest.fixture(params=["aio-sqlite", pytest.param("aio-postgres", marks=pytest.mark.postgres)])
def async_saver_factory(request):
    """A factory for one kind of async saver (an async context manager), taking the library."""
    return saver_of(request.param, request)


@pytest.mark.parametrize("name", list(ASYNC))
def test_async_on_async_saver_same_as_langgraph(name, async_saver_factory):
    scenario, factory = ASYNC[name], async_saver_factory
    assert_same(name, record(scenario, LANGGRAPH, factory), record(scenario, OURS, factory))
