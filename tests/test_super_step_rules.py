"""The functions each chapter ends with, tested directly on hand-built channels and checkpoints.

Run one chapter's tests with ``pytest --lesson 04`` (the marker names the notebook).
"""

from __future__ import annotations

import operator

import pytest

from lgcheckpoint.channels import BinaryOperatorAggregate, LastValue
from lgcheckpoint.checkpoint.base import PutWrites, empty_checkpoint
from lgcheckpoint.errors import InvalidUpdateError
from lgcheckpoint.pregel.algo import InputWrites, apply_writes, mark_seen, should_run
from lgcheckpoint.pregel.checkpoint import channel_values, create_checkpoint
from lgcheckpoint.pregel.loop import FORK, FRESH, REPLAY, RESUME_RUN, input_case
from lgcheckpoint.pregel.node import Node
from lgcheckpoint.pregel.saves import Put, SyncSaveQueue
from lgcheckpoint.pregel.view import StateView
from lgcheckpoint.types import Command


def next_version(current, _channel=None):
    return 1 if current is None else current + 1


def node(name: str, *triggers: str) -> Node:
    return Node(name, lambda state: state, list(triggers), ["total"], frozenset({"total"}))


def channels() -> dict:
    return {"total": BinaryOperatorAggregate(int, operator.add, key="total"),
            "last": LastValue(int, key="last")}


@pytest.mark.lesson("04_versions_seen")
def test_should_run_when_a_trigger_is_newer_than_what_the_node_saw():
    chans, checkpoint, adder = channels(), empty_checkpoint(), node("adder", "total")
    chans["total"].update([1])
    checkpoint["channel_versions"] = {"total": 1}
    assert should_run(adder, chans, checkpoint, 0)  # never ran: anything available triggers it
    mark_seen(checkpoint, "adder", ["total"])
    assert checkpoint["versions_seen"]["adder"] == {"total": 1}
    assert not should_run(adder, chans, checkpoint, 0)  # it saw version 1
    checkpoint["channel_versions"]["total"] = 2
    assert should_run(adder, chans, checkpoint, 0)


@pytest.mark.lesson("01_super_steps")
def test_apply_writes_lands_a_step_at_once_with_one_new_version():
    chans, checkpoint = channels(), empty_checkpoint()
    view = StateView(chans)  # the state as dicts beside the channels (pregel/view.py)
    apply_writes(checkpoint, chans, [InputWrites([("total", 1)])], next_version, {}, view)
    a = InputWrites([("total", 2)], path=("a",), name="a", triggers=["total"])
    b = InputWrites([("total", 3), ("last", 7)], path=("b",), name="b", triggers=["total"])
    updated = apply_writes(checkpoint, chans, [b, a], next_version, {}, view)
    assert updated == {"total", "last"}
    assert chans["total"].get() == 6 and chans["last"].get() == 7
    assert checkpoint["channel_versions"] == {"total": 2, "last": 2}  # one version per step
    assert checkpoint["versions_seen"]["a"] == {"total": 1}  # what triggered it, before the step


@pytest.mark.lesson("02_channels")
def test_apply_writes_refuses_two_values_for_one_last_value_channel():
    chans, checkpoint = channels(), empty_checkpoint()
    two = [InputWrites([("last", 1)], path=("a",), name="a", triggers=["x"]),
           InputWrites([("last", 2)], path=("b",), name="b", triggers=["x"])]
    with pytest.raises(InvalidUpdateError):
        apply_writes(checkpoint, chans, two, next_version, {}, StateView(chans))


@pytest.mark.lesson("03_checkpoint_anatomy")
def test_create_checkpoint_stores_written_channels_and_copies_versions():
    chans, previous = channels(), empty_checkpoint()
    apply_writes(previous, chans, [InputWrites([("total", 5)])], next_version, {},
                 StateView(chans))
    checkpoint = create_checkpoint(
        previous, channel_values(chans, previous["channel_versions"]), step=3)
    assert checkpoint["channel_values"] == {"total": 5}  # "last" was never written
    assert checkpoint["channel_versions"] == {"total": 1}
    assert checkpoint["channel_versions"] is not previous["channel_versions"]
    assert checkpoint["id"] != previous["id"] and checkpoint["id"] > previous["id"]


@pytest.mark.lesson("09_time_travel")
@pytest.mark.parametrize(("input", "has_state", "addressed", "source", "superseded", "case"), [
    ({"x": 1}, True, False, "loop", False, FRESH),
    (None, False, False, None, False, FRESH),  # nothing saved yet: None is no input at all
    (None, True, False, "loop", False, RESUME_RUN),
    (Command(resume="yes"), True, True, "loop", True, RESUME_RUN),  # an answer, not a rewind
    (None, True, True, "update", False, REPLAY),
    (None, True, True, "loop", False, FORK),
    (None, True, True, "update", True, FORK),
])
def test_input_case_names_how_a_run_starts(input, has_state, addressed, source, superseded, case):
    assert input_case(input, has_state, addressed, None, source, superseded) == case


class Recorder:
    """A saver that only records which verb was called, in order."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def put_writes(self, config, writes, task_id, task_path=""):
        self.calls.append(f"put_writes {task_id}")

    def put(self, config, checkpoint, metadata, new_versions):
        self.calls.append(f"put {checkpoint}")

    def put_writes_and_checkpoint(self, task, config, checkpoint, metadata, new_versions):
        self.calls.append(f"put_writes_and_checkpoint {task.task_id} {checkpoint}")


@pytest.mark.lesson("07_durability")
@pytest.mark.parametrize(("durability", "expected"), [
    ("sync", ["put_writes t1", "put_writes_and_checkpoint t2 c1", "put_writes t3"]),
    ("async", ["put_writes t1", "put_writes_and_checkpoint t2 c1", "put_writes t3"]),
    ("exit", ["put c-exit", "put_writes t3"]),
])
def test_save_queue_follows_the_durability_table(durability, expected):
    saver = Recorder()
    queue = SyncSaveQueue(saver, durability)
    writes = {t: PutWrites({}, [("x", 1)], t) for t in ("t1", "t2", "t3")}
    queue.after_task(writes["t1"], last_of_step=False)
    queue.after_task(writes["t2"], last_of_step=True)  # held for the step's put
    queue.after_step(Put({}, "c1", {}, {}))
    queue.after_task(writes["t3"], last_of_step=True)  # held, but the run stops: sent alone
    queue.at_exit(Put({}, "c-exit", {}, {}), [writes["t3"]])
    queue.close()
    assert saver.calls == expected
