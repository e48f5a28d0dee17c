"""How work grows, counted rather than timed: a slow machine cannot fail these, a scan can.

SQLite: ``set_progress_handler(callback, 1)`` counts the virtual-machine instructions a call
executes, ``set_trace_callback`` the statements. Postgres: every statement the saver runs is
recorded by a cursor class and run again under ``EXPLAIN ANALYZE``, which says how many rows each
scan read. The loop: channel methods are counted while a wide graph runs. bench/scale.py times
the same things beside LangGraph.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import closing
from typing import ClassVar, TypedDict

import psycopg
import pytest
from psycopg.rows import dict_row

from lgcheckpoint import channels as channel_module
from lgcheckpoint.checkpoint.base import empty_checkpoint
from lgcheckpoint.checkpoint.id import uuid6
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.checkpoint.postgres import PostgresSaver, sql
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.checkpoint.sqlite.sql import PAGE_SIZE
from lgcheckpoint.graph import END, START, StateGraph

SHORT, LONG = 20, 1500  # checkpoints in the two threads compared


def config(thread_id: str, ns: str | None = "") -> dict:
    conf = {"thread_id": thread_id} | ({} if ns is None else {"checkpoint_ns": ns})
    return {"configurable": conf}


def fill(saver, thread_id: str, length: int) -> None:
    """A thread of ``length`` checkpoints, each with one task's write, through the saver API."""
    conf, version = config(thread_id), None
    checkpoint = empty_checkpoint()
    for step in range(length):
        version = saver.get_next_version(version, None)
        checkpoint = {**checkpoint, "id": str(uuid6(clock_seq=step)),
                      "channel_values": {"n": step, "log": [step] * 3},
                      "channel_versions": {"n": version, "log": version}}
        conf = saver.put(conf, checkpoint, {"source": "loop", "step": step, "parents": {}},
                         {"n": version, "log": version})
        saver.put_writes(conf, [("n", step + 1)], str(uuid.uuid4()))


# --- SQLite: instructions and statements per call -----------------------------------------------
class Counted:
    """A SqliteSaver on a file whose connection counts VM instructions and statements."""

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, check_same_thread=False)
        self.saver = SqliteSaver(self.conn)
        self.ops = 0
        self.statements: list[str] = []
        self.conn.set_progress_handler(self._op, 1)
        self.conn.set_trace_callback(self.statements.append)

    def _op(self) -> int:
        self.ops += 1
        return 0  # 0: carry on

    def cost(self, call) -> tuple[int, int]:
        """(instructions, statements) of one call."""
        self.ops, self.statements[:] = 0, []
        call()
        return self.ops, len(self.statements)


@pytest.fixture
def sqlite_threads(tmp_path):
    """One file holding a short and a long thread (the long one also has a second namespace)."""
    counted = Counted(str(tmp_path / "scale.sqlite"))
    with closing(counted.conn):
        counted.conn.execute("PRAGMA synchronous=OFF")  # filling only; nothing below is timed
        fill(counted.saver, "short", SHORT)
        fill(counted.saver, "long", LONG)
        yield counted


READS = {
    "head lookup": lambda saver, t: saver.get_tuple(config(t)),
    "list(limit=10)": lambda saver, t: list(saver.list(config(t), limit=10)),
    "list without namespace (limit=10)": lambda saver, t: list(saver.list(config(t, None),
                                                                          limit=10)),
}


@pytest.mark.parametrize("read", READS)
def test_sqlite_reads_do_not_grow_with_thread_length(sqlite_threads, read):
    """The same statements, and about the same instructions, for 20 and 1,500 checkpoints."""
    fn = READS[read]
    short_ops, short_statements = sqlite_threads.cost(lambda: fn(sqlite_threads.saver, "short"))
    long_ops, long_statements = sqlite_threads.cost(lambda: fn(sqlite_threads.saver, "long"))
    assert long_statements == short_statements
    # a deeper B-tree costs a few more instructions; a scan of 1,500 rows costs tens of thousands
    assert long_ops < 1.5 * short_ops + 500, (read, short_ops, long_ops)


