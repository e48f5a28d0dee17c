"""Two humans on one thread: N processes answer the same interrupt at once (issue 16, part 1).

Four processes send ``Command(resume=...)`` to one thread at the same moment, on SQLite and on
Postgres. With the thread guard (reject or enqueue) the approved node's side effect — a line
appended to a file — happens exactly once and the history stays one chain; the others are told
``busy`` (reject) or ``stale`` (enqueue: they waited, then found the question answered). With the
guard off the same race runs the node several times and forks the thread: LangGraph's behaviour.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from psycopg_pool import AsyncConnectionPool

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.demos import build_approval_agent
from lgcheckpoint.errors import StaleResumeError, ThreadBusyError
from lgcheckpoint.types import Command
from tests.reliability import two_humans_child
from tests.reliability.helpers import Store, chain_problems, open_saver, record

CHILD = str(Path(two_humans_child.__file__))
HUMANS = 4


@pytest.fixture(params=["sqlite", "postgres", "postgres pool"])
def db(request, tmp_path) -> tuple[str, str, bool]:
    """(kind, target, pooled): each child's saver on one connection, or on a pool of its own."""
    kind, pooled = request.param.split()[0], request.param.endswith("pool")
    target = (request.getfixturevalue("postgres_uri") if kind == "postgres"
              else str(tmp_path / "shared.sqlite"))
    with open_saver(kind, target) as saver:
        saver.setup()
    return kind, target, pooled


def ask(kind: str, target: str, thread: str, side_file: str) -> None:
    """Run the thread up to its question."""
    with open_saver(kind, target) as saver:
        graph = two_humans_child.review_graph(saver, side_file)
        out = graph.invoke({"text": "publish the post?"}, {"configurable": {"thread_id": thread}})
        assert out["__interrupt__"]


def race(kind: str, target: str, thread: str, strategy: str, tmp_path: Path, pooled: bool = False
         ) -> list[dict]:
    """Start HUMANS processes, let them answer at the same instant, collect how each ended."""
    go = tmp_path / f"go-{thread}"
    side = str(tmp_path / f"side-{thread}.txt")
    children = []
    for who in range(HUMANS):
        job = {"kind": kind, "target": target, "thread": thread, "strategy": strategy,
               "side_file": side, "go_file": str(go), "who": who, "pool": pooled}
        children.append(subprocess.Popen([sys.executable, CHILD, json.dumps(job)], text=True,
                                         stdout=subprocess.PIPE))
    for child in children:  # every one is connected and waiting
        assert child.stdout.readline().strip() == "ready"
    go.touch()
    results = []
    for child in children:
        out, _ = child.communicate(timeout=60)
        assert child.returncode == 0, out
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


@pytest.mark.parametrize("strategy", ["reject", "enqueue", "off"])
def test_four_processes_answer_the_same_interrupt(db, strategy, tmp_path):
    kind, target, pooled = db
    label = kind + (" pool" if pooled else "")
    thread = f"two-humans-{strategy}-{uuid.uuid4().hex[:6]}"
    side = tmp_path / f"side-{thread}.txt"
    ask(kind, target, thread, str(side))
    results = race(kind, target, thread, strategy, tmp_path, pooled)
    outcomes = sorted(r["outcome"] for r in results)
    effects = side.read_text().splitlines() if side.exists() else []
    with open_saver(kind, target) as saver:
        history = list(saver.list({"configurable": {"thread_id": thread}}))
    store = Store(kind, target)
    if strategy == "off":  # LangGraph's behaviour: every answer runs the node, the thread forks
        assert outcomes == ["ran"] * HUMANS
        assert len(effects) >= 2, effects
        record(f"two humans {label} guard off: {HUMANS} answers ran the node {len(effects)} "
               f"times; {len(history)} checkpoints, {len(chain_problems(history))} chain breaks")
        return
    refused = "busy" if strategy == "reject" else "stale"
    assert outcomes.count("ran") == 1, outcomes
    assert set(outcomes) <= {"ran", refused, "stale"}, outcomes
    assert len(effects) == 1, effects
    assert chain_problems(history) == [], chain_problems(history)
    assert len(history) == 3  # input, START's step (where review asked), the answered step
    assert store.orphan_writes(thread) == 0
    waited = max(r["seconds"] for r in results if r["outcome"] != "ran")
    record(f"two humans {label} {strategy}: {HUMANS} answers at once -> side effect ran "
           f"{len(effects)}x, outcomes {outcomes}, one chain of {len(history)} checkpoints, "
           f"slowest refusal {waited * 1000:.0f} ms")


