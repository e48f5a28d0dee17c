"""Every channel under one name, as LangGraph's ``langgraph.channels``: the core kinds
(base.py), the rarer ones (more.py) and DeltaChannel (delta.py). Next: channels/base.py.
"""

from lgcheckpoint.channels.base import (
    MISSING, BinaryOperatorAggregate, Channel, EphemeralValue, LastValue, NamedBarrierValue,
    empty_value_of, overwrite_value,
)
from lgcheckpoint.channels.delta import DeltaChannel
from lgcheckpoint.channels.more import (
    AfterFinish, LastValueAfterFinish, NamedBarrierValueAfterFinish, Topic, UntrackedValue,
)

__all__ = [
    "MISSING", "AfterFinish", "BinaryOperatorAggregate", "Channel", "DeltaChannel",
    "EphemeralValue", "LastValue", "LastValueAfterFinish", "NamedBarrierValue",
    "NamedBarrierValueAfterFinish", "Topic", "UntrackedValue", "empty_value_of",
    "overwrite_value",
]
