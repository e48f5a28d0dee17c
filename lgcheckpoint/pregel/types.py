"""Deprecated home of the public types (before LangGraph 1.0): import them from lgcheckpoint.types.

Importing this module warns once, as LangGraph's ``langgraph.pregel.types`` does, and re-exports
the names that moved. Next: types.py.
"""

import warnings

from lgcheckpoint.types import (  # noqa: F401
    All, CachePolicy, PregelExecutableTask, PregelTask, RetryPolicy, StateSnapshot, StateUpdate,
    StreamMode,
)
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10

__all__ = ["All", "CachePolicy", "PregelExecutableTask", "PregelTask", "RetryPolicy",
           "StateSnapshot", "StateUpdate", "StreamMode"]

warnings.warn(
    "Importing from lgcheckpoint.pregel.types is deprecated. Please use "
    "'from lgcheckpoint.types import ...' instead.", LangGraphDeprecatedSinceV10, stacklevel=2)
