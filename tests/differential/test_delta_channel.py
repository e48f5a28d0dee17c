"""DeltaChannel, whole histories against LangGraph on every saver (memory, SQLite, Postgres; sync
and async): snapshots every ``snapshot_frequency`` updates, the counters in metadata, the values
rebuilt from ancestor writes on resume, time travel, forks, update_state, Overwrite, subgraphs.
Each persistent saver is compared with LangGraph's saver of the same kind, so the stored rows
are the same; the last tests open a database one library wrote with the other."""

import contextlib
import shutil
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread
from tests.differential.test_savers import fresh_postgres, saver_of

CAUSES, scenario = registry()


def extend(state: list, writes: list) -> list:
    """The reducer: every write is a list of items, appended in order."""
    return [*state, *(item for write in writes for item in write)]


def chat_state(lib: Run, every: int = 2):
    class State(TypedDict):
        messages: Annotated[list, lib.DeltaChannel(extend, snapshot_frequency=every)]
        turns: int

    return State


def looping_graph(lib: Run, every: int = 2, stop: int = 5, **compile_kw):
    """One node that adds a message per turn until `stop` turns."""
    g = lib.StateGraph(chat_state(lib, every))
    g.add_node("talk", lambda s: {"messages": [f"m{s['turns']}"], "turns": s["turns"] + 1})
    g.add_edge(lib.START, "talk")
    g.add_conditional_edges("talk", lambda s: "talk" if s["turns"] < stop else lib.END)
    return g.compile(checkpointer=lib.saver(), **compile_kw)


@scenario
def delta_snapshots_every_n_updates(lib: Run):
    graph = looping_graph(lib, every=2, stop=6)
    lib.invoke(graph, {"messages": ["hi"], "turns": 0}, thread())
    lib.invoke(graph, {"messages": ["again"], "turns": 3}, thread())  # new input, same thread


@scenario
def delta_frequency_one_snapshots_every_step(lib: Run):
    lib.invoke(looping_graph(lib, every=1, stop=3), {"messages": [], "turns": 0}, thread())


@scenario
def delta_parallel_writers_keep_task_order(lib: Run):
    g = lib.StateGraph(chat_state(lib, every=3))
    for name in ("b", "a", "c"):
        g.add_node(name, lambda s, name=name: {"messages": [name]})
        g.add_edge(lib.START, name)
    g.add_node("join", lambda s: {"messages": ["joined"], "turns": 1})
    g.add_edge(["a", "b", "c"], "join")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"messages": ["start"], "turns": 0}, thread())


@scenario
def delta_resume_after_interrupt(lib: Run):
    def ask(s):
        answer = lib.interrupt("name?")
        return {"messages": [f"hello {answer}"]}

    g = lib.StateGraph(chat_state(lib, every=2))
    g.add_node("greet", lambda s: {"messages": ["greet"], "turns": 1})
    g.add_node("side", lambda s: {"messages": ["side"]})
    g.add_node("ask", ask)
    g.add_edge(lib.START, "greet")
    g.add_edge("greet", "ask")
    g.add_edge("greet", "side")  # finishes in the interrupted step: its writes are reused
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"messages": ["start"], "turns": 0}, cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume="Ada"), cfg)


@scenario
def delta_time_travel_and_fork(lib: Run):
    graph = looping_graph(lib, every=3, stop=5)
    cfg = thread()
    lib.invoke(graph, {"messages": ["hi"], "turns": 0}, cfg)
    history = lib.history(graph, cfg)
    middle = history[3].config  # an old checkpoint with writes stored on it
    lib.invoke(graph, None, middle)  # replays from there: a fork of the thread
    lib.update_state(graph, history[2].config, {"messages": ["edited"]})  # edit the past
    lib.invoke(graph, None, thread())


