"""How Python objects that msgpack does not know travel as msgpack *extension types*.

Each object becomes ``Ext(code, packb((module, name, data, ...)))``: the code says how to
rebuild it, (module, name) says what to rebuild. The codes, payload shapes and the order in which
encoders are tried are LangGraph's, so both libraries write identical bytes. Decoding asks an
``Allowlist`` before it imports or calls anything. End of the side trip from checkpoint/base.py.
"""

from __future__ import annotations

import copy
import dataclasses
import decimal
import inspect
import logging
import pathlib
import re
import sys
from collections import deque
from datetime import date, datetime, time, timedelta, timezone
from enum import Enum
from ipaddress import (
    IPv4Address,
    IPv4Interface,
    IPv4Network,
    IPv6Address,
    IPv6Interface,
    IPv6Network,
)
from typing import Any, Callable
from uuid import UUID
from zoneinfo import ZoneInfo

import ormsgpack

from lgcheckpoint.checkpoint.serde.allowlist import (
    LANGGRAPH_TYPES,
    ClassGoneError,
    SAFE_METHODS,
    Allowlist,
    wire_name,
)
from lgcheckpoint.checkpoint.serde.types import DeltaSnapshot, Opaque
from lgcheckpoint.checkpoint.errors import InvalidCheckpointError, UnsafeTypeError

log = logging.getLogger(__name__)

EXT_CONSTRUCTOR_SINGLE_ARG = 0
EXT_CONSTRUCTOR_POS_ARGS = 1
EXT_CONSTRUCTOR_KW_ARGS = 2
EXT_METHOD_SINGLE_ARG = 3
EXT_PYDANTIC_V1 = 4
EXT_PYDANTIC_V2 = 5
EXT_NUMPY_ARRAY = 6
EXT_DELTA_SNAPSHOT = 7

EXT_CODES: dict[int, str] = {
    EXT_CONSTRUCTOR_SINGLE_ARG: "(module, name, arg)            -> cls(arg)",
    EXT_CONSTRUCTOR_POS_ARGS: "(module, name, args)           -> cls(*args)",
    EXT_CONSTRUCTOR_KW_ARGS: "(module, name, kwargs)         -> cls(**kwargs)",
    EXT_METHOD_SINGLE_ARG: "(module, name, arg, method)    -> cls.method(arg)",
    EXT_PYDANTIC_V1: "(module, name, fields)         -> pydantic v1 model",
    EXT_PYDANTIC_V2: "(module, name, fields, method) -> pydantic v2 model",
    EXT_NUMPY_ARRAY: "(dtype, shape, order, buffer)  -> numpy.ndarray",
    EXT_DELTA_SNAPSHOT: "value                          -> DeltaSnapshot(value)",
}

# LangGraph's options: non-str dict keys allowed; dataclass/datetime/enum/uuid go to our encoders
PACK_OPTIONS = (
    ormsgpack.OPT_NON_STR_KEYS
    | ormsgpack.OPT_PASSTHROUGH_DATACLASS
    | ormsgpack.OPT_PASSTHROUGH_DATETIME
    | ormsgpack.OPT_PASSTHROUGH_ENUM
    | ormsgpack.OPT_PASSTHROUGH_UUID
    | ormsgpack.OPT_REPLACE_SURROGATES
)


UNPACK_OPTIONS = ormsgpack.OPT_NON_STR_KEYS


def pack(value: Any) -> bytes:
    """msgpack bytes of any value, with extension types for what msgpack does not know."""
    return ormsgpack.packb(value, default=encode_ext, option=PACK_OPTIONS)


# --- encoding: the first matching rule wins; the order is LangGraph's ------------------------


def named(obj: Any, *rest: Any) -> tuple:
    """The payload (module, name, ...) for an object of a named class."""
    return (*wire_name(type(obj)), *rest)


def has(method: str) -> Callable[[Any], bool]:
    """Duck-typing test used by LangGraph: the object has a callable `method`."""
    return lambda obj: callable(getattr(obj, method, None))


def looks_like_send(obj: Any) -> bool:
    """LangGraph's SendProtocol: a hashable object with `node` and `arg`."""
    return hasattr(obj, "node") and hasattr(obj, "arg") and type(obj).__hash__ is not None


