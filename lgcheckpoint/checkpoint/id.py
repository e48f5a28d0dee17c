"""Time-ordered checkpoint ids (UUID version 6): sorting the id strings sorts checkpoints by time.

The step number is stored in the 14-bit clock_seq field, as LangGraph does, so an id also
tells which super-step wrote it (-2 marks the empty checkpoint, -1 the input checkpoint).
"""

import random
import threading
import time
from uuid import UUID

_GREGORIAN_OFFSET = 0x01B21DD213814000  # 100-ns ticks from 1582-10-15 to 1970-01-01
_last_ticks = 0
_lock = threading.Lock()


def _next_ticks() -> int:
    """Return a 100-ns timestamp strictly greater than the last one handed out."""
    global _last_ticks
    with _lock:
        ticks = time.time_ns() // 100 + _GREGORIAN_OFFSET
        _last_ticks = ticks if ticks > _last_ticks else _last_ticks + 1
        return _last_ticks


def uuid6(node: int | None = None, clock_seq: int | None = None) -> UUID:
    """Make a UUIDv6: 60 time bits first (so ids sort by time), then clock_seq, then node."""
    ticks = _next_ticks()
    if clock_seq is None:
        clock_seq = random.getrandbits(14)
    if node is None:
        node = random.getrandbits(48)
    value = ((ticks >> 12) & 0xFFFF_FFFF_FFFF) << 80  # time_high + time_mid
    value |= 0x6 << 76  # version 6
    value |= (ticks & 0x0FFF) << 64  # time_low
    value |= 0b10 << 62  # RFC 4122 variant: the top two bits of clock_seq are overwritten
    value |= (clock_seq & 0x3FFF) << 48
    value |= node & 0xFFFF_FFFF_FFFF
    return UUID(int=value)
