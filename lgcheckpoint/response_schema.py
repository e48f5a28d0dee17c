"""interrupt(value, response_schema=...): the answer's shape, shown to clients, checked on resume.

A JSON Schema ``dict`` is only shown. A class (pydantic model, TypedDict, dataclass) is shown as
its JSON Schema and validates the answer: interrupt() returns the validated object. An answer
that does not fit raises pydantic's ``ValidationError``, marked so that ``is_invalid_resume``
(also in errors.py) recognises it; no answer is saved for that interrupt, so it can be
answered again, and the other tasks of the step still finish. pydantic is needed only for
classes and is imported only here. Next: pregel/state.py (a snapshot rebuilt from a checkpoint).
"""

from __future__ import annotations

from typing import Any

INVALID_RESUME_MARK = "_lgcheckpoint_invalid_resume"  # set on the error, so any class can carry it


def validator(schema: Any) -> Any:
    """A pydantic TypeAdapter for a class schema; None when the schema only describes (dict)."""
    if schema is None or isinstance(schema, dict):
        return None
    try:
        from pydantic import TypeAdapter
    except ImportError as exc:
        raise ImportError("interrupt(response_schema=<a class>) validates answers with pydantic: "
                          "pip install pydantic, or pass a JSON Schema dict") from exc
    return TypeAdapter(schema)


def shown(schema: Any, adapter: Any) -> dict | None:
    """What the surfaced Interrupt carries: always JSON Schema (or None)."""
    return adapter.json_schema() if adapter is not None else schema


def checked(adapter: Any, answer: Any) -> Any:
    """The answer, validated when the schema can validate; a misfit is an invalid resume."""
    if adapter is None:
        return answer
    from pydantic import ValidationError

    try:
        return adapter.validate_python(answer)
    except ValidationError as exc:
        mark_invalid_resume(exc)
        raise


def mark_invalid_resume(error: BaseException) -> None:
    """Tag an error as "the resume value did not match the interrupt's response_schema"."""
    setattr(error, INVALID_RESUME_MARK, True)


def is_invalid_resume(error: BaseException) -> bool:
    """Was ``error`` raised because an answer did not fit ``interrupt(response_schema=...)``?"""
    return getattr(error, INVALID_RESUME_MARK, False) is True
