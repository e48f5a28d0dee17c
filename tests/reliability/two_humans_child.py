"""One "human" answering the approval question of a shared thread, in its own process.

Started N times at once by test_two_humans.py: each says it is ready, waits for the go file, then
sends Command(resume=...) with the strategy it was given and prints how that ended, as JSON.
The approved node appends a line to a side-effect file: the test counts the lines.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import contextmanager
from typing import Any, TypedDict


class Request(TypedDict, total=False):
    text: str
    answer: str


def review_graph(saver: Any, side_file: str, seconds: float = 0.3) -> Any:
    """START -> review (asks, then acts on the answer: one line in side_file) -> END."""
    from lgcheckpoint.graph import END, START, StateGraph
    from lgcheckpoint.types import interrupt

    def review(request: Request) -> Request:
        answer = interrupt({"approve?": request["text"]})
        time.sleep(seconds)  # long enough that every other human arrives while this one acts
        with open(side_file, "a") as f:
            f.write(f"published by {os.getpid()}: {answer}\n")
        return {"answer": answer}

    builder = StateGraph(Request)
    builder.add_node("review", review)
    builder.add_edge(START, "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=saver)


@contextmanager
def saver_for(kind: str, target: str, pooled: bool = False):
    if kind == "sqlite":
        from lgcheckpoint.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(target) as saver:
            yield saver
    elif pooled:  # each run borrows its lock's connection from the pool
        from psycopg_pool import ConnectionPool

        from lgcheckpoint.checkpoint.postgres import PostgresSaver

        with ConnectionPool(target, min_size=1, max_size=2, kwargs={"autocommit": True}) as pool:
            yield PostgresSaver(pool)
    else:
        from lgcheckpoint.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(target) as saver:
            yield saver


def main(job: dict) -> None:
    from lgcheckpoint.errors import StaleResumeError, ThreadBusyError
    from lgcheckpoint.types import Command

    with saver_for(job["kind"], job["target"], job.get("pool", False)) as saver:
        graph = review_graph(saver, job["side_file"])
        config = {"configurable": {"thread_id": job["thread"]}}
        print("ready", flush=True)
        while not os.path.exists(job["go_file"]):
            time.sleep(0.001)
        started = time.monotonic()
        try:
            graph.invoke(Command(resume=f"yes from {job['who']}"), config,
                         multitask_strategy=job["strategy"])
            outcome = "ran"
        except ThreadBusyError:
            outcome = "busy"
        except StaleResumeError:
            outcome = "stale"
        except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
            outcome = f"error {type(exc).__name__}: {exc}"
        print(json.dumps({"who": job["who"], "outcome": outcome,
                          "seconds": round(time.monotonic() - started, 3)}), flush=True)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