@pytest.mark.lesson("16_two_humans")
@pytest.mark.parametrize("strategy", ["reject", "enqueue"])
def test_four_threads_in_one_process_on_inmemory(strategy, tmp_path):
    side = tmp_path / "side.txt"
    graph = two_humans_child.review_graph(InMemorySaver(), str(side), seconds=0.2)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"text": "publish?"}, config)
    outcomes, barrier = [], threading.Barrier(HUMANS)

    def human(who: int) -> None:
        barrier.wait()
        try:
            graph.invoke(Command(resume=f"yes {who}"), config, multitask_strategy=strategy)
            outcomes.append("ran")
        except ThreadBusyError:
            outcomes.append("busy")
        except StaleResumeError:
            outcomes.append("stale")

    humans = [threading.Thread(target=human, args=(i,)) for i in range(HUMANS)]
    for h in humans:
        h.start()
    for h in humans:
        h.join(30)
    assert sorted(outcomes).count("ran") == 1 and len(outcomes) == HUMANS, outcomes
    assert len(side.read_text().splitlines()) == 1
    assert chain_problems(list(graph.checkpointer.list(config))) == []


@pytest.mark.lesson("16_two_humans")
def test_a_second_run_waits_then_starts_from_the_head_the_first_left(sqlite_path, tmp_path):
    """enqueue: a plain run queued behind another starts from the checkpoint the first wrote."""
    with open_saver("sqlite", sqlite_path) as saver:
        graph = two_humans_child.review_graph(saver, str(tmp_path / "s.txt"), seconds=0.3)
        config = {"configurable": {"thread_id": "q"}}
        graph.invoke({"text": "one"}, config)
        first = threading.Thread(target=graph.invoke, args=(Command(resume="yes"), config))
        first.start()
        time.sleep(0.1)  # the first run is inside review now
        started = time.monotonic()
        out = graph.invoke({"text": "two"}, config)  # queued: runs after the first finished
        waited = time.monotonic() - started
        first.join()
        history = list(saver.list(config))
        assert waited > 0.1 and out["__interrupt__"]
        assert chain_problems(history) == []
        assert [t.metadata["source"] for t in history[:2]] == ["loop", "input"]
        assert history[2].checkpoint["channel_values"]["answer"] == "yes"


@pytest.mark.lesson("16_two_humans")
@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_a_stale_answer_is_refused_and_writes_nothing(kind, request, tmp_path):
    target = (request.getfixturevalue("postgres_uri") if kind == "postgres"
              else str(tmp_path / "stale.sqlite"))
    thread = f"stale-{uuid.uuid4().hex[:6]}"
    config = {"configurable": {"thread_id": thread}}
    side = tmp_path / "side.txt"
    with (open_saver(kind, target) if kind != "memory" else _memory()) as saver:
        saver.setup() if kind != "memory" else None
        graph = two_humans_child.review_graph(saver, str(side), seconds=0)
        asked = graph.invoke({"text": "x"}, config)["__interrupt__"][0]
        graph.invoke(Command(resume="yes"), config)
        before = [t.checkpoint["id"] for t in saver.list(config)]
        counts = Store(kind, target).counts(thread) if kind != "memory" else None
        with pytest.raises(StaleResumeError, match=f"thread '{thread}'.*no interrupt waits"):
            graph.invoke(Command(resume="again"), config)
        with pytest.raises(StaleResumeError, match=asked.id):  # answered by id: named
            graph.invoke(Command(resume={asked.id: "again"}), config)
        assert [t.checkpoint["id"] for t in saver.list(config)] == before
        if counts is not None:
            assert Store(kind, target).counts(thread) == counts
        assert len(side.read_text().splitlines()) == 1


class _memory:
    def __enter__(self):
        return InMemorySaver()

    def __exit__(self, *exc):
        return False


def test_guard_off_drops_a_stale_answer_as_langgraph_does(tmp_path):
    """multitask_strategy='off': the same outcome, checkpoint for checkpoint, as LangGraph 1.2."""
    from langgraph.checkpoint.memory import InMemorySaver as LangGraphSaver
    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import StateGraph as LGStateGraph
    from langgraph.types import Command as LGCommand
    from langgraph.types import interrupt as lg_interrupt

    from lgcheckpoint.graph import END, START, StateGraph
    from lgcheckpoint.types import interrupt

    def build(state_graph, start, end, ask, saver):
        def review(request: two_humans_child.Request) -> two_humans_child.Request:
            return {"answer": ask("ok?")}
        builder = state_graph(two_humans_child.Request)
        builder.add_node("review", review)
        builder.add_edge(start, "review")
        builder.add_edge("review", end)
        return builder.compile(checkpointer=saver)

    results = []
    for graph, command in ((build(StateGraph, START, END, interrupt, InMemorySaver()), Command),
                           (build(LGStateGraph, LG_START, LG_END, lg_interrupt, LangGraphSaver()),
                            LGCommand)):
        config = {"configurable": {"thread_id": "t"}}
        graph.invoke({"text": "x"}, config)
        graph.invoke(command(resume="yes"), config)
        extra = {"multitask_strategy": "off"} if command is Command else {}
        second = graph.invoke(command(resume="again"), config, **extra)
        history = [(s.metadata["source"], s.metadata["step"], s.values, s.next)
                   for s in graph.get_state_history(config)]
        results.append((second, history))
    assert results[0] == results[1]


