"""Serializer events: tell your code each time loading refuses a type or builds an unlisted one.

``register_serde_event_listener(fn)`` returns a function that unregisters ``fn``. Events are dicts
with LangGraph's keys and kinds, so a listener written for LangGraph works here:
``{"kind": "msgpack_blocked" | "msgpack_unregistered_allowed" | "msgpack_method_blocked",
"module": ..., "name": ..., ["method": ...]}``. A listener that raises is logged and skipped.
Next: allowlist.py (which emits them).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)
SerdeEvent = dict[str, Any]
SerdeEventListener = Callable[[SerdeEvent], None]

_listeners: list[SerdeEventListener] = []
_lock = threading.Lock()  # listeners may be added while another thread loads a checkpoint


def register_serde_event_listener(listener: SerdeEventListener) -> Callable[[], None]:
    """Call ``listener(event)`` on every serializer event; returns the function that stops it."""
    with _lock:
        _listeners.append(listener)

    def unregister() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return unregister


def emit_serde_event(event: SerdeEvent) -> None:
    """Hand ``event`` to every listener; one failing listener does not stop the others."""
    with _lock:
        listeners = tuple(_listeners)
    for listener in listeners:
        try:
            listener(event)
        except Exception:  # a listener's bug must not break loading
            log.warning("serde event listener %r failed", listener, exc_info=True)
