"""LangGraph's public conformance suite, all 8 capabilities, on both SQLite savers on a file."""

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver
from tests.conformance_helpers import run_conformance


async def test_sqlite_saver_conformance(tmp_path):
    counter = iter(range(100))

    async def fresh_saver():
        # a fresh file per capability suite, closed after it
        with SqliteSaver.from_conn_string(str(tmp_path / f"sync{next(counter)}.sqlite")) as saver:
            yield saver

    await run_conformance("SqliteSaver", fresh_saver)


async def test_async_sqlite_saver_conformance(tmp_path):
    counter = iter(range(100))

    async def fresh_saver():
        path = str(tmp_path / f"async{next(counter)}.sqlite")
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            yield saver

    await run_conformance("AsyncSqliteSaver", fresh_saver)