def is_langgraph_record(obj: Any) -> bool:
    """One of our runtime types that LangGraph stores as a dataclass (e.g. Interrupt)."""
    return wire_name(type(obj)) == ("langgraph.types", type(obj).__name__) and bool(
        LANGGRAPH_TYPES.get(type(obj).__name__)
    )


def encode_send(obj: Any) -> tuple[int, tuple]:
    timeout = getattr(obj, "timeout", None)
    args = (obj.node, obj.arg) if timeout is None else (obj.node, obj.arg, timeout)
    return EXT_CONSTRUCTOR_POS_ARGS, named(obj, args)


def encode_langgraph_record(obj: Any) -> tuple[int, tuple]:
    fields = LANGGRAPH_TYPES[type(obj).__name__] or {}
    return EXT_CONSTRUCTOR_KW_ARGS, named(obj, {f: getattr(obj, f, d) for f, d in fields.items()})


def encode_dataclass(obj: Any) -> tuple[int, tuple]:
    fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}  # shallow, no deepcopy
    return EXT_CONSTRUCTOR_KW_ARGS, named(obj, fields)


def encode_pydantic_v2(obj: Any) -> tuple[int, tuple]:
    return EXT_PYDANTIC_V2, named(obj, obj.model_dump(), "model_validate_json")


def encode_secret(obj: Any) -> tuple[int, tuple]:
    return EXT_CONSTRUCTOR_SINGLE_ARG, named(obj, obj.get_secret_value())


def encode_timedelta(obj: timedelta) -> tuple[int, tuple]:
    return EXT_CONSTRUCTOR_POS_ARGS, named(obj, (obj.days, obj.seconds, obj.microseconds))


def encode_time(obj: time) -> tuple[int, tuple]:
    parts = ("hour", "minute", "second", "microsecond", "tzinfo", "fold")
    return EXT_CONSTRUCTOR_KW_ARGS, named(obj, {p: getattr(obj, p) for p in parts})


def is_numpy_array(obj: Any) -> bool:
    np = sys.modules.get("numpy")  # only if the program already uses numpy
    return np is not None and isinstance(obj, np.ndarray)


def encode_numpy(obj: Any) -> tuple[int, tuple]:
    order = "F" if obj.flags.f_contiguous and not obj.flags.c_contiguous else "C"
    buffer = memoryview(obj) if obj.flags.c_contiguous else obj.tobytes(order="A")
    return EXT_NUMPY_ARRAY, (obj.dtype.str, obj.shape, order, buffer)


def encode_opaque(obj: Opaque) -> tuple[int, tuple]:
    """Write an uninspected value back exactly as it was read."""
    default = EXT_CONSTRUCTOR_KW_ARGS if isinstance(obj.data, dict) else EXT_CONSTRUCTOR_SINGLE_ARG
    code = default if obj.ext_code is None else obj.ext_code
    extra = {EXT_METHOD_SINGLE_ARG: ("fromisoformat",), EXT_PYDANTIC_V2: ("model_validate_json",)}
    return code, (obj.module, obj.name, obj.data, *extra.get(code, ()))


ENCODERS: list[tuple[Any, Callable[[Any], tuple[int, Any]]]] = [
    # (type or predicate, obj -> (ext code, payload))
    (Opaque, encode_opaque),
    (DeltaSnapshot, lambda o: (EXT_DELTA_SNAPSHOT, o.value)),
    (has("model_dump"), encode_pydantic_v2),
    (has("get_secret_value"), encode_secret),  # pydantic's SecretStr / SecretBytes
    (has("dict"), lambda o: (EXT_PYDANTIC_V1, named(o, o.dict()))),
    (has("_asdict"), lambda o: (EXT_CONSTRUCTOR_KW_ARGS, named(o, o._asdict()))),  # NamedTuple
    (pathlib.Path, lambda o: (EXT_CONSTRUCTOR_POS_ARGS, named(o, o.parts))),
    (re.Pattern, lambda o: (EXT_CONSTRUCTOR_POS_ARGS, ("re", "compile", (o.pattern, o.flags)))),
    (UUID, lambda o: (EXT_CONSTRUCTOR_SINGLE_ARG, named(o, o.hex))),
    (decimal.Decimal, lambda o: (EXT_CONSTRUCTOR_SINGLE_ARG, named(o, str(o)))),
    ((set, frozenset, deque), lambda o: (EXT_CONSTRUCTOR_SINGLE_ARG, named(o, tuple(o)))),
    (
        (IPv4Address, IPv4Interface, IPv4Network, IPv6Address, IPv6Interface, IPv6Network),
        lambda o: (EXT_CONSTRUCTOR_SINGLE_ARG, named(o, str(o))),
    ),
    (datetime, lambda o: (EXT_METHOD_SINGLE_ARG, named(o, o.isoformat(), "fromisoformat"))),
    (timedelta, encode_timedelta),
    (date, lambda o: (EXT_CONSTRUCTOR_POS_ARGS, named(o, (o.year, o.month, o.day)))),
    (time, encode_time),
    (timezone, lambda o: (EXT_CONSTRUCTOR_POS_ARGS, named(o, o.__getinitargs__()))),
    (ZoneInfo, lambda o: (EXT_CONSTRUCTOR_SINGLE_ARG, named(o, o.key))),
    (Enum, lambda o: (EXT_CONSTRUCTOR_SINGLE_ARG, named(o, o.value))),
    (looks_like_send, encode_send),
    (is_langgraph_record, encode_langgraph_record),
    (dataclasses.is_dataclass, encode_dataclass),
    (is_numpy_array, encode_numpy),
]