def test_sqlite_history_of_ten_runs_three_statements(sqlite_threads):
    """The ten keys, their rows, and one writes query for all of them: the rest is unread."""
    _, statements = sqlite_threads.cost(
        lambda: list(sqlite_threads.saver.list(config("long"), limit=10)))
    assert statements == 1 + 1 + 1


def test_sqlite_listing_across_threads_sorts_once(sqlite_threads):
    """Every thread's checkpoints newest first: the keys are sorted once, then each page is read
    by key (~75 instructions a row; paging "after the last row seen" re-sorted every match for
    each page: ~245 a row here, and growing with the number of pages)."""
    rows = SHORT + LONG
    ops, _ = sqlite_threads.cost(lambda: list(sqlite_threads.saver.list(None)))
    assert ops < 120 * rows, (ops, rows)


def test_sqlite_whole_history_reads_writes_once_a_page(sqlite_threads):
    """Listing a whole thread reads the writes table once per page, not once per checkpoint."""
    sqlite_threads.cost(lambda: list(sqlite_threads.saver.list(config("long"))))
    writes_reads = [s for s in sqlite_threads.statements if "FROM writes" in s]
    assert len(writes_reads) == -(-LONG // PAGE_SIZE)  # pages, rounded up


FILTERS = [{"step": 700}, {"source": "loop", "step": 700}, {"step": None}]


@pytest.mark.parametrize("metadata_filter", FILTERS, ids=str)
def test_sqlite_filter_costs_a_few_instructions_per_row_and_key(sqlite_threads, metadata_filter):
    """A filter must scan every row; a key costs one bound-path lookup a row (~5 instructions),
    not a json_each table a row (~25)."""
    rows = SHORT + LONG
    ops, _ = sqlite_threads.cost(lambda: list(sqlite_threads.saver.list(None,
                                                                        filter=metadata_filter)))
    assert ops < 8 * len(metadata_filter) * rows, (ops, rows)



def test_inspect_reads_only_the_checkpoints_it_prints(sqlite_threads, capsys):
    """`lgcheckpoint inspect` on a long thread reads the newest LINES_PER_HISTORY rows only."""
    from lgcheckpoint.cli import LINES_PER_HISTORY, print_history

    assert LINES_PER_HISTORY < LONG
    _, statements = sqlite_threads.cost(
        lambda: print_history(sqlite_threads.saver, config("long", None)))
    out = capsys.readouterr().out
    assert f"{LONG} checkpoints" in out and f"c{LONG - 1} " in out  # numbered as the whole thread
    assert f"{LONG - LINES_PER_HISTORY} older checkpoints not shown" in out
    # a handful of queries (count, a parent's rank) and two per page printed (rows, their writes)
    pages = -(-LINES_PER_HISTORY // PAGE_SIZE)  # rounded up
    assert statements <= 2 * pages + 5, statements


# --- Postgres: rows each statement's plan read ---------------------------------------------------
class RecordingCursor(psycopg.Cursor):
    """Remembers every statement with its parameters (the saver makes its cursors from this)."""

    log: ClassVar[list] = []

    def execute(self, query, params=None, **kwargs):
        RecordingCursor.log.append((query, params))
        return super().execute(query, params, **kwargs)


def rows_read(conn, query, params) -> int:
    """Rows the plan's scans produced, from EXPLAIN ANALYZE of the same statement."""
    plan = conn.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {query}", params).fetchone()
    plan = plan["QUERY PLAN"] if isinstance(plan, dict) else plan[0]
    if isinstance(plan, str):
        plan = json.loads(plan)

    def walk(node) -> int:
        own = node["Actual Rows"] * node["Actual Loops"] if "Scan" in node["Node Type"] else 0
        return own + sum(walk(child) for child in node.get("Plans", []))

    return walk(plan[0]["Plan"])


@pytest.fixture(scope="module")
def postgres_threads(postgres_uri):
    """A schema with a short and a long thread, the saver's statements recorded."""
    schema = f"complexity_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_uri, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    uri = psycopg.conninfo.make_conninfo(postgres_uri, options=f"-csearch_path={schema}")
    with psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row,
                         cursor_factory=RecordingCursor) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        conn.execute("SET synchronous_commit = off")  # filling only
        fill(saver, "short", SHORT)
        fill(saver, "long", LONG)
        conn.execute("ANALYZE")  # the planner knows the tables' sizes, as in a live database
        yield saver, conn


@pytest.mark.postgres
@pytest.mark.parametrize("read", READS)
def test_postgres_reads_do_not_grow_with_thread_length(postgres_threads, read):
    """Every statement a read runs scans about as many rows for 1,500 checkpoints as for 20."""
    saver, conn = postgres_threads
    scanned = {}
    for thread_id in ("short", "long"):
        RecordingCursor.log = []
        READS[read](saver, thread_id)
        statements = list(RecordingCursor.log)
        scanned[thread_id] = sum(rows_read(conn, q, p) for q, p in statements)
    assert scanned["long"] <= scanned["short"] + 10, scanned  # not ~1,500 more



JIT_ABOVE_COST = 100_000  # Postgres's default: a statement priced above it is JIT-compiled
LISTS = {
    "a whole thread": (lambda saver: list(saver.list(config("long"))), LONG),
    "a whole thread without namespace": (lambda saver: list(saver.list(config("long", None))),
                                         LONG),
    "every thread": (lambda saver: list(saver.list(None)), SHORT + LONG),
    "every thread, by metadata": (lambda saver: list(saver.list(None, filter={"step": 5})), 2),
}


@pytest.mark.postgres
@pytest.mark.parametrize("read", LISTS)
def test_postgres_list_statements_are_priced_under_jit(postgres_threads, read):
    """list()'s first page, its keys statement and each page of rows are priced below
    jit_above_cost, so Postgres never spends ~0.3 s compiling one (an unpaged SELECT_SQL of
    1,500 rows was priced ~1.3M)."""
    saver, conn = postgres_threads
    fn, rows = LISTS[read]
    RecordingCursor.log = []
    assert len(fn(saver)) == rows
    statements = list(RecordingCursor.log)  # (EXPLAIN below is recorded too)
    # every shape: the first page, then (if it was full) the keys of the rest once, then pages
    (first, _), *rest = statements
    assert first.startswith(sql.SELECT_SQL)
    if rows >= sql.PAGE_SIZE:
        (keys, _), *pages = rest
        assert keys.startswith(sql.KEYS_SQL)
        assert len(pages) == -(-(rows - sql.PAGE_SIZE) // sql.PAGE_SIZE)
        assert all(query == sql.PAGE_SQL for query, _ in pages)
    else:
        assert rest == []
    for query, params in statements:
        plan = conn.execute(f"EXPLAIN (FORMAT JSON) {query}", params).fetchone()["QUERY PLAN"]
        plan = json.loads(plan) if isinstance(plan, str) else plan
        assert plan[0]["Plan"]["Total Cost"] < JIT_ABOVE_COST, (query, params)


def plan_nodes(node) -> list[dict]:
    """Every node of an EXPLAIN (FORMAT JSON) plan."""
    return [node] + [n for child in node.get("Plans", []) for n in plan_nodes(child)]


@pytest.mark.postgres
def test_postgres_pages_look_up_their_keys_before_any_analyze(postgres_uri):
    """On tables Postgres has no statistics for yet (a new database), a page of list() still finds
    each key by index: no scan of the whole table, priced under the JIT threshold (a plain join
    or IN list was planned as a hash join over a sequential scan, JIT-compiled, every page)."""
    schema = f"fresh_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_uri, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    uri = psycopg.conninfo.make_conninfo(postgres_uri, options=f"-csearch_path={schema}")
    try:
        with psycopg.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row,
                             cursor_factory=RecordingCursor) as conn:
            saver = PostgresSaver(conn)
            saver.setup()
            fill(saver, "long", 3 * sql.PAGE_SIZE)
            RecordingCursor.log = []
            assert len(list(saver.list(config("long")))) == 3 * sql.PAGE_SIZE
            pages = [(q, p) for q, p in RecordingCursor.log if q == sql.PAGE_SQL]
            assert len(pages) == 2
            for query, params in pages:
                plan = conn.execute(f"EXPLAIN (FORMAT JSON) {query}", params).fetchone()
                plan = plan["QUERY PLAN"]
                plan = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
                assert plan["Total Cost"] < JIT_ABOVE_COST
                assert not [n for n in plan_nodes(plan)
                            if n["Node Type"] == "Seq Scan" and n["Relation Name"] == "checkpoints"]
    finally:
        with psycopg.connect(postgres_uri, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.postgres
@pytest.mark.parametrize("ns", ["", None])
def test_postgres_list_ten_of_a_long_thread_is_one_statement(postgres_threads, ns):
    """Ten rows fit the first page: one statement, which stops after ten rows of the index."""
    saver, conn = postgres_threads
    RecordingCursor.log = []
    assert len(list(saver.list(config("long", ns), limit=10))) == 10
    (query, params), = RecordingCursor.log
    assert query.startswith(sql.SELECT_SQL)
    # ten checkpoints, their versions, blobs and writes (about 60 rows), not the 1,500 of the thread
    assert rows_read(conn, query, params) < 100


# --- the loop: channels untouched by a step are not visited by it --------------------------------
def count_channel_calls(monkeypatch, width: int, steps: int) -> dict[str, int]:
    """Calls of checkpoint(), update([]) and get() while a loop changes c0 of ``width``
    channels."""
    counts = {"checkpoint": 0, "empty update": 0, "get": 0}
    last_value = channel_module.LastValue
    original_checkpoint, original_update = last_value.checkpoint, last_value.update
    original_get = last_value.get

    def get(self):
        counts["get"] += 1
        return original_get(self)

    def checkpoint(self):
        counts["checkpoint"] += 1
        return original_checkpoint(self)

    def update(self, values):
        counts["empty update"] += not values
        return original_update(self, values)

    monkeypatch.setattr(last_value, "checkpoint", checkpoint)
    monkeypatch.setattr(last_value, "update", update)
    monkeypatch.setattr(last_value, "get", get)
    Wide = TypedDict("Wide", {f"c{i}": int for i in range(width)})
    builder = StateGraph(Wide)
    builder.add_node("inc", lambda s: {"c0": s["c0"] + 1})
    builder.add_edge(START, "inc")
    builder.add_conditional_edges("inc", lambda s: "inc" if s["c0"] < steps else END)
    graph = builder.compile(checkpointer=InMemorySaver())
    graph.invoke({f"c{i}": 0 for i in range(width)}, config(uuid.uuid4().hex))
    monkeypatch.undo()
    return counts


def test_a_step_does_not_visit_untouched_channels(monkeypatch):
    """Twenty more steps on 200 channels add the same calls as on 20 channels (c0's, not all)."""
    extra = {}
    for width in (20, 200):
        few = count_channel_calls(monkeypatch, width, steps=10)
        many = count_channel_calls(monkeypatch, width, steps=30)
        extra[width] = {k: many[k] - few[k] for k in few}
    assert extra[200] == extra[20], extra
    assert extra[200]["checkpoint"] <= 2 * 20  # about one snapshot read per step (c0)


def test_a_step_reads_only_the_channels_it_changed(monkeypatch):
    """The node's input, the values chunk and the edge's input read the whole state every
    step; twenty more steps cost the same channel reads at 1,000 channels as at 10 (pregel/view.py
    keeps the state as a dict that a step refreshes for c0 alone)."""
    extra = {}
    for width in (10, 1000):
        few = count_channel_calls(monkeypatch, width, steps=10)
        many = count_channel_calls(monkeypatch, width, steps=30)
        extra[width] = many["get"] - few["get"]
    assert extra[1000] == extra[10], extra
    assert extra[1000] <= 20 * 10, extra  # a few reads of c0 per step, not 1,000