@scenario
def delta_update_state_and_overwrite(lib: Run):
    g = lib.StateGraph(chat_state(lib, every=4))
    g.add_node("one", lambda s: {"messages": ["one"], "turns": 1})
    g.add_node("reset", lambda s: {"messages": lib.Overwrite(["reset"]), "turns": 2})
    g.add_node("three", lambda s: {"messages": ["three"], "turns": 3})
    g.add_edge(lib.START, "one")
    g.add_edge("one", "reset")
    g.add_edge("reset", "three")
    graph = g.compile(checkpointer=lib.saver(), interrupt_before=["three"])
    cfg = thread()
    lib.invoke(graph, {"messages": ["start"], "turns": 0}, cfg)
    lib.update_state(graph, cfg, {"messages": ["by hand"]})
    lib.update_state(graph, cfg, {"messages": lib.Overwrite(["clean"])}, as_node="reset")
    lib.invoke(graph, None, cfg)
    lib.update_state(graph, thread("t2"), {"messages": ["fresh"], "turns": 0}, as_node="one")


@scenario
def delta_copy_keeps_the_counters(lib: Run):
    """as_node="__copy__" copies the checkpoint's delta counters with its values."""
    graph = looping_graph(lib, every=5, stop=3)
    cfg = thread()
    lib.invoke(graph, {"messages": ["hi"], "turns": 0}, cfg)
    lib.update_state(graph, cfg, None, as_node="__copy__")
    lib.invoke(graph, {"messages": ["more"], "turns": 1}, cfg)


@scenario
def delta_in_a_subgraph(lib: Run):
    State = chat_state(lib, every=2)
    inner = lib.StateGraph(State)
    inner.add_node("i1", lambda s: {"messages": ["i1"]})
    inner.add_node("i2", lambda s: {"messages": ["i2"], "turns": s["turns"] + 1})
    inner.add_edge(lib.START, "i1")
    inner.add_edge("i1", "i2")
    outer = lib.StateGraph(State)
    outer.add_node("before", lambda s: {"messages": ["before"]})
    outer.add_node("sub", inner.compile())
    outer.add_edge(lib.START, "before")
    outer.add_edge("before", "sub")
    graph = outer.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"messages": ["start"], "turns": 0}, thread())
    lib.invoke(graph, {"messages": ["more"], "turns": 0}, thread())


@scenario
def async_delta_resume_and_fork(lib: Run):
    async def ask(s):
        answer = lib.interrupt("more?")
        return {"messages": [answer], "turns": s["turns"] + 1}

    g = lib.StateGraph(chat_state(lib, every=2))
    g.add_node("talk", lambda s: {"messages": [f"m{s['turns']}"], "turns": s["turns"] + 1})
    g.add_node("ask", ask)
    g.add_edge(lib.START, "talk")
    g.add_conditional_edges("talk", lambda s: "talk" if s["turns"] < 3 else "ask")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.ainvoke(graph, {"messages": ["hi"], "turns": 0}, cfg)
    lib.ainvoke(graph, lib.Command(resume="yes"), cfg)
    history = lib.history(graph, cfg)
    lib.ainvoke(graph, None, history[2].config)


@scenario
def delta_exit_durability(lib: Run):
    def ask(s):
        return {"messages": [lib.interrupt("more?")], "turns": s["turns"] + 1}

    g = lib.StateGraph(chat_state(lib, every=50))  # no snapshot: the writes are all there is
    g.add_node("talk", lambda s: {"messages": [f"m{s['turns']}"], "turns": s["turns"] + 1})
    g.add_node("side", lambda s: {"messages": ["side"]})
    g.add_node("ask", ask)
    g.add_edge(lib.START, "talk")
    g.add_edge(lib.START, "side")
    g.add_conditional_edges("talk", lambda s: "talk" if s["turns"] < 3 else "ask")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"messages": ["hi"], "turns": 0}, cfg, durability="exit")
    lib.invoke(graph, lib.Command(resume="yes", update={"messages": ["edit"]}), cfg,
               durability="exit")
    lib.invoke(graph, {"messages": ["again"], "turns": 2}, cfg, durability="exit")


SYNC = [name for name in CAUSES if not name.startswith("async")]


@pytest.mark.lesson("18_delta_channel")
@pytest.mark.parametrize("name", list(CAUSES))
def test_in_memory_same_as_langgraph(name):
    assert_same(name, record(CAUSES[name], LANGGRAPH), record(CAUSES[name], OURS))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def same_saver(request):
    """The same kind of saver for both libraries (so the stored rows are compared)."""
    return saver_of(request.param, request)