def encode_ext(obj: Any) -> Any:
    """ormsgpack's `default` hook: turn an unknown object into an extension type."""
    for test, encode in ENCODERS:
        if isinstance(obj, test) if isinstance(test, (type, tuple)) else test(obj):
            code, payload = encode(obj)
            if code == EXT_NUMPY_ARRAY and isinstance(payload[3], memoryview):
                with payload[3]:  # release the view of the array once packed
                    return ormsgpack.Ext(code, pack(payload))
            return ormsgpack.Ext(code, pack(payload))
    if isinstance(obj, BaseException):
        return repr(obj)  # errors are stored as text, as LangGraph does
    raise TypeError(f"Object of type {type(obj).__name__} is not serializable")


# --- decoding: look up the builder for the code, ask the allow-list, then build -------------


def build_single(cls: Any, data: Any) -> Any:
    return cls(data)


def build_positional(cls: Any, args: Any) -> Any:
    return cls(*args)


def build_keywords(cls: Any, kwargs: Any) -> Any:
    return cls(**kwargs)


def build_pydantic_v1(cls: Any, fields: Any) -> Any:
    try:
        return cls(**fields)
    except Exception:  # the model changed since it was stored: keep the data unvalidated
        return cls.construct(**fields)


def build_pydantic_v2(cls: Any, fields: Any) -> Any:
    try:
        return cls(**fields)
    except Exception:  # the model changed since it was stored: keep the data unvalidated
        return cls.model_construct(**fields)


BUILDERS: dict[int, Callable[[Any, Any], Any]] = {
    EXT_CONSTRUCTOR_SINGLE_ARG: build_single,
    EXT_CONSTRUCTOR_POS_ARGS: build_positional,
    EXT_CONSTRUCTOR_KW_ARGS: build_keywords,
    EXT_PYDANTIC_V1: build_pydantic_v1,
    EXT_PYDANTIC_V2: build_pydantic_v2,
}


