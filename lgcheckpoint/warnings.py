"""Deprecation warnings with the version that deprecated a feature, under LangGraph's names.

A program filtering or catching ``LangGraphDeprecatedSinceV10`` keeps working after the import
swap. ``renamed_option`` runs an option under its old name (``retry=``, ``input=``,
``config_schema=``, ``checkpoint_during=``) as the new one, after warning as LangGraph does.
Next: errors.py.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ("LangGraphDeprecationWarning", "LangGraphDeprecatedSinceV05",
           "LangGraphDeprecatedSinceV10", "LangGraphDeprecatedSinceV11")


class LangGraphDeprecationWarning(DeprecationWarning):
    """A deprecated feature: what, since which version, and when it goes (default: next major)."""

    def __init__(self, message: str, *args: object, since: tuple[int, int],
                 expected_removal: tuple[int, int] | None = None) -> None:
        super().__init__(message, *args)
        self.message = message.rstrip(".")
        self.since = since
        self.expected_removal = expected_removal or (since[0] + 1, 0)

    def __str__(self) -> str:
        (a, b), (c, d) = self.since, self.expected_removal
        return f"{self.message}. Deprecated in LangGraph V{a}.{b} to be removed in V{c}.{d}."


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(0, 5), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 0), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 1), expected_removal=(3, 0))


def renamed_option(options: dict, old: str, new: str, value: Any,
                   category: type[LangGraphDeprecationWarning]) -> Any:
    """Take ``old`` out of ``options``: warn, and use it as ``new`` unless ``new`` was given."""
    if old not in options:
        return value
    warnings.warn(f"`{old}` is deprecated and will be removed. Please use `{new}` instead.",
                  category, stacklevel=3)  # points at the caller of add_node, task, ...
    old_value = options.pop(old)
    return old_value if value is None else value


def warn_deprecated(message: str, category: type[LangGraphDeprecationWarning]) -> None:
    """A deprecated name or method was used (it still works); stacklevel: its caller."""
    warnings.warn(message, category, stacklevel=3)
