"""Which stored type names the serializer may turn back into live objects.

A checkpoint names the classes to rebuild (``("uuid", "UUID")``). Whoever can write the database
chooses those names, so decoding imports and calls only what is allowed here: a built-in safe set,
what the user lists, and what ``collect_allowlist(state_schema)`` finds when a graph is compiled.
The check runs BEFORE any import, since importing an attacker-named module can already run code.
Next: msgpack_ext.py (the extension codes that carry these names).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import sys
import types
import typing
from enum import Enum
from typing import Any, Collection, Iterable, Literal, Self

from lgcheckpoint.checkpoint.serde.event_hooks import emit_serde_event
from lgcheckpoint.checkpoint.errors import InvalidCheckpointError, UnsafeTypeError

TypeName = tuple[str, str]  # (module, class name) as written on the wire

# langchain-core's chat messages, as far as LangGraph's safe list goes (lgcheckpoint.messages):
# pydantic models built from their stored fields; a message class not named here is refused
MESSAGE_TYPES = [
    (f"langchain_core.messages.{module}", name + chunk)
    for module, name in [("base", "BaseMessage"), ("human", "HumanMessage"), ("ai", "AIMessage"),
                         ("system", "SystemMessage"), ("chat", "ChatMessage"),
                         ("tool", "ToolMessage"), ("function", "FunctionMessage")]
    for chunk in ("", "Chunk")
] + [("langchain_core.messages.modifier", "RemoveMessage")]

# stdlib types whose constructors only build a value from data (no I/O, no code)
SAFE_TYPES: frozenset[TypeName] = frozenset(
    [("datetime", n) for n in ("datetime", "date", "time", "timedelta", "timezone")]
    + [("uuid", "UUID"), ("decimal", "Decimal"), ("zoneinfo", "ZoneInfo"), ("re", "compile")]
    + [("builtins", "set"), ("builtins", "frozenset"), ("collections", "deque")]
    + [("ipaddress", f"IPv{v}{k}") for v in (4, 6) for k in ("Address", "Interface", "Network")]
    + [(m, n) for m in ("pathlib", "pathlib._local") for n in ("Path", "PosixPath", "WindowsPath")]
    + MESSAGE_TYPES
)

# (module, name, method) calls allowed for extension code 3; nothing else is ever called by name
SAFE_METHODS: frozenset[tuple[str, str, str]] = frozenset(
    {("datetime", "datetime", "fromisoformat")}
)

# Our runtime types are stored under LangGraph's names, so databases open in either library.
# Value: LangGraph's keyword fields for the ones it stores as dataclasses (with their defaults).
LANGGRAPH_MODULE, OUR_TYPES_MODULE = "langgraph.types", "lgcheckpoint.types"
LANGGRAPH_TYPES: dict[str, dict[str, Any] | None] = {
    "Send": None,
    "Command": None,
    "PregelTask": None,
    "StateSnapshot": None,
    "Interrupt": {"value": None, "id": None, "response_schema": None},
    "Overwrite": {"value": None, "type": "__overwrite__"},
    "TimeoutPolicy": {"run_timeout": None, "idle_timeout": None, "refresh_on": "auto"},
}


def wire_name(cls: type) -> TypeName:
    """The (module, name) a class is stored under; our runtime types borrow LangGraph's."""
    if cls.__module__ == OUR_TYPES_MODULE and cls.__name__ in LANGGRAPH_TYPES:
        return LANGGRAPH_MODULE, cls.__name__
    return cls.__module__, cls.__name__


def refused_message(module: str, name: str) -> str:
    """Say what was refused and the exact argument that would allow it."""
    entry = (module, name)
    return (
        f"Refused to rebuild {module}.{name} from a checkpoint: it is not on the serializer's "
        f"allow-list (nothing was imported or run). If you trust this type, allow it with "
        f"JsonPlusSerializer(allowed_msgpack_modules=[{entry!r}]) or "
        f"saver.with_allowlist([{entry!r}]); to look at stored data without building it, use "
        f"JsonPlusSerializer(inspect=True)."
    )


class ClassGoneError(InvalidCheckpointError):
    """An allowed stored type no longer imports (module or class removed or renamed)."""

    def __init__(self, message: str, cause: BaseException) -> None:
        super().__init__(message)
        self.cause = cause


class Allowlist:
    """Decides whether a stored type name may be imported, and imports it if so."""

    def __init__(self, extra: Iterable[Any] | Literal[True] | None = None,
                 events: bool = False) -> None:
        self.events = events  # emit LangGraph's msgpack serde events (event_hooks.py)
        self.permissive = extra is True  # build anything: LangGraph's old default, UNSAFE
        self.extra: frozenset[TypeName] = frozenset() if extra in (None, True) else normalize(extra)
        self.imported: dict[TypeName, Any] = {}  # allowed names already looked up

    def allows(self, module: str, name: str) -> bool:
        """True if (module, name) may be built; looks only at strings, imports nothing."""
        return self.permissive or self.listed(module, name)

    def listed(self, module: str, name: str) -> bool:
        """True if (module, name) is allowed by name (not only by ``True``)."""
        key = (module, name)
        our_type = module == LANGGRAPH_MODULE and name in LANGGRAPH_TYPES
        return our_type or key in SAFE_TYPES or key in self.extra

    def emit(self, kind: str, module: str, name: str, **extra: str) -> None:
        """Tell event listeners (event_hooks.py) what loading just decided."""
        if self.events:
            emit_serde_event({"kind": kind, "module": module, "name": name, **extra})

    def resolve(self, module: str, name: str) -> Any:
        """Import an allowed class (or function); raise UnsafeTypeError for anything else."""
        if not (isinstance(module, str) and isinstance(name, str)):
            raise InvalidCheckpointError(
                f"stored type name must be two strings, got {module!r}, {name!r}"
            )
        if not self.allows(module, name):
            self.emit("msgpack_blocked", module, name)
            raise UnsafeTypeError(refused_message(module, name))
        if self.permissive and not self.listed(module, name):
            self.emit("msgpack_unregistered_allowed", module, name)
        key = (module, name)
        gone = module not in sys.modules and module != LANGGRAPH_MODULE  # unloaded since cached?
        if key not in self.imported or gone:
            self.imported[key] = self._import(module, name)
        return self.imported[key]

    @staticmethod
    def _import(module: str, name: str) -> Any:
        if module == LANGGRAPH_MODULE and name in LANGGRAPH_TYPES:
            module = OUR_TYPES_MODULE  # stored by LangGraph (or by us) under LangGraph's name
        try:
            target: Any = importlib.import_module(module)
            for part in name.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError) as exc:
            raise ClassGoneError(
                f"cannot find {module}.{name} to rebuild a stored value: {exc}", exc
            ) from None
        return target


