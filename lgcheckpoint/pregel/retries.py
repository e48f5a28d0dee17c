"""Retries: how long a failed node waits before its next attempt, and which errors its
RetryPolicy retries (the first policy that matches decides). Next: errors.py.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from lgcheckpoint.errors import GraphBubbleUp

if TYPE_CHECKING:
    from lgcheckpoint.pregel.algo import Task


def retry_delay(task: Task, exc: Exception, attempts: int) -> float:
    """Seconds to wait before the next attempt; re-raises if no policy retries this error."""
    if isinstance(exc, GraphBubbleUp):  # control flow, not a failure
        raise exc
    # the first policy that retries this kind of error decides, as in LangGraph
    policy = next((p for p in task.node.retry_policy if retries_on(p.retry_on, exc)), None)
    if policy is None or attempts >= policy.max_attempts:
        raise exc
    delay = min(policy.max_interval,
                policy.initial_interval * policy.backoff_factor ** (attempts - 1))
    return delay + random.uniform(0, 1) if policy.jitter else delay


def retries_on(retry_on: Any, exc: Exception) -> bool:
    """RetryPolicy.retry_on is a predicate, an exception class, or a list of classes."""
    if callable(retry_on) and not isinstance(retry_on, type):
        return retry_on(exc)
    classes = tuple(retry_on) if isinstance(retry_on, (list, tuple)) else retry_on
    return isinstance(exc, classes)