@pytest.mark.lesson("16_two_humans")
def test_file_locks_exclude_another_process_and_die_with_it(tmp_path):
    """FileLocks: a byte per thread; another process cannot take it until the holder exits."""
    from lgcheckpoint.checkpoint.locks import FileLocks, thread_key

    path = str(tmp_path / "x.sqlite")
    locks = FileLocks.for_database(path)
    key = thread_key("t1")
    assert locks.try_lock(key)
    probe = ("import sys; from lgcheckpoint.checkpoint.locks import FileLocks, thread_key; "
             "l = FileLocks.for_database(sys.argv[1]); "
             "print(l.try_lock(thread_key('t1')), l.try_lock(thread_key('t2')))")
    run = [sys.executable, "-c", probe, path]
    assert subprocess.run(run, capture_output=True, text=True, check=True).stdout.split() == [
        "False", "True"]
    locks.unlock(key)
    assert subprocess.run(run, capture_output=True, text=True, check=True).stdout.split() == [
        "True", "True"]


@pytest.mark.lesson("16_two_humans")
def test_an_unknown_strategy_is_refused():
    graph = two_humans_child.review_graph(InMemorySaver(), "/dev/null", seconds=0)
    with pytest.raises(ValueError, match="multitask_strategy must be one of"):
        graph.invoke({"text": "x"}, {"configurable": {"thread_id": "t"}},
                     multitask_strategy="rollback")


@pytest.mark.parametrize("strategy", ["reject", "enqueue"])
@pytest.mark.parametrize("kind", ["sqlite", "postgres", "postgres pool"])
def test_async_runs_take_the_same_lock(kind, strategy, request, tmp_path):
    """ainvoke holds the thread too, through the same locks as a sync run."""
    import asyncio

    if kind == "sqlite":
        from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver as Saver
        target = str(tmp_path / "async.sqlite")
    else:
        from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver as Saver
        target = request.getfixturevalue("postgres_uri")
    pooled, kind = kind.endswith("pool"), kind.split()[0]
    thread = f"async-{strategy}-{uuid.uuid4().hex[:6]}"
    config = {"configurable": {"thread_id": thread}}
    side = tmp_path / "side.txt"

    async def main() -> list[str]:
        async with contextlib.AsyncExitStack() as stack:
            if pooled:  # each run borrows its lock's connection from the pool
                pool = await stack.enter_async_context(AsyncConnectionPool(
                    target, min_size=1, max_size=2, kwargs={"autocommit": True}, open=False))
                saver = Saver(pool)
            else:
                saver = await stack.enter_async_context(Saver.from_conn_string(target))
            await saver.setup()
            graph = two_humans_child.review_graph(saver, str(side))
            await graph.ainvoke({"text": "x"}, config)

            async def human(who: int) -> str:
                try:
                    await graph.ainvoke(Command(resume=f"yes {who}"), config,
                                        multitask_strategy=strategy)
                    return "ran"
                except ThreadBusyError:
                    return "busy"
                except StaleResumeError:
                    return "stale"

            return sorted(await asyncio.gather(*(human(i) for i in range(HUMANS))))

    outcomes = asyncio.run(main())
    assert outcomes.count("ran") == 1, outcomes
    assert len(side.read_text().splitlines()) == 1
    with open_saver(kind, target) as saver:
        assert chain_problems(list(saver.list(config))) == []



def test_a_fork_of_an_answered_question_takes_a_new_answer():
    """Time travel is not a stale answer: update_state forks the old question, which asks again."""
    graph = build_approval_agent(InMemorySaver())
    config = {"configurable": {"thread_id": "fork"}}
    text = "My order #1042 arrived torn, I want a refund"
    graph.invoke({"messages": [{"role": "user", "content": text}]}, config)
    graph.invoke(Command(resume={"amount": 60.0}), config)
    asked = next(s for s in graph.get_state_history(config) if s.interrupts)
    with pytest.raises(StaleResumeError):  # the old question itself was answered
        graph.invoke(Command(resume={"amount": 100.0}), asked.config)
    fork = graph.update_state(asked.config, None)
    out = graph.invoke(Command(resume={"amount": 100.0}), fork)
    assert out["messages"][-2]["content"] == "refunded 100.00 EUR for order #1042"
    with pytest.raises(StaleResumeError):  # and now the fork's question is answered too
        graph.invoke(Command(resume={"amount": 1.0}), fork)


def test_a_run_cancelled_while_it_takes_the_lock_leaves_the_thread_free(monkeypatch, tmp_path):
    """asyncio cancels an ainvoke while its lock is being taken (in a worker thread): the lock
    taken meanwhile is released, so the next run on the thread is not told it is busy."""
    import asyncio

    from lgcheckpoint.checkpoint import locks

    taking = locks.NoLocks.try_lock

    def slow_try_lock(self, key):
        time.sleep(0.3)
        return taking(self, key)

    monkeypatch.setattr(locks.NoLocks, "try_lock", slow_try_lock)
    graph = two_humans_child.review_graph(InMemorySaver(), str(tmp_path / "side"), seconds=0)
    config = {"configurable": {"thread_id": "cancelled"}}

    async def main() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(graph.ainvoke({"text": "x"}, config), 0.1)
        await asyncio.sleep(0.4)  # the worker thread has taken the lock by now
        await graph.ainvoke({"text": "x"}, config, multitask_strategy="reject")

    asyncio.run(main())
