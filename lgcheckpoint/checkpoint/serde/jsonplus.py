"""JsonPlusSerializer: values to ``(type tag, bytes)`` and back, byte-compatible with LangGraph.

Tags: "null" (None), "bytes", "bytearray" (stored as is), "msgpack" (everything else, see
msgpack_ext.py), "pickle" (only with ``pickle_fallback=True``), and "json" (read-only, legacy).

Safe by default, unlike LangGraph 1.2 whose default builds any type a checkpoint names: loading
builds only stdlib value types, our runtime types and what you allow (``allowed_msgpack_modules``,
``with_msgpack_allowlist``, which the runtime fills from the state schema at compile time).
Anything else raises ``UnsafeTypeError`` before any import, or is an inert ``Opaque`` with
``inspect=True``.
Next: allowlist.py (what may be built), msgpack_ext.py (how).
"""

from __future__ import annotations

import copy
import pickle
from typing import Any, Iterable, Literal

from lgcheckpoint.checkpoint.serde.allowlist import (
    Allowlist,
    TypeName,
    collect_allowlist,
    normalize,
)
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol, Typed
from lgcheckpoint.checkpoint.serde.legacy_json import loads_legacy_json
from lgcheckpoint.checkpoint.serde.msgpack_ext import ExtDecoder, pack
from lgcheckpoint.checkpoint.serde.types import Opaque
from lgcheckpoint.checkpoint.errors import InvalidCheckpointError, UnsafeTypeError

__all__ = ["JsonPlusSerializer", "Opaque", "collect_allowlist", "TAGS"]

TAGS = ("null", "bytes", "bytearray", "msgpack", "json", "pickle")


class JsonPlusSerializer(SerializerProtocol):
    """msgpack with extension types; rebuilds only allow-listed types."""

    def __init__(
        self,
        *,
        pickle_fallback: bool = False,
        allowed_msgpack_modules: Iterable[TypeName | type] | Literal[True] | None = None,
        allowed_json_modules: Iterable[tuple[str, ...] | type] | Literal[True] | None = None,
        inspect: bool = False,
    ) -> None:
        """`allowed_*_modules=True` builds ANY named type, like old LangGraph: UNSAFE."""
        self.pickle_fallback = pickle_fallback  # pickle what msgpack cannot encode; read "pickle"
        self.inspect = inspect  # for viewers: refused types come back as Opaque instead of raising
        self.allowed_json_modules = allowed_json_modules
        self._allow(_as_set(allowed_msgpack_modules))

    def _allow(self, msgpack_names: frozenset[TypeName] | Literal[True]) -> None:
        """Build the allow-lists and the decoder for these msgpack type names."""
        self.allowed_msgpack_modules = msgpack_names
        self._msgpack_allowlist = Allowlist(msgpack_names, events=True)
        self._msgpack_decoder = ExtDecoder(self._msgpack_allowlist, self.inspect)  # stateless
        self._unpack = self._msgpack_decoder.unpack  # bound once: loads_typed runs per value
        self._json_allowlist = Allowlist(_json_names(self.allowed_json_modules, msgpack_names))

    def with_msgpack_allowlist(self, extra: Iterable[TypeName | type]) -> JsonPlusSerializer:
        """A new serializer that may also build `extra`; self if nothing new or all allowed."""
        if self.allowed_msgpack_modules is True:
            return self
        merged = self.allowed_msgpack_modules | normalize(extra)
        if merged == self.allowed_msgpack_modules:
            return self
        # a copy, not type(self)(...): a subclass's __init__ may take other arguments, or none
        clone = copy.copy(self)
        clone._allow(merged)
        return clone

    def dumps_typed(self, obj: Any) -> Typed:
        """Tag and encode a value; bytes stay bytes, the rest goes through msgpack."""
        if obj is None:
            return "null", b""
        if isinstance(obj, (bytes, bytearray)):  # one check on the common path, not two
            return ("bytes" if isinstance(obj, bytes) else "bytearray"), obj
        try:
            return "msgpack", pack(obj)
        except TypeError as exc:  # ormsgpack's encode error (also ints beyond 64 bits)
            if self.pickle_fallback:
                return "pickle", pickle.dumps(obj)
            raise TypeError(
                f"{exc}. Store dataclasses, pydantic models, NamedTuples, Enums or stdlib values, "
                "or pass JsonPlusSerializer(pickle_fallback=True) (pickle runs code when read)."
            ) from None

    def loads_typed(self, data: Typed) -> Any:
        """Decode a (tag, bytes) pair; any failure is an InvalidCheckpointError or subclass."""
        tag, payload = data
        if tag == "msgpack" and type(payload) is bytes:  # nearly every value: no checks, no copy
            return self._unpack(payload)
        if tag == "null":
            return None
        if not isinstance(payload, (bytes, bytearray, memoryview)):
            raise InvalidCheckpointError(
                f"stored payload must be bytes, got {type(payload).__name__}"
            )
        if tag == "bytes":
            return bytes(payload)
        if tag == "bytearray":
            return bytearray(payload)
        if tag == "msgpack":
            return self._msgpack_decoder.unpack(bytes(payload))
        if tag == "json":
            return loads_legacy_json(bytes(payload), self._json_allowlist, self.inspect)
        if tag == "pickle":
            return self._loads_pickle(bytes(payload))
        raise InvalidCheckpointError(f"unknown serialization type tag {tag!r}; known tags: {TAGS}")

    def _loads_pickle(self, payload: bytes) -> Any:
        """Unpickling runs code chosen by whoever wrote the blob, so it needs explicit consent."""
        if not self.pickle_fallback:
            if self.inspect:
                return Opaque("pickle", "blob", payload)
            raise UnsafeTypeError(
                "Refused to unpickle a stored value (unpickling can run arbitrary code). "
                "If you trust this database, use JsonPlusSerializer(pickle_fallback=True)."
            )
        try:
            return pickle.loads(payload)
        except Exception as exc:
            raise InvalidCheckpointError(f"stored pickle data is corrupt: {exc}") from None


def _as_set(entries: Any) -> frozenset[TypeName] | Literal[True]:
    return True if entries is True else normalize(entries or ())


def _json_names(json_entries: Any, msgpack_names: Any) -> set[TypeName] | Literal[True]:
    """json ids are (*module parts, name); names allowed for msgpack count for json too."""
    if json_entries is True:
        return True
    names = set() if msgpack_names is True else set(msgpack_names)
    for e in json_entries or ():
        names.add((e.__module__, e.__name__) if isinstance(e, type) else (".".join(e[:-1]), e[-1]))
    return names
