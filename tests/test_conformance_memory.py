"""InMemorySaver passes LangGraph's public conformance suite: all 8 capabilities, every test."""

import pytest

from lgcheckpoint.checkpoint.base import BaseCheckpointSaver
from lgcheckpoint.checkpoint.memory import InMemorySaver
from tests.conformance_helpers import run_conformance


async def fresh_memory_saver():
    with InMemorySaver() as saver:
        yield saver


async def test_in_memory_saver_is_fully_conformant():
    report = await run_conformance("lgcheckpoint InMemorySaver", fresh_memory_saver)
    assert report.conformance_level() == "FULL"


class OnlyInherits(InMemorySaver):
    """A saver that forgets prune: it inherits the base's default instead."""

    prune = BaseCheckpointSaver.prune
    aprune = BaseCheckpointSaver.aprune


async def test_harness_rejects_a_saver_missing_a_capability():
    async def factory():
        yield OnlyInherits()

    with pytest.raises(AssertionError, match="prune: no implementation"):
        await run_conformance("incomplete", factory)
