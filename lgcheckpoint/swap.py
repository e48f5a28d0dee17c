"""Run a LangGraph program unchanged: every ``langgraph.*`` import is served by lgcheckpoint.

``lgcheckpoint run prog.py`` (or ``%load_ext lgcheckpoint`` in a notebook) calls ``install()``,
which puts ``SwapFinder`` first on ``sys.meta_path``, so it wins even when LangGraph itself is
installed. An import of ``langgraph.X`` then gets a stand-in module whose names come from the
lgcheckpoint module that ``MODULES`` names for it (``MOVED`` overrides one name at a time). A
LangGraph name we do not have is refused with an ``ImportError`` that names it and says why:
out of scope (``OUT_OF_SCOPE``), needs the ``messages`` extra, not implemented yet, or private to
LangGraph. The package keeps its own, flatter layout; this table is the only place that knows
LangGraph's. Next: cli.py (``run``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

NOT_YET = "not implemented yet"  # a module LangGraph has and lgcheckpoint does not (yet)

# LangGraph 1.2's public module -> the lgcheckpoint module that serves its names, or why it is
# refused: a key of OUT_OF_SCOPE (its children are refused with it), or NOT_YET
MODULES: dict[str, str] = {
    "langgraph": "lgcheckpoint",
    "langgraph.cache": "lgcheckpoint.cache",
    "langgraph.cache.base": "lgcheckpoint.cache.base",
    "langgraph.cache.memory": "lgcheckpoint.cache.memory",
    "langgraph.cache.redis": "Redis",
    "langgraph.cache.sqlite": "lgcheckpoint.cache.sqlite",
    "langgraph.callbacks": "lgcheckpoint.callbacks",  # needs the messages extra
    "langgraph.channels": "lgcheckpoint.channels",  # every channel under one name
    "langgraph.channels.any_value": "lgcheckpoint.channels",
    "langgraph.channels.base": "lgcheckpoint.channels",
    "langgraph.channels.binop": "lgcheckpoint.channels",
    "langgraph.channels.delta": "lgcheckpoint.channels",
    "langgraph.channels.ephemeral_value": "lgcheckpoint.channels",
    "langgraph.channels.last_value": "lgcheckpoint.channels",
    "langgraph.channels.named_barrier_value": "lgcheckpoint.channels",
    "langgraph.channels.topic": "lgcheckpoint.channels",
    "langgraph.channels.untracked_value": "lgcheckpoint.channels",
    "langgraph.checkpoint": "lgcheckpoint.checkpoint",
    "langgraph.checkpoint.base": "lgcheckpoint.checkpoint.base",
    "langgraph.checkpoint.base.id": "lgcheckpoint.checkpoint.id",
    "langgraph.checkpoint.memory": "lgcheckpoint.checkpoint.memory",
    "langgraph.checkpoint.postgres": "lgcheckpoint.checkpoint.postgres",
    "langgraph.checkpoint.postgres.aio": "lgcheckpoint.checkpoint.postgres.aio",
    "langgraph.checkpoint.postgres.base": "lgcheckpoint.checkpoint.postgres.sql",
    "langgraph.checkpoint.postgres.shallow": "lgcheckpoint.checkpoint.postgres",  # refuses them
    "langgraph.checkpoint.serde": "lgcheckpoint.checkpoint.serde",
    "langgraph.checkpoint.serde.base": "lgcheckpoint.checkpoint.serde.base",
    "langgraph.checkpoint.serde.encrypted": "lgcheckpoint.checkpoint.serde.encrypted",
    "langgraph.checkpoint.serde.event_hooks": "lgcheckpoint.checkpoint.serde.event_hooks",
    "langgraph.checkpoint.serde.jsonplus": "lgcheckpoint.checkpoint.serde.jsonplus",
    "langgraph.checkpoint.serde.types": "lgcheckpoint.checkpoint.serde.types",
    "langgraph.checkpoint.sqlite": "lgcheckpoint.checkpoint.sqlite",
    "langgraph.checkpoint.sqlite.aio": "lgcheckpoint.checkpoint.sqlite.aio",
    "langgraph.checkpoint.sqlite.utils": "lgcheckpoint.checkpoint.sqlite.sql",
    "langgraph.config": "lgcheckpoint.config",
    "langgraph.constants": "lgcheckpoint.constants",
    "langgraph.errors": "lgcheckpoint.errors",
    "langgraph.func": "lgcheckpoint.func",
    "langgraph.graph": "lgcheckpoint.graph",
    "langgraph.graph.message": "lgcheckpoint.messages",  # needs the messages extra
    "langgraph.graph.state": "lgcheckpoint.graph",
    "langgraph.graph.ui": "Platform",
    "langgraph.managed": "lgcheckpoint.managed",
    "langgraph.managed.base": "lgcheckpoint.managed",
    "langgraph.managed.is_last_step": "lgcheckpoint.managed",
    "langgraph.prebuilt": "lgcheckpoint.prebuilt",  # needs the messages extra
    "langgraph.prebuilt.chat_agent_executor": "lgcheckpoint.prebuilt.chat_agent_executor",
    "langgraph.prebuilt.interrupt": "lgcheckpoint.prebuilt.interrupt",
    "langgraph.prebuilt.tool_node": "lgcheckpoint.prebuilt.tool_node",
    "langgraph.prebuilt.tool_validator": "lgcheckpoint.prebuilt.tool_validator",
    "langgraph.pregel": "lgcheckpoint.pregel",
    "langgraph.pregel.debug": "lgcheckpoint.pregel.debug",
    "langgraph.pregel.main": "lgcheckpoint.pregel",
    "langgraph.pregel.protocol": NOT_YET,
    "langgraph.pregel.remote": "Platform",
    "langgraph.pregel.types": "lgcheckpoint.pregel.types",  # deprecated there and here
    "langgraph.runtime": "lgcheckpoint.runtime",
    "langgraph.store": "stores",
    "langgraph.stream": "v3 streaming",
    "langgraph.types": "lgcheckpoint.types",
    "langgraph.typing": NOT_YET,
    "langgraph.utils": NOT_YET,
    "langgraph.utils.config": NOT_YET,
    "langgraph.utils.runnable": NOT_YET,
    "langgraph.version": NOT_YET,
    "langgraph.warnings": "lgcheckpoint.warnings",
}

# a name LangGraph keeps in one module and lgcheckpoint in another: "module.name" -> our module
MOVED: dict[str, str] = {
    "langgraph.checkpoint.postgres.shallow.AsyncShallowPostgresSaver":
        "lgcheckpoint.checkpoint.postgres.aio",
    "langgraph.graph.MessagesState": "lgcheckpoint.messages",
    "langgraph.graph.MessageGraph": "lgcheckpoint.messages",
    "langgraph.graph.add_messages": "lgcheckpoint.messages",
    "langgraph.checkpoint.serde.jsonplus.EXT_CONSTRUCTOR_SINGLE_ARG":
        "lgcheckpoint.checkpoint.serde.msgpack_ext",
    "langgraph.checkpoint.serde.jsonplus.EXT_CONSTRUCTOR_POS_ARGS":
        "lgcheckpoint.checkpoint.serde.msgpack_ext",
    "langgraph.checkpoint.serde.jsonplus.EXT_CONSTRUCTOR_KW_ARGS":
        "lgcheckpoint.checkpoint.serde.msgpack_ext",
    "langgraph.checkpoint.serde.jsonplus.EXT_METHOD_SINGLE_ARG":
        "lgcheckpoint.checkpoint.serde.msgpack_ext",
    "langgraph.checkpoint.serde.jsonplus.EXT_PYDANTIC_V1":
        "lgcheckpoint.checkpoint.serde.msgpack_ext",
    "langgraph.checkpoint.serde.jsonplus.EXT_PYDANTIC_V2":
        "lgcheckpoint.checkpoint.serde.msgpack_ext",
    "langgraph.checkpoint.serde.jsonplus.EXT_NUMPY_ARRAY":
        "lgcheckpoint.checkpoint.serde.msgpack_ext",
    "langgraph.checkpoint.serde.jsonplus.EXT_DELTA_SNAPSHOT":
        "lgcheckpoint.checkpoint.serde.msgpack_ext",
    "langgraph.checkpoint.serde.types.ERROR": "lgcheckpoint.checkpoint.base",
    "langgraph.checkpoint.serde.types.INTERRUPT": "lgcheckpoint.checkpoint.base",
    "langgraph.checkpoint.serde.types.RESUME": "lgcheckpoint.checkpoint.base",
    "langgraph.checkpoint.serde.types.SCHEDULED": "lgcheckpoint.checkpoint.base",
    "langgraph.checkpoint.sqlite.JsonPlusSerializer": "lgcheckpoint.checkpoint.serde.jsonplus",
    "langgraph.checkpoint.sqlite.aio.JsonPlusSerializer":
        "lgcheckpoint.checkpoint.serde.jsonplus",
    "langgraph.checkpoint.base.EncryptedSerializer": "lgcheckpoint.checkpoint.serde.encrypted",
    "langgraph.cache.base.SerializerProtocol": "lgcheckpoint.checkpoint.serde.base",
    "langgraph.cache.memory.SerializerProtocol": "lgcheckpoint.checkpoint.serde.base",
    "langgraph.cache.sqlite.SerializerProtocol": "lgcheckpoint.checkpoint.serde.base",
    "langgraph.config.CONF": "lgcheckpoint.constants",
    "langgraph.pregel.types.StreamWriter": "lgcheckpoint.types",
}

# what lgcheckpoint leaves out on purpose (README "Not covered", DESIGN "Fidelity"): a module
# whose MODULES entry is one of these keys, or a single name listed here, is refused with it
OUT_OF_SCOPE: dict[str, str] = {
    "stores": "stores (long-term memory) are out of scope for lgcheckpoint",
    "Platform": "LangGraph Platform, remote graphs and the SDK are out of scope for lgcheckpoint",
    "v3 streaming": "the v3 streaming protocol is out of scope for lgcheckpoint",
    "Redis": "the Redis cache is out of scope for lgcheckpoint (use the SQLite or memory cache)",
    "langgraph.config.get_store": "stores",
    "langgraph.runtime.BaseUser": "Platform",
    "langgraph.runtime.ServerInfo": "Platform",
    "langgraph.prebuilt.ToolCallTransformer": "v3 streaming",
}  # prebuilt's InjectedStore is served: ToolNode refuses a tool that takes one, naming it

# need langchain-core
EXTRA = ("lgcheckpoint.messages", "lgcheckpoint.prebuilt", "lgcheckpoint.callbacks")
EXTRA_HINT = 'pip install "lgcheckpoint[messages]"'
PRIVATE_HINT = {  # where to read our version of a LangGraph-private module a program reached for
    "langgraph.pregel._loop": "lgcheckpoint.pregel.loop",
    "langgraph.pregel._algo": "lgcheckpoint.pregel.algo",
    "langgraph.pregel._checkpoint": "lgcheckpoint.pregel.checkpoint",
    "langgraph.pregel._runner": "lgcheckpoint.pregel.runner",
    "langgraph.pregel._read": "lgcheckpoint.pregel.node",
    "langgraph.pregel._write": "lgcheckpoint.pregel.node",
    "langgraph._internal._constants": "lgcheckpoint.constants",
}


class NotInLgcheckpoint(ImportError):
    """A LangGraph module or name that lgcheckpoint refuses, with the reason in the message."""


def refusal(what: str, target: str | None = None) -> NotInLgcheckpoint:
    """The error for a LangGraph module or ``module.name`` we do not serve, saying why."""
    reason = OUT_OF_SCOPE.get(what) or (target if target in OUT_OF_SCOPE else None)
    if reason:
        text = f"{what}: {OUT_OF_SCOPE.get(reason, reason)}"
    elif any(part.startswith("_") and not part.startswith("__") for part in what.split(".")):
        nearest = next((ours for theirs, ours in PRIVATE_HINT.items()
                        if what == theirs or what.startswith(theirs + ".")), None)
        ours = f"; lgcheckpoint's own version is {nearest}" if nearest else ""
        text = (f"{what} is private to LangGraph: lgcheckpoint serves only LangGraph's public "
                f"modules and names{ours}")
    elif target is None:
        return NotInLgcheckpoint(f"No module named {what!r}: LangGraph 1.2 has no public module "
                                 "of that name (lgcheckpoint/swap.py lists them)", name=what)
    elif target in EXTRA and importlib.util.find_spec("langchain_core") is None:
        text = f"{what} needs langchain-core, which is not installed: {EXTRA_HINT}"
    elif target == NOT_YET:
        text = f"{what} is {NOT_YET} in lgcheckpoint"
    elif importlib.util.find_spec(target) is None:
        text = f"{what} is {NOT_YET} in lgcheckpoint (this version has no {target})"
    else:
        text = (f"{what} is {NOT_YET} in lgcheckpoint ({target} serves the rest of "
                f"{what.rsplit('.', 1)[0]})")
    return NotInLgcheckpoint(text, name=what)


def target_of(module: str) -> str | None:
    """Our module for LangGraph's ``module``; None if LangGraph has no such public module."""
    path = module
    while path not in MODULES and "." in path:
        path = path.rsplit(".", 1)[0]
    found = MODULES.get(path)
    if path != module and found not in OUT_OF_SCOPE:  # a child the table does not list
        return None
    return found


