"""From live channels to a stored checkpoint and back.

empty_checkpoint starts a thread; create_checkpoint makes one at a step boundary from the
channels' values (channel_values reads them all, changed_values only those that moved);
channels_from_checkpoint restores live channels from one; new_channel_versions tells a saver
which channel blobs changed.
Next: pregel/loop.py (the super-step loop that calls these).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

from lgcheckpoint.channels import MISSING, Channel
from lgcheckpoint.checkpoint import base
from lgcheckpoint.checkpoint.base import ChannelVersions, Checkpoint
from lgcheckpoint.checkpoint.id import uuid6
from lgcheckpoint.constants import TASKS
from lgcheckpoint.types import Send

# the ``v`` the runtime writes (LangGraph 1.2's): Send packets are the TASKS channel's value;
# older checkpoints kept them in "pending_sends" (see migrate_pending_sends)
LATEST_VERSION = 4


def empty_checkpoint() -> Checkpoint:
    """The checkpoint a brand-new thread starts from (its id carries step -2): the package's
    empty checkpoint at v=4, where Send packets are the TASKS channel's, not "pending_sends"."""
    checkpoint = base.empty_checkpoint()
    del checkpoint["pending_sends"]
    return Checkpoint(checkpoint, v=LATEST_VERSION)


def create_checkpoint(previous: Checkpoint, values: dict[str, Any], step: int, *,
                      id: str | None = None, updated_channels: set[str] | None = None
                      ) -> Checkpoint:
    """A new checkpoint for `step` (its uuid6 carries the step in clock_seq): the channels'
    ``values``, and a copy of the versions of ``previous``."""
    return Checkpoint(
        v=LATEST_VERSION,
        id=id or str(uuid6(clock_seq=step)),
        ts=datetime.now(timezone.utc).isoformat(),
        channel_values=values,
        channel_versions=dict(previous["channel_versions"]),
        versions_seen=previous["versions_seen"],
        updated_channels=None if updated_channels is None else sorted(updated_channels),
    )


def channel_values(channels: Mapping[str, Channel], versions: ChannelVersions) -> dict[str, Any]:
    """What a checkpoint stores of the live channels: the value of each one ever written
    (an empty channel is left out)."""
    return {key: value for key, chan in channels.items()
            if key in versions and (value := chan.checkpoint()) is not MISSING}


def changed_values(previous: Checkpoint, channels: Mapping[str, Channel],
                   changed: Iterable[str]) -> dict[str, Any]:
    """channel_values for the next checkpoint when ``previous`` holds our own snapshot: only the
    ``changed`` channels (their version moved) are read again -- an unchanged version means an
    unchanged value -- so a step costs the same however many untouched channels the state has."""
    values = dict(previous["channel_values"])
    for key in changed:
        if key in channels and (value := channels[key].checkpoint()) is not MISSING:
            values[key] = value
        else:
            values.pop(key, None)
    return values


def channels_from_checkpoint(specs: Mapping[str, Channel], checkpoint: Checkpoint
                             ) -> dict[str, Channel]:
    """Fresh live channels holding the checkpoint's values."""
    migrate_pending_sends(checkpoint)
    values = checkpoint["channel_values"]
    return {k: spec.from_checkpoint(values.get(k, MISSING)) for k, spec in specs.items()}


def saved_packet(packet: Any, channels: Mapping[str, Channel]) -> Any:
    """A Send as it is stored: its state argument without values of channels never saved
    (UntrackedValue: a lock or a client has no place in a checkpoint)."""
    if not isinstance(getattr(packet, "arg", None), dict):
        return packet
    kept = {k: v for k, v in packet.arg.items() if getattr(channels.get(k), "saved", True)}
    return packet if len(kept) == len(packet.arg) else Send(packet.node, kept,
                                                            timeout=packet.timeout)


def migrate_pending_sends(checkpoint: Checkpoint) -> None:
    """Before v4 a checkpoint kept its Send packets beside the channels ("pending_sends");
    since then they are the value of the TASKS channel: move them there, at the newest version."""
    if checkpoint.get("v", LATEST_VERSION) < 4 and checkpoint.get("pending_sends"):
        checkpoint["channel_values"][TASKS] = checkpoint.pop("pending_sends")
        checkpoint["channel_versions"][TASKS] = max(checkpoint["channel_versions"].values())


def new_channel_versions(previous: ChannelVersions, current: ChannelVersions) -> ChannelVersions:
    """Channels whose version moved since the last stored checkpoint (what a saver must write)."""
    if not previous:
        return dict(current)  # a copy: the caller's versions keep changing while a put waits
    null = null_version(current)
    return {k: v for k, v in current.items() if v > previous.get(k, null)}


def null_version(versions: ChannelVersions) -> Any:
    """The 'never seen' version, of the type the saver uses (0, 0.0 or ''); None if no versions."""
    return type(next(iter(versions.values())))() if versions else None