@pytest.mark.parametrize("name", SYNC)
def test_on_saver_same_as_langgraph(name, same_saver):
    assert_same(name, record(CAUSES[name], LANGGRAPH, same_saver),
                record(CAUSES[name], OURS, same_saver))


@pytest.fixture(params=["aio-sqlite", pytest.param("aio-postgres", marks=pytest.mark.postgres)])
def same_async_saver(request):
    return saver_of(request.param, request)


@pytest.mark.parametrize("name", [n for n in CAUSES if n.startswith("async")])
def test_on_async_saver_same_as_langgraph(name, same_async_saver):
    assert_same(name, record(CAUSES[name], LANGGRAPH, same_async_saver),
                record(CAUSES[name], OURS, same_async_saver))


# --- one library writes the database, the other goes on from it --------------------------------
def interrupted_thread(lib: Run):
    """Six turns, then an interrupt: the database holds snapshots and writes after the last."""
    def ask(s):
        return {"messages": [lib.interrupt("go on?")], "turns": s["turns"] + 1}

    g = lib.StateGraph(chat_state(lib, every=4))
    g.add_node("talk", lambda s: {"messages": [f"m{s['turns']}"], "turns": s["turns"] + 1})
    g.add_node("ask", ask)
    g.add_edge(lib.START, "talk")
    g.add_conditional_edges("talk", lambda s: "talk" if s["turns"] < 6 else "ask")
    return g.compile(checkpointer=lib.saver())


def resume_it(lib: Run):
    graph = interrupted_thread(lib)
    lib.get_state(graph, thread())
    lib.invoke(graph, lib.Command(resume="yes"), thread())


@pytest.mark.parametrize("writer,reader", [(LANGGRAPH, OURS), (OURS, LANGGRAPH)])
def test_a_database_written_by_one_library_is_continued_by_the_other(writer, reader, sqlite_path):
    def write(lib: Run):
        lib.invoke(interrupted_thread(lib), {"messages": ["hi"], "turns": 0}, thread())

    made = f"{sqlite_path}.made"
    record(write, writer, lambda lib: lib.SqliteSaver.from_conn_string(made))
    copies = {}
    for lib in (writer, reader):  # each library continues its own copy of the same file
        copies[lib.name] = f"{sqlite_path}.{lib.name}"
        shutil.copy(made, copies[lib.name])
    same = record(resume_it, writer, lambda lib: lib.SqliteSaver.from_conn_string(copies[lib.name]))
    other = record(resume_it, reader,
                   lambda lib: lib.SqliteSaver.from_conn_string(copies[lib.name]))
    assert_same("resume_it", same, other, writer.name, reader.name)


@pytest.mark.postgres
@pytest.mark.parametrize("writer,reader", [(LANGGRAPH, OURS), (OURS, LANGGRAPH)])
def test_a_postgres_thread_written_by_one_library_is_continued_by_the_other(
        writer, reader, postgres_uri):
    def write(lib: Run):
        lib.invoke(interrupted_thread(lib), {"messages": ["hi"], "turns": 0}, thread())

    def keep(lib):  # the database as the writer left it (not emptied again)
        return lib.PostgresSaver.from_conn_string(postgres_uri)

    record(write, writer, lambda lib: fresh_postgres(lib, postgres_uri))
    state = {}
    for lib in (reader, writer):
        with contextlib.ExitStack():
            state[lib.name] = record(lambda run: run.get_state(
                interrupted_thread(run), thread()), lib, keep)
    assert_same("get_state", state[writer.name], state[reader.name], writer.name, reader.name)


@pytest.mark.postgres
def test_postgres_rows_mark_a_snapshot_as_langgraph_does(postgres_uri):
    """The raw JSONB: a snapshot is a blob plus a `true` marker in channel_values."""
    import psycopg

    def raw(lib):
        record(CAUSES["delta_snapshots_every_n_updates"], lib,
               lambda lib: fresh_postgres(lib, postgres_uri))
        with psycopg.connect(postgres_uri) as conn:
            return conn.execute(
                "SELECT checkpoint -> 'channel_values' -> 'messages' FROM checkpoints "
                "ORDER BY checkpoint_id").fetchall()

    ours, theirs = raw(OURS), raw(LANGGRAPH)
    assert ours == theirs and (True,) in ours