def available(module: str) -> bool:
    """True when our ``module`` exists and what it needs is installed."""
    return importlib.util.find_spec(module) is not None and (
        module not in EXTRA or importlib.util.find_spec("langchain_core") is not None)


def absent(err: ImportError, module: str) -> bool:
    """True when ``err`` says our ``module`` is not there, or it needs langchain-core, missing."""
    if (getattr(err, "name", None) or "") == module:
        return True
    return module in EXTRA and importlib.util.find_spec("langchain_core") is None


class LangGraphModule(ModuleType):
    """A stand-in for one LangGraph module; each name is looked up in the table when first read.

    ``__lgcheckpoint__`` holds the name of the lgcheckpoint module that serves it."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # probes like __wrapped__ or __file__: plain "not here"
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        qualified = f"{self.__name__}.{name}"
        if qualified in OUT_OF_SCOPE or name.startswith("_"):
            raise refusal(qualified)
        if target_of(qualified) is not None:  # `from langgraph import graph`: the stand-in
            return importlib.import_module(qualified)
        ours = MOVED.get(qualified, self.__lgcheckpoint__)
        try:
            value = getattr(importlib.import_module(ours), name)
        except ImportError as err:
            if not absent(err, ours):
                raise  # our module is there but failed: show its own error
            raise refusal(qualified, ours) from None
        except AttributeError:
            raise refusal(qualified, ours) from None
        setattr(self, name, value)  # the next read is a plain attribute
        return value

    def __dir__(self) -> list[str]:
        """Tab completion in a notebook lists the names served, not only those read so far."""
        return sorted({*super().__dir__(), *self.__all__})

    @property
    def __all__(self) -> list[str]:
        """``from langgraph.X import *``: what our module exports, plus moved names we have."""
        ours = importlib.import_module(self.__lgcheckpoint__)
        names = list(getattr(ours, "__all__", None) or (
            n for n, v in vars(ours).items()
            if not n.startswith("_") and not isinstance(v, ModuleType)))
        for key, where in MOVED.items():
            module, name = key.rsplit(".", 1)
            if module == self.__name__ and name not in names and available(where):
                names.append(name)
        return names


class SwapLoader(importlib.abc.Loader):
    """Builds the stand-in for a LangGraph module, or refuses it by name."""

    def create_module(self, spec: Any) -> ModuleType:
        target = target_of(spec.name)
        if target is None or target == NOT_YET or target in OUT_OF_SCOPE:
            raise refusal(spec.name, target)
        try:
            importlib.import_module(target)
        except ImportError as err:
            if not absent(err, target):
                raise
            raise refusal(spec.name, target) from None
        module = LangGraphModule(spec.name)
        module.__lgcheckpoint__ = target
        module.__path__ = []  # a package, so that its children import
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: names are served on first read."""


