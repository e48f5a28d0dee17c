"""Channels: what each one does with the writes of a step, and how it survives a checkpoint."""

import dataclasses
import json
import operator

import pytest

from lgcheckpoint.channels import (
    MISSING, BinaryOperatorAggregate, DeltaChannel, EphemeralValue, LastValue,
    LastValueAfterFinish, NamedBarrierValue, NamedBarrierValueAfterFinish, Topic, UntrackedValue,
)
from lgcheckpoint.errors import EmptyChannelError, InvalidUpdateError
from lgcheckpoint.types import Overwrite


def restored(chan):
    """The channel as a resumed run sees it: rebuilt from its stored value."""
    return chan.from_checkpoint(chan.checkpoint())


def test_last_value_keeps_one_write():
    chan = LastValue(int, key="x")
    assert not chan.is_available()
    with pytest.raises(EmptyChannelError):
        chan.get()
    assert chan.update([]) is False
    assert chan.update([3]) is True
    assert restored(chan).get() == 3
    with pytest.raises(InvalidUpdateError, match="At key 'x'.*Annotated"):
        chan.update([1, 2])


def test_missing_is_what_a_channel_without_a_stored_value_keeps():
    """from_checkpoint(MISSING) is an empty channel; a channel that keeps nothing in a
    checkpoint (UntrackedValue, DeltaChannel: its writes are stored instead) returns MISSING."""
    with pytest.raises(EmptyChannelError):
        LastValue(int).from_checkpoint(MISSING).get()
    untracked = UntrackedValue(dict).from_checkpoint(MISSING)
    untracked.update([{"session": 1}])
    assert untracked.get() == {"session": 1} and untracked.checkpoint() is MISSING
    with pytest.raises(EmptyChannelError):
        UntrackedValue(dict).from_checkpoint(untracked.checkpoint()).get()
    delta = DeltaChannel(lambda value, writes: [*value, *writes], list).from_checkpoint(MISSING)
    delta.update(["a"])
    assert delta.get() == ["a"] and delta.checkpoint() is MISSING


def test_reducer_folds_writes_from_the_empty_value():
    chan = BinaryOperatorAggregate(list, operator.add, key="log")
    assert chan.get() == []  # list() is where a list reducer starts
    chan.update([["a"], ["b"]])
    assert restored(chan).get() == ["a", "b"]
    assert BinaryOperatorAggregate(int, operator.add).get() == 0


def test_overwrite_bypasses_the_reducer_once_per_step():
    chan = BinaryOperatorAggregate(list, operator.add, key="log")
    chan.update([["a"]])
    chan.update([Overwrite(["z"]), ["ignored after overwrite"]])
    assert chan.get() == ["z"]
    chan.update([{"__overwrite__": ["y"]}])
    assert chan.get() == ["y"]
    with pytest.raises(InvalidUpdateError, match="one Overwrite"):
        chan.update([Overwrite([1]), Overwrite([2])])


def test_an_overwrite_that_went_through_json_still_overwrites():
    """json.dumps(dataclasses.asdict(Overwrite(v))) keeps its "type" tag; that is enough."""
    chan = BinaryOperatorAggregate(list, lambda log, item: [*log, item], key="log")
    chan.update(["a"])
    chan.update([json.loads(json.dumps(dataclasses.asdict(Overwrite(["z"]))))])
    assert chan.get() == ["z"]
    chan.update([{"value": "v"}, {"type": "human", "value": "w"}])  # not tagged: plain values
    assert chan.get() == ["z", {"value": "v"}, {"type": "human", "value": "w"}]


def test_ephemeral_value_lasts_one_step():
    chan = EphemeralValue(guard=False)
    assert chan.update([None]) is True and chan.is_available()
    assert chan.update([]) is True and not chan.is_available()  # a step without a write clears it
    assert chan.update([]) is False
    with pytest.raises(InvalidUpdateError):
        EphemeralValue(guard=True).update([1, 2])


def test_topic_collects_values_of_a_step():
    chan = Topic()
    chan.update([1, [2, 3]])
    assert chan.get() == [1, 2, 3]
    assert restored(chan).get() == [1, 2, 3]
    assert chan.update([]) is True and not chan.is_available()
    acc = Topic(accumulate=True)
    acc.update([1])
    acc.update([2])
    assert acc.get() == [1, 2]


def test_named_barrier_waits_for_every_writer():
    chan = NamedBarrierValue(str, {"a", "b"}, key="join:a+b:c")
    chan.update(["a"])
    assert not chan.is_available()
    assert restored(chan).checkpoint() == {"a"}
    chan.update(["b"])
    assert chan.is_available()
    assert chan.consume() is True and not chan.is_available()
    with pytest.raises(InvalidUpdateError, match="not in"):
        chan.update(["z"])


def test_after_finish_channels_wait_for_the_end_of_the_run():
    chan = LastValueAfterFinish()
    chan.update([None])
    assert not chan.is_available()
    assert chan.checkpoint() == (None, False)
    assert chan.finish() is True and chan.is_available()
    assert restored(chan).is_available()
    assert chan.consume() is True and chan.checkpoint() is MISSING
    barrier = NamedBarrierValueAfterFinish(str, {"a"})
    barrier.update(["a"])
    assert not barrier.is_available() and barrier.finish() and barrier.is_available()


def test_restoring_never_shares_state():
    chan = Topic()
    chan.update([1])
    copy = restored(chan)
    copy.update([2])
    assert chan.get() == [1]
