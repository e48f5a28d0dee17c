"""Run LangGraph's public saver conformance suite against one of our savers, and demand FULL marks.

Usage (in an async test; pytest runs it with asyncio_mode=auto)::

    from tests.conformance_helpers import run_conformance

    async def fresh_saver():          # an async generator: yield one fresh saver, then clean up
        with SqliteSaver.from_conn_string(path) as saver:
            yield saver

    async def test_sqlite_conformance():
        await run_conformance("SqliteSaver", fresh_saver)

``run_conformance(name, factory, lifespan=None) -> CapabilityReport``

* ``factory``: async-generator function; called once per capability, it must yield a *fresh, empty*
  saver and may clean up after the yield.
* ``lifespan``: optional async-generator function run once around the whole suite (create / drop a
  database, open a pool...).
* Prints the suite's report, then asserts that all 8 capabilities (put, put_writes, get_tuple, list,
  delete_thread, delete_for_runs, copy_thread, prune) were detected and run, and that every test in
  each passed; the assertion message lists each failing test with its error.

The suite detects a capability when the saver's async method is not LangGraph's base default. Ours
never inherit from LangGraph, so that check always succeeds; we add our own: the saver must override
the sync verb or its async twin relative to *our* ``BaseCheckpointSaver``, otherwise the
capability is reported missing here even though the suite would (uselessly) run it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import CapabilityReport, ProgressCallbacks

from lgcheckpoint.checkpoint.base import BaseCheckpointSaver

# the capabilities the suite knows, with the sync verb that implements each in our savers
CAPABILITIES = {
    "put": "put",
    "put_writes": "put_writes",
    "get_tuple": "get_tuple",
    "list": "list",
    "delete_thread": "delete_thread",
    "delete_for_runs": "delete_for_runs",
    "copy_thread": "copy_thread",
    "prune": "prune",
}

SaverFactory = Callable[[], AsyncGenerator[BaseCheckpointSaver, None]]
Lifespan = Callable[[], AsyncGenerator[None, None]]


def implemented_here(saver: object, verb: str) -> bool:
    """True if the saver overrides our base's sync verb or its async twin (not just inherits)."""
    kind = type(saver)
    if not isinstance(saver, BaseCheckpointSaver):
        return True  # a foreign saver (e.g. LangGraph's own, used as a reference): trust the suite
    return any(
        getattr(kind, name) is not getattr(BaseCheckpointSaver, name) for name in (verb, "a" + verb)
    )


async def run_conformance(
    name: str, factory: SaverFactory, lifespan: Lifespan | None = None
) -> CapabilityReport:
    """Run every capability suite against fresh savers from ``factory``; fail unless all pass."""
    inherited: set[str] = set()

    async def checked_factory() -> AsyncGenerator[BaseCheckpointSaver, None]:
        # note which verbs each fresh saver merely inherits, then hand it to the suite
        async for saver in factory():
            inherited.update(
                cap for cap, verb in CAPABILITIES.items() if not implemented_here(saver, verb))
            yield saver

    registered = checkpointer_test(name=name, lifespan=lifespan)(checked_factory)
    report = await validate(registered, progress=ProgressCallbacks.default())
    report.print_report()

    problems = [f"{cap}: no implementation (inherits the base default)"
                for cap in sorted(inherited)]
    for cap in CAPABILITIES:
        result = report.results.get(cap)
        if result is None or not result.detected:
            problems.append(f"{cap}: not detected by the suite")
        elif result.passed is not True:
            problems.append(f"{cap}: {result.tests_failed} failed of "
                            f"{result.tests_passed + result.tests_failed}")
            problems.extend(f"    {failure.strip()}" for failure in result.failures)
        elif result.tests_passed == 0 or result.tests_skipped:
            problems.append(
                f"{cap}: ran {result.tests_passed} tests, skipped {result.tests_skipped}")
    assert not problems, f"{name} is not fully conformant:\n" + "\n".join(problems)
    return report
