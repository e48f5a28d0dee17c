"""Every public module and name of the installed LangGraph, tried again under lgcheckpoint's hook.

Run as a script (in a subprocess: it imports real LangGraph, then drops it), it prints JSON:
``{"modules": {module: outcome}, "names": {"module.name": outcome}}`` where an outcome is
``["ok"]``, ``["refused", message]`` (our NotInLgcheckpoint) or ``["broken", error]`` (anything
else). Public: a module path with no ``_`` segment; in a module, its ``__all__``, else each
name it defines or takes from another LangGraph module (not typing helpers or other libraries).
``langgraph.checkpoint.conformance`` is skipped: a separate test package, not LangGraph's runtime.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import warnings
from types import ModuleType

SKIPPED = ("langgraph.checkpoint.conformance",)


def is_public(module: str) -> bool:
    return not any(part.startswith("_") for part in module.split(".")) and not any(
        module == s or module.startswith(s + ".") for s in SKIPPED)


def walk(paths: list[str], prefix: str) -> list[str]:
    """Module names under ``paths``, namespace folders (no ``__init__.py``) included."""
    found = []
    for info in pkgutil.iter_modules(paths, prefix):
        if is_public(info.name):
            found.append(info.name)
            if info.ispkg:
                found += walk(list(importlib.import_module(info.name).__path__), info.name + ".")
    for folder in paths:
        for entry in sorted(os.listdir(folder)):
            if os.path.isdir(os.path.join(folder, entry)) and entry.isidentifier() and \
                    not os.path.exists(os.path.join(folder, entry, "__init__.py")) and \
                    is_public(prefix + entry):
                inner = walk([os.path.join(folder, entry)], prefix + entry + ".")
                found += [prefix + entry, *inner]
    return found


def public_names(module: ModuleType) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    names = []
    for name, value in vars(module).items():
        home = getattr(value, "__module__", None)
        if name.startswith("_") or isinstance(value, ModuleType) or name == "TYPE_CHECKING":
            continue
        if home is None or str(home).startswith("langgraph"):
            names.append(name)
    return names


def outcome(action) -> list:
    from lgcheckpoint.swap import NotInLgcheckpoint

    try:
        action()
        return ["ok"]
    except NotInLgcheckpoint as err:
        return ["refused", str(err)]
    except Exception as err:  # noqa: BLE001 - anything else is what the test reports
        return ["broken", f"{type(err).__name__}: {err}"]


def main() -> None:
    warnings.simplefilter("ignore")
    import langgraph

    modules = sorted(set(walk(list(langgraph.__path__), "langgraph.")))
    names = {m: public_names(importlib.import_module(m)) for m in modules}
    for loaded in [m for m in sys.modules if m == "langgraph" or m.startswith("langgraph.")]:
        del sys.modules[loaded]

    from lgcheckpoint import swap

    swap.install()
    report = {"modules": {}, "names": {}}
    for module in modules:
        report["modules"][module] = outcome(lambda: importlib.import_module(module))
        if report["modules"][module][0] != "ok":
            continue
        served = sys.modules[module]
        for name in names[module]:
            report["names"][f"{module}.{name}"] = outcome(lambda: getattr(served, name))
    print(json.dumps(report))


if __name__ == "__main__":
    main()
