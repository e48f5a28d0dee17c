"""Reading the "json" tag: checkpoints LangGraph wrote before it switched to msgpack.

Objects were stored as ``{"lc": 2, "type": "constructor", "id": [*module, name], "args": [...],
"kwargs": {...}, "method": ...}``; LangChain's own objects as ``{"lc": 1, ...}``. We rebuild lc=2
objects through the same ``Allowlist`` as msgpack, call only a few named methods, and never build
lc=1 objects (that needs LangChain). Nothing writes this format any more. Next: jsonplus.py.
"""

from __future__ import annotations

import json
from typing import Any

from lgcheckpoint.checkpoint.serde.allowlist import SAFE_METHODS, Allowlist
from lgcheckpoint.checkpoint.serde.types import Opaque
from lgcheckpoint.checkpoint.errors import InvalidCheckpointError, UnsafeTypeError

# methods old writers named besides SAFE_METHODS: pydantic's unvalidated constructors
PYDANTIC_METHODS = ("model_construct", "construct")


def loads_legacy_json(payload: bytes, allowlist: Allowlist, inspect: bool) -> Any:
    """Decode a "json"-tagged blob, reviving constructor records bottom-up."""

    def revive(record: dict) -> Any:
        if record.get("type") != "constructor" or record.get("lc") not in (1, 2):
            return record
        ident = record.get("id")
        if not (
            isinstance(ident, list) and len(ident) >= 2 and all(isinstance(p, str) for p in ident)
        ):
            raise InvalidCheckpointError(f"malformed json constructor record: {record!r:.200}")
        module, name = ".".join(ident[:-1]), ident[-1]
        module = "langgraph.types" if module == "langgraph.constants" else module  # Send moved
        try:
            if record["lc"] == 1:
                raise UnsafeTypeError(
                    f"{module}.{name} is a LangChain object (lc=1); lgcheckpoint does not import "
                    "LangChain to rebuild it. To view it use JsonPlusSerializer(inspect=True)."
                )
            return construct(record, module, name, allowlist)
        except Exception as exc:
            if inspect:
                return Opaque(module, name, record.get("kwargs", record.get("args")))
            if isinstance(exc, InvalidCheckpointError):
                raise
            raise InvalidCheckpointError(
                f"cannot rebuild {module}.{name} from {record!r:.200}: {exc}"
            ) from None

    try:
        return json.loads(payload, object_hook=revive)
    except InvalidCheckpointError:
        raise
    except (ValueError, RecursionError) as exc:  # includes JSONDecodeError and bad UTF-8
        raise InvalidCheckpointError(f"stored json data is corrupt: {exc}") from None


def construct(record: dict, module: str, name: str, allowlist: Allowlist) -> Any:
    """Call the allowed class (or one of its allowed methods) with the stored arguments."""
    cls = allowlist.resolve(module, name)
    args, kwargs = record.get("args") or [], record.get("kwargs") or {}
    method = record.get("method")
    names = method if isinstance(method, list) else [method]
    last_error: Exception | None = None
    for method_name in names:  # legacy records list fallbacks: [None, "model_construct"]
        try:
            return _callable(cls, module, name, method_name)(*args, **kwargs)
        except UnsafeTypeError:
            raise
        except Exception as exc:
            last_error = exc
    raise InvalidCheckpointError(f"cannot rebuild {module}.{name}: {last_error}")


def _callable(cls: Any, module: str, name: str, method: Any) -> Any:
    if method is None:
        return cls
    if (module, name, method) in SAFE_METHODS:
        return getattr(cls, method)
    is_pydantic = hasattr(cls, "model_fields") or hasattr(cls, "__fields__")
    if is_pydantic and method in PYDANTIC_METHODS:
        return getattr(cls, method)
    raise UnsafeTypeError(
        f"Refused to call {module}.{name}.{method}() from a json checkpoint; only "
        f"{sorted(SAFE_METHODS)} and pydantic {PYDANTIC_METHODS} may be called."
    )
