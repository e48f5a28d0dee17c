"""What the studio, its widget and the approval panel share about acting on a thread: the
``Command`` an answer is sent in, how a typed answer is read, and ``Refused``. Kept apart so the
widget needs nothing from ``studio.py`` (which builds it). Next: ``studio.py``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any


def command_factory_for(graph: Any) -> Callable[..., Any]:
    """``Command`` from the package that built ``graph`` (langgraph.types, lgcheckpoint.types)."""
    root = type(graph).__module__.split(".")[0]
    try:
        return importlib.import_module(f"{root}.types").Command
    except (ImportError, AttributeError) as error:
        raise TypeError(f"cannot find {root}.types.Command for {type(graph).__name__}; "
                        "pass command_factory=YourCommand") from error


def parse_answer(text: str) -> Any:
    """An edited answer: JSON when it parses (numbers, dicts, true/false), else the plain text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class Refused(ValueError):
    """An action that no longer applies to the thread as it is now; nothing was written."""
