"""pytest plugin for tools/langgraph_suite.py: block LangGraph, stand in for absent modules, record.

Loaded with ``-p langgraph_suite_plugin`` before any test module or conftest is imported. It does
three things and nothing else:

1. **Import guard.** A meta-path finder refuses every ``langgraph`` / ``langgraph.*`` import (no
   exceptions: LangGraph's test helpers that need real LangGraph, such as the conformance package,
   fail and are classified). At the end of the session it checks that no ``langgraph`` module is in
   ``sys.modules`` and writes the proof (blocked attempts, loaded modules) to the results file.
2. **Stand-ins.** The rewritten tests import modules that lgcheckpoint does not serve whole (out of
   scope, LangGraph-private, missing, or serving only some of the names asked for) from
   ``lgsuite_stub.<kind>.<path>``. Such a module hands out each name exactly as
   lgcheckpoint/swap.py serves it to a real program (``lgcheckpoint run``); a name the table
   refuses becomes a stand-in class whose use raises ``OutOfScopeError`` / ``PrivateHelperError`` /
   ``MissingError`` with the table's reason, so the failing test names what it needed. Importing
   a stand-in never succeeds at *running* anything; it only lets a test file collect so its other
   tests can run.
3. **Recorder.** Every test's outcome and the first line of its error go to the JSON file named by
   ``LGSUITE_RESULTS``.

Next: tools/langgraph_suite.py
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import json
import os
import re
import sys
import types

STUB_ROOT = "lgsuite_stub"


class OutOfScopeError(Exception):
    """A test used a LangGraph feature lgcheckpoint declares out of scope."""


class PrivateHelperError(Exception):
    """A test used a LangGraph-private helper (an underscored module)."""


class MissingError(Exception):
    """A test used an in-scope LangGraph module lgcheckpoint does not have (yet)."""


ERRORS = {"out_of_scope": OutOfScopeError, "private": PrivateHelperError, "missing": MissingError}


class RealLangGraphBlocked(ImportError):
    """The guard refused to import real LangGraph."""


BLOCKED: list[str] = []


class Guard(importlib.abc.MetaPathFinder):
    """Refuse ``langgraph`` and every submodule; record each attempt."""

    def find_spec(self, name, path=None, target=None):
        if name == "langgraph" or name.startswith("langgraph."):
            BLOCKED.append(name)
            raise RealLangGraphBlocked(f"lgsuite guard: real LangGraph module {name!r} blocked")


class _StandInMeta(type):
    """Using a stand-in class (calling it, reading an attribute, isinstance) raises its error."""

    def __call__(cls, *args, **kwargs):
        raise cls._lgsuite_error(f"{cls._lgsuite_name} is {cls._lgsuite_kind}")

    def __instancecheck__(cls, instance):  # isinstance(x, _DeltaSnapshot) must not just say no
        raise cls._lgsuite_error(f"isinstance(..., {cls._lgsuite_name}): {cls._lgsuite_kind}")

    def __getattr__(cls, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr.startswith("_"):  # a private method of a class we lack is private, not missing
            raise PrivateHelperError(f"{cls._lgsuite_name}.{attr} is private for lgcheckpoint")
        raise cls._lgsuite_error(f"{cls._lgsuite_name}.{attr} is {cls._lgsuite_kind}")


class PrivateConfigKey(str):
    """A LangGraph-private config key (``CONFIG_KEY_*``): putting it in a config raises, so a test
    that lends a saver or a callback through one counts as private, never passes by accident."""

    def __hash__(self):
        raise PrivateHelperError(f"{self} is a LangGraph-private config key")


def stand_in(kind: str, qualname: str, reason: str = "") -> type:
    """A class standing for ``qualname``; any use raises the error of ``kind`` (with swap.py's
    reason for refusing it, when there is one)."""
    said = f" ({reason})" if reason else ""
    return _StandInMeta(qualname.rsplit(".", 1)[-1], (), {
        "_lgsuite_error": ERRORS[kind], "_lgsuite_name": qualname,
        "_lgsuite_kind": kind.replace("_", " ") + " for lgcheckpoint" + said,
        "__module__": f"lgsuite_stand_in.{kind}"})  # its repr says what it stands for


class StubModule(types.ModuleType):
    """``lgsuite_stub.<kind>.<path>``: real lgcheckpoint objects by name, else stand-ins."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        _, kind, path = self.__name__.split(".", 2)
        qualified = f"{path}.{name}"
        if qualified in SHIMS:
            return SHIMS[qualified]
        from lgcheckpoint import swap

        if qualified in swap.MODULES:  # a LangGraph module read as an attribute of its parent
            ours = swap.MODULES[qualified]
            sub = "out_of_scope" if ours in swap.OUT_OF_SCOPE else "missing"
            STUBS.setdefault(f"{STUB_ROOT}.{sub}.{qualified}",
                             None if sub != "missing" or ours == swap.NOT_YET else ours)
            return importlib.import_module(f"{STUB_ROOT}.{sub}.{qualified}")
        reason = ""
        if STUBS.get(self.__name__):  # swap's own stand-in for the module, which we serve
            try:
                return getattr(served(path, STUBS[self.__name__]), name)
            except ImportError as refused:  # swap.NotInLgcheckpoint: the table's reason
                reason = str(refused)
        if qualified in swap.OUT_OF_SCOPE:
            kind = "out_of_scope"
        elif name.startswith("_"):  # a private name of a public module
            kind = "private"
        if kind == "private" and name.startswith("CONFIG_KEY_"):
            return PrivateConfigKey(qualified)
        return stand_in(kind, qualified, reason)