def normalize(entries: Iterable[Any]) -> frozenset[TypeName]:
    """Accept classes or (module, name) tuples, as LangGraph does."""
    out = set()
    for entry in entries:
        if isinstance(entry, type):
            out.add((entry.__module__, entry.__name__))
        elif (
            isinstance(entry, (tuple, list))
            and len(entry) >= 2
            and all(isinstance(p, str) for p in entry)
        ):
            out.add((entry[0], entry[1]))
        else:
            raise TypeError(
                f"allow-list entries are classes or ('module', 'Name') tuples, got {entry!r}"
            )
    return frozenset(out)


# --- compile time: which types can a state schema hold? -------------------------------------


def collect_allowlist(schema: Any) -> set[TypeName]:
    """Walk a state schema and return the (module, name) of every class its values may contain."""
    found: set[TypeName] = set()
    seen: set[int] = set()
    _visit(schema, found, seen)
    return found


def _visit(typ: Any, found: set[TypeName], seen: set[int]) -> None:
    if id(typ) in seen or typ is None or typ is typing.Any:
        return
    seen.add(id(typ))
    origin = typing.get_origin(typ)
    # Literal values are plain data; Annotated metadata (reducers, Field) is not stored
    if typ is Literal or origin in (Literal, typing.ClassVar):
        return
    if origin is typing.Annotated:
        return _visit(typing.get_args(typ)[0], found, seen)
    # list[X], dict[K, V], Optional[X], X | Y, Sequence[X], Required[X] ...: look at the arguments
    if origin is not None or isinstance(typ, types.UnionType):
        for arg in typing.get_args(typ):
            _visit(arg, found, seen)
        return
    if hasattr(typ, "__supertype__"):  # typing.NewType
        return _visit(typ.__supertype__, found, seen)
    if not isinstance(typ, type) or typ.__module__ in ("builtins", "typing", "collections.abc"):
        return
    # a TypedDict is stored as a plain dict; every other class is stored by name
    if not is_typeddict(typ):
        found.add((typ.__module__, typ.__name__))
    if _stored_by_name(typ):
        for field_type in _field_types(typ):
            _visit(field_type, found, seen)
        # a field declared as a base model holds subclasses (BaseMessage -> HumanMessage)
        for sub in typ.__subclasses__():
            _visit(sub, found, seen)


def _stored_by_name(typ: type) -> bool:
    """Classes whose fields are stored too: pydantic, dataclass, NamedTuple, TypedDict."""
    if typ.__module__.startswith("pydantic"):  # BaseModel itself would allow every model
        return False
    return (
        hasattr(typ, "model_fields")
        or hasattr(typ, "__fields__")
        or dataclasses.is_dataclass(typ)
        or hasattr(typ, "_fields")
        or is_typeddict(typ)
    ) and not issubclass(typ, Enum)


def is_typeddict(typ: type) -> bool:
    """typing's and typing_extensions' TypedDicts alike (typing.is_typeddict misses the latter)."""
    return issubclass(typ, dict) and hasattr(typ, "__required_keys__")


def _field_types(typ: type) -> Collection[Any]:
    """Declared field types, resolved if possible (forward references may fail: then raw)."""
    if isinstance(getattr(typ, "model_fields", None), dict):  # pydantic v2
        return [f.annotation for f in typ.model_fields.values()]
    if isinstance(getattr(typ, "__fields__", None), dict) and not hasattr(typ, "_fields"):  # v1
        return [f.outer_type_ for f in typ.__fields__.values()]
    try:
        return typing.get_type_hints(typ, include_extras=True).values()
    except Exception:  # an unresolvable forward reference: resolve the fields one by one
        resolved = [_resolve(typ, k, t) for k, t in inspect.get_annotations(typ).items()]
        return [t for t in resolved if t is not None]


def _resolve(owner: type, field: str, annotation: Any) -> Any:
    """One field's type, or None if it names something that does not exist."""
    probe = type(
        "probe", (), {"__annotations__": {field: annotation}, "__module__": owner.__module__}
    )
    try:
        return typing.get_type_hints(probe, localns=dict(vars(owner)), include_extras=True)[field]
    except Exception:
        return None


class WithAllowlist:
    """Mixed into BaseCheckpointSaver: a clone of the saver whose serializer may also build the
    types a graph's state schemas name (compile() asks for it)."""

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> Self:
        """A shallow clone whose serializer may also build the given (module, name) types."""
        allow = getattr(self.serde, "with_msgpack_allowlist", None)
        if allow is None:
            return self
        serde = allow(extra_allowlist)
        if serde is self.serde:
            return self
        clone = copy.copy(self)
        clone.serde = serde
        return clone