class ExtDecoder:
    """Unpacks msgpack, building extension types through the allow-list. Holds no per-call state,
    so one decoder per serializer serves every call and thread."""

    def __init__(self, allowlist: Allowlist, inspect: bool) -> None:
        self.allowlist, self.inspect = allowlist, inspect
        self._ext_hook = self.decode  # bound once, not on every unpack

    def unpack(self, payload: bytes) -> Any:
        """Decode msgpack bytes; any failure becomes an InvalidCheckpointError (or subclass)."""
        try:
            return ormsgpack.unpackb(payload, ext_hook=self._ext_hook, option=UNPACK_OPTIONS)
        except Exception:  # noqa: BLE001 - any failure is re-decoded below to find its cause
            # ormsgpack replaces the hook's error with a bare "ext_hook failed": only on failure,
            # decode again with a decoder that records the error, to raise the real one (keeping
            # no error state here makes the common, successful call cheap)
            return ErrorFindingDecoder(self.allowlist, self.inspect).unpack(payload)

    def decode(self, code: int, payload: bytes) -> Any:
        if code == EXT_DELTA_SNAPSHOT:
            return DeltaSnapshot(self.unpack(payload))
        if code == EXT_NUMPY_ARRAY:
            return self.decode_numpy(self.unpack(payload))
        stored = self.unpack(payload)
        known = code in BUILDERS or code == EXT_METHOD_SINGLE_ARG
        if not (known and isinstance(stored, list) and len(stored) >= 3):
            raise InvalidCheckpointError(f"malformed ext payload (code {code}): {stored!r:.200}")
        module, name, data = stored[0], stored[1], stored[2]
        try:
            if code == EXT_METHOD_SINGLE_ARG:
                return self.call_method(module, name, data, stored[3] if len(stored) > 3 else None)
            return self.build(code, module, name, data)
        except ClassGoneError as exc:  # safe: nothing was imported; the data is plain msgpack
            if self.inspect:  # a viewer keeps the type's name beside its fields (a message's)
                return Opaque(str(module), str(name), data, code)
            log.warning("could not reconstruct %s.%s from checkpoint (%s); returning its stored "
                        "fields", module, name, type(exc.cause).__name__)
            return data
        except Exception as exc:
            if self.inspect:  # a viewer gets an inert record of whatever could not be built
                return Opaque(str(module), str(name), data, code)
            if isinstance(exc, InvalidCheckpointError):  # includes UnsafeTypeError: refused
                raise
            # an allowed type refused its stored arguments (tampered or from an older version)
            raise InvalidCheckpointError(
                f"cannot rebuild {module}.{name} from {data!r:.200}: {exc}"
            ) from None

    def build(self, code: int, module: str, name: str, data: Any) -> Any:
        cls = self.allowlist.resolve(module, name)
        if module == "langgraph.types":
            return build_langgraph_type(cls, name, data)
        return BUILDERS[code](cls, data)

    def call_method(self, module: str, name: str, arg: Any, method: Any) -> Any:
        if (module, name, method) not in SAFE_METHODS:
            self.allowlist.emit("msgpack_method_blocked", module, name, method=str(method))
            raise UnsafeTypeError(
                f"Refused to call {module}.{name}.{method}() from a checkpoint; "
                f"only {sorted(SAFE_METHODS)} may be called."
            )
        return getattr(self.allowlist.resolve(module, name), method)(arg)

    def decode_numpy(self, stored: Any) -> Any:
        try:
            import numpy as np
        except ImportError:
            if self.inspect:
                return Opaque("numpy", "ndarray", stored, EXT_NUMPY_ARRAY)
            raise InvalidCheckpointError(
                "a stored value is a numpy array: pip install numpy to read it"
            ) from None
        dtype, shape, order, buffer = stored
        return np.frombuffer(buffer, dtype=np.dtype(dtype)).reshape(shape, order=order)


class ErrorFindingDecoder(ExtDecoder):
    """One unpacking that remembers the first error the ext hook met (ormsgpack hides it)."""

    def __init__(self, allowlist: Allowlist, inspect: bool) -> None:
        quiet = copy.copy(allowlist)  # a second decoding: its events were emitted the first time
        quiet.events = False
        super().__init__(quiet, inspect)
        self.error: Exception | None = None

    def unpack(self, payload: bytes) -> Any:
        try:
            return ormsgpack.unpackb(payload, ext_hook=self.hook, option=ormsgpack.OPT_NON_STR_KEYS)
        except Exception as exc:
            if self.error is not None:
                raise self.error from None
            raise InvalidCheckpointError(f"stored msgpack data is corrupt: {exc}") from None

    def hook(self, code: int, payload: bytes) -> Any:
        try:
            return self.decode(code, payload)
        except Exception as exc:  # remember the first (innermost) error; ormsgpack drops it
            if self.error is None and isinstance(exc, InvalidCheckpointError):
                self.error = exc
            elif self.error is None:
                reason = f"{type(exc).__name__}: {exc}"
                self.error = InvalidCheckpointError(f"cannot rebuild (ext {code}): {reason}")
            raise


def build_langgraph_type(cls: Any, name: str, data: Any) -> Any:
    """Build our runtime type from LangGraph's stored shape, dropping fields we do not implement."""
    if name == "Send":
        return cls(data[0], data[1], timeout=data[2] if len(data) > 2 else None)
    if isinstance(data, dict):
        accepted = inspect.signature(cls).parameters
        return cls(**{k: v for k, v in data.items() if k in accepted})
    return cls(*data)