def served(path: str, ours: str) -> types.ModuleType:
    """swap.py's stand-in for LangGraph's module ``path`` (served by our ``ours``), built the way
    ``lgcheckpoint run`` builds it, but not put in sys.modules (the guard keeps langgraph out)."""
    from lgcheckpoint import swap

    if path not in SERVED:
        SERVED[path] = swap.LangGraphModule(path)
        SERVED[path].__lgcheckpoint__ = ours
    return SERVED[path]


SERVED: dict[str, types.ModuleType] = {}


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Create stand-in modules under ``lgsuite_stub``; every level is a package."""

    def find_spec(self, name, path=None, target=None):
        if name == STUB_ROOT or name.startswith(STUB_ROOT + "."):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        return None


# private names whose whole meaning is LangGraph bookkeeping we do not have; each gets the neutral
# value (a test's fixture resets LangGraph's "already warned" registry: ours has none)
SHIMS = {f"langgraph.checkpoint.serde.jsonplus._warned_{kind}_types": set()
         for kind in ("unregistered", "blocked", "unreconstructable")}
# No LangGraph-private name (a config key such as CONFIG_KEY_CHECKPOINTER, "__pregel_
# checkpointer", or a private class such as _DeltaSnapshot) is ever translated to ours: a real
# program would not get that translation, so a test that needs one counts as private.
STUBS: dict[str, str | None] = {}  # stand-in module -> our module to look names up in first


def _install() -> None:
    leaked = sorted(m for m in sys.modules if m == "langgraph" or m.startswith("langgraph."))
    if leaked:
        raise RuntimeError(f"lgsuite: real LangGraph already imported before the guard: {leaked}")
    if os.environ.get("LGSUITE_STUBS"):
        with open(os.environ["LGSUITE_STUBS"]) as f:
            STUBS.update(json.load(f))
    sys.meta_path.insert(0, Guard())
    sys.meta_path.insert(1, StubFinder())


_install()
RESULTS: dict[str, dict] = {}


def _message(report) -> str:
    """The first informative line of a failure: the crash message, or the last repr line."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
    elif isinstance(report.longrepr, tuple):  # skipped: (file, line, reason)
        text = str(report.longrepr[2])
    else:
        text = str(report.longrepr).strip().splitlines()[-1] if report.longrepr else ""
    text = text.strip()[:600]
    # a stand-in used as a value (a private constant in an expected task path) shows only deep
    # in the diff: name the first one, so the test is classified by what it used
    used = re.search(r"<class 'lgsuite_stand_in\.\w+\.\w+'>", str(report.longrepr))
    if used and used.group(0) not in text:
        text += f" [uses stand-in {used.group(0)}]"
    return text


def pytest_runtest_logreport(report):
    """Keep the worst phase per test: a failing setup/teardown is the test's outcome."""
    entry = RESULTS.setdefault(report.nodeid, {"outcome": "passed", "message": ""})
    if report.when == "call" and hasattr(report, "wasxfail"):
        entry.update(outcome="xfailed" if report.skipped else "xpassed", message="")
    elif report.failed:
        if entry["outcome"] in ("passed", "xfailed", "xpassed"):
            entry.update(outcome="failed" if report.when == "call" else "error",
                         message=_message(report))
    elif report.skipped and entry["outcome"] == "passed":
        entry.update(outcome="skipped", message=_message(report))


def pytest_collectreport(report):
    """A file that does not import: every test of it is failed later with this message."""
    if report.failed:
        RESULTS[report.nodeid + "::<collect>"] = {"outcome": "collect_error",
                                                  "message": _collect_message(report)}


def _collect_message(report) -> str:
    text = str(report.longrepr)
    lines = [ln for ln in text.splitlines() if ln.startswith("E ")]
    return (lines[-1][2:].strip() if lines else text.strip().splitlines()[-1])[:600]


def pytest_sessionfinish(session, exitstatus):
    """Write outcomes and the guard's proof."""
    loaded = sorted(m for m in sys.modules if m == "langgraph" or m.startswith("langgraph."))
    out = os.environ.get("LGSUITE_RESULTS")
    if out:
        with open(out, "w") as f:
            json.dump({"tests": RESULTS,
                       "guard": {"blocked": sorted(set(BLOCKED)), "loaded": loaded}}, f, indent=1)
