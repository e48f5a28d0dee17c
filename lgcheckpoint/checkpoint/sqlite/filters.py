"""list(filter=...) on SQLite: one metadata key and value as a bound SQL test, never SQL text.

``metadata`` is stored as JSON text; a key becomes a JSON path when SQLite can spell it, else a
``json_each`` lookup, and a value compares the way Python (and LangGraph) compares it: True == 1,
a list with a list. Next: checkpoint/sqlite/pages.py (list() a page at a time).
"""

from __future__ import annotations

import json
from typing import Any

_METADATA = "CAST(metadata AS TEXT)"


def metadata_condition(key: str, value: Any) -> tuple[str, list[Any]]:
    """SQL testing one top-level metadata key; the key is a bound value, never SQL text.

    Dots, brackets and ``$`` in a key are plain characters: ``{"a.b": 1}`` matches the top-level
    key "a.b", like InMemorySaver (LangGraph reads it as a path a -> b).
    """
    if not isinstance(key, str):
        raise TypeError(f"metadata filter keys must be strings, got {key!r}")
    if "\x00" in key:  # SQLite's JSON functions cut a key at NUL, so it could match another key
        raise ValueError(f"metadata filter key {key!r} contains a NUL character; remove it")
    # SQLite compares a quoted path label with the key as the JSON text spells it; Python's json
    # spells these keys as they are, others may be escaped (", \, control or non-ASCII characters)
    if key.isascii() and key.isprintable() and '"' not in key and "\\" not in key:
        return _path_test(f'$."{key}"', key, value)
    return _entry_test(key, value)


def _path_test(path: str, key: str, value: Any) -> tuple[str, list[Any]]:
    """One json_extract a row: SQLite parses a row's metadata once for all keys of a filter."""
    if value is None:  # like LangGraph: a missing key counts as None (so does a JSON null)
        return f"json_extract({_METADATA}, ?) IS NULL", [path]
    types, placeholder, bound = _comparison(key, value)
    test = f"json_extract({_METADATA}, ?) = {placeholder}"
    # json_extract gives an object or array as its JSON text, "{..." or "[...": a value that
    # could be such a text also needs the type (tested second: only on rows whose value matched)
    if isinstance(value, (dict, list)) or str(value).startswith(("{", "[")):
        return f"{test} AND json_type({_METADATA}, ?) IN {types}", [path, bound, path]
    return test, [path, bound]


def _entry_test(key: str, value: Any) -> tuple[str, list[Any]]:
    """A json_each table a row, which decodes every key: for keys a path cannot name."""
    entry = f"SELECT 1 FROM json_each({_METADATA}) WHERE key = ?"
    if value is None:
        return f"NOT EXISTS ({entry} AND type != 'null')", [key]
    types, placeholder, bound = _comparison(key, value)
    return f"EXISTS ({entry} AND type IN {types} AND value = {placeholder})", [key, bound]


def _comparison(key: str, value: Any) -> tuple[str, str, Any]:
    """How a filter value compares: (JSON types it can equal, its placeholder, the value bound)."""
    if isinstance(value, int) and not -2**63 <= value < 2**63:
        raise ValueError(f"metadata filter {key!r}: {value} is outside SQLite's 64-bit integer "
                         "range; filter on a smaller number or store it as a string")
    if isinstance(value, (bool, int, float)):  # as in Python (and LangGraph): True == 1, 0 == 0.0
        return "('integer', 'real', 'true', 'false')", "?", value
    if isinstance(value, str):
        return "('text')", "?", value
    if isinstance(value, (dict, list)):
        return "('object', 'array')", "json(?)", json.dumps(value, ensure_ascii=False)
    raise TypeError(f"metadata filter {key!r}: cannot compare with a {type(value).__name__}; "
                    "use None, bool, int, float, str, list or dict")
