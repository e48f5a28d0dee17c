"""The current state kept as dicts beside the channels, so reading all of it is one dict copy.

Every step reads the whole state a few times: a node's input, the "values" chunk, a conditional
edge's input. Read channel by channel, a state of 1,000 keys costs 1,000 get() calls per read,
although a step usually changes one key. A StateView keeps one dict per key list the graph reads
(registered up front: each node's, each conditional edge's, the output's); apply_writes, the one
place that changes channels in a step, refreshes only the entries of the channels it changed.
A read returns a new dict: a node may mutate its input, and the channels never see that. The
view also names the channels that may forget (Channel.forgets), the only ones an empty step visits.
Next: pregel/algo.py (apply_writes refreshes the view; prepare_next_tasks reads it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from lgcheckpoint.channels import Channel

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

KeyList = Sequence[str]  # state keys read together, in the order the dict lists them


def read_state(channels: Mapping[str, Channel], keys: KeyList | str) -> Any:
    """Current values of some channels as a dict (empty ones left out), or one channel's value."""
    if isinstance(keys, str):
        return channels[keys].get() if channels[keys].is_available() else None
    return {k: channels[k].get() for k in keys if channels[k].is_available()}


class Kept:
    """One registered key list and the values of its available channels, in key order."""

    def __init__(self, keys: KeyList, channels: Mapping[str, Channel]) -> None:
        self.keys, self.key_set = keys, frozenset(keys)
        # channels whose get() builds a new value each read (a Topic's list): read every time
        self.fresh = [k for k in keys if channels[k].get_builds_value]
        self.values: dict[str, Any] | None = None  # filled at the first read


class StateView:
    """The registered key lists' current values, refreshed channel by channel."""

    def __init__(self, channels: Mapping[str, Channel],
                 key_lists: Iterable[KeyList | str] = ()) -> None:
        self.channels = channels
        # what a step without writes may clear (Channel.forgets): apply_writes visits only these
        self.forgetful = [k for k, chan in channels.items() if chan.forgets]
        # by identity: a Kept holds its list, so no other list takes its id while the view
        # lives; one name (a single-value state, START's input) is read from its channel
        self.kept = {id(keys): Kept(keys, channels) for keys in key_lists
                     if not isinstance(keys, str) and all(k in channels for k in keys)}

    def read(self, keys: KeyList | str) -> Any:
        """The channels' current values as read_state gives them: one copy of a kept dict."""
        kept = self.kept.get(id(keys))
        if kept is None:
            return read_state(self.channels, keys)
        if kept.values is None:
            kept.values = read_state(self.channels, kept.keys)
        fresh = {key: self.channels[key].get() for key in kept.fresh if key in kept.values}
        return {**kept.values, **fresh}

    def refresh(self, chan: str) -> None:
        """The channel changed in this step: update its entry wherever it is kept."""
        channel = self.channels[chan]
        for kept in self.kept.values():
            if kept.values is None or chan not in kept.key_set:
                continue
            if not channel.is_available():
                kept.values.pop(chan, None)
            elif chan in kept.values:
                kept.values[chan] = channel.get()
            else:  # a key that appears is read again in key order (rare: a first value)
                kept.values = read_state(self.channels, kept.keys)


def key_lists(graph: Pregel, output_keys: KeyList | str) -> list:
    """What a step reads whole: each node's input, each conditional edge's, the output (and
    the "checkpoints" chunk's)."""
    nodes = graph.nodes.values()
    return [output_keys, graph.stream_channels, *(node.reads for node in nodes),
            *(branch.reads for node in nodes for branch in node.branches)]