class SwapFinder(importlib.abc.MetaPathFinder):
    """First on sys.meta_path: every ``langgraph`` module comes from SwapLoader."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "langgraph" and not fullname.startswith("langgraph."):
            return None
        return importlib.util.spec_from_loader(fullname, SwapLoader(), origin="lgcheckpoint.swap",
                                               is_package=True)


FINDER = SwapFinder()


def install() -> str:
    """Serve ``langgraph.*`` imports from lgcheckpoint from now on; say so in one line."""
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)
    real = [name for name, mod in list(sys.modules.items())
            if (name == "langgraph" or name.startswith("langgraph."))
            and not isinstance(mod, LangGraphModule)]
    for name in real:  # imported before: the next import of them comes from the table
        del sys.modules[name]
    note = (f"; {len(real)} real LangGraph modules imported earlier were dropped, so re-run "
            "the imports that used them") if real else ""
    return f"lgcheckpoint: langgraph imports are now served by lgcheckpoint{note}"


def uninstall() -> None:
    """Stop serving ``langgraph.*``; the stand-ins leave sys.modules."""
    if FINDER in sys.meta_path:
        sys.meta_path.remove(FINDER)
    for name, mod in list(sys.modules.items()):
        if isinstance(mod, LangGraphModule):
            del sys.modules[name]
