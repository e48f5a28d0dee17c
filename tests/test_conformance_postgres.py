"""LangGraph's public saver conformance suite, all 8 capabilities, against both Postgres savers.

Each capability gets a fresh saver over emptied tables in this session's own database.
"""

import psycopg
from psycopg.conninfo import make_conninfo
import pytest
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from lgcheckpoint.checkpoint.postgres import PostgresSaver
from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver
from tests.conformance_helpers import run_conformance

pytestmark = pytest.mark.postgres
EMPTY_TABLES = "TRUNCATE checkpoints, checkpoint_blobs, checkpoint_writes"


async def test_postgres_saver_conformance(postgres_uri):
    async def fresh_saver():
        with PostgresSaver.from_conn_string(postgres_uri) as saver:
            saver.setup()
            saver.conn.execute(EMPTY_TABLES)
            yield saver

    await run_conformance("PostgresSaver", fresh_saver)


async def test_postgres_saver_on_a_pool_conformance(postgres_uri):
    pool = ConnectionPool(postgres_uri, max_size=4, kwargs={"autocommit": True}, open=False)

    async def pool_open_for_the_suite():
        with pool:
            yield

    async def fresh_saver():
        saver = PostgresSaver(pool)
        saver.setup()
        with pool.connection() as conn:
            conn.execute(EMPTY_TABLES)
        yield saver

    await run_conformance("PostgresSaver(pool)", fresh_saver, lifespan=pool_open_for_the_suite)


async def test_async_postgres_saver_conformance(postgres_uri):
    async def fresh_saver():
        async with AsyncPostgresSaver.from_conn_string(postgres_uri) as saver:
            await saver.setup()
            await saver.conn.execute(EMPTY_TABLES)
            yield saver

    await run_conformance("AsyncPostgresSaver", fresh_saver)


async def test_async_postgres_saver_on_a_pool_conformance(postgres_uri):
    pool = AsyncConnectionPool(postgres_uri, max_size=4, kwargs={"autocommit": True}, open=False)

    async def pool_open_for_the_suite():
        async with pool:
            yield

    async def fresh_saver():
        saver = AsyncPostgresSaver(pool)
        await saver.setup()
        async with pool.connection() as conn:
            await conn.execute(EMPTY_TABLES)
        yield saver

    await run_conformance("AsyncPostgresSaver(pool)", fresh_saver, lifespan=pool_open_for_the_suite)


def _schema_uri(uri: str, schema: str) -> str:
    """The same database, with tables created in (and read from) one schema."""
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
    return make_conninfo(uri, options=f"-csearch_path={schema}")


def test_migrations_are_langgraphs_entry_by_entry():
    """Same statements in the same order (ignoring layout), so version numbers mean the same."""
    from langgraph.checkpoint.postgres.base import MIGRATIONS as THEIRS

    from lgcheckpoint.checkpoint.postgres.sql import MIGRATIONS as OURS

    def squash(text):
        return "".join(text.lower().split())

    assert [squash(m) for m in OURS] == [squash(m) for m in THEIRS]


@pytest.mark.parametrize("first", ["ours", "langgraph"])
def test_setup_is_recognised_across_libraries(postgres_uri, first):
    """Whoever sets up a database first, the other's setup() finds nothing left to run."""
    from langgraph.checkpoint.postgres import PostgresSaver as LangGraphSaver

    uri = _schema_uri(postgres_uri, f"setup_{first}_first")
    order = [PostgresSaver, LangGraphSaver] if first == "ours" else [LangGraphSaver, PostgresSaver]
    recorded = []
    for saver_class in order:
        with saver_class.from_conn_string(uri) as saver:
            saver.setup()
        with psycopg.connect(uri) as conn:
            recorded.append(
                [v for (v,) in conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
            )
    assert recorded[0] == recorded[1] == list(range(10))
