"""Deprecation warnings with the version that deprecated a feature, under LangGraph's names.

A program filtering or catching ``LangGraphDeprecatedSinceV10`` keeps working after the import
swap. Next: errors.py.
"""

from __future__ import annotations

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
