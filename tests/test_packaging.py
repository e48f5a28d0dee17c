"""Every third-party import is declared where it is used (the built wheel: test_wheel.py)."""

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "lgcheckpoint"
IMPORT_TO_DIST = {
    "psycopg_pool": "psycopg-pool",
    "traitlets": "ipywidgets",
}  # import name -> distribution
OPTIONAL_PARTS = {  # package part -> the extra that brings its dependencies
    "viz": "viz",
    "checkpoint/postgres": "postgres",
    "checkpoint/sqlite/aio.py": "sqlite",
    "course_pictures.py": "viz",  # the course's matplotlib pictures
    "messages.py": "messages",  # chat messages, on langchain-core
    "prebuilt": "messages",  # ToolNode, create_react_agent: on the same extra
    "pregel/messages_stream.py": "messages",  # stream_mode="messages": imported only when asked
    "pregel/tracing.py": "messages",  # langchain callbacks: imported only for runs that pass them
    "callbacks.py": "messages",  # langgraph.callbacks' names, on langchain-core's handlers
}
# core modules that reach the messages extra lazily, inside one function, and only for input that
# is itself langchain's: a dict as a node becomes langchain's RunnableParallel (runnables.py), a
# Runnable method of a graph builds its adapter (as_runnable.py), a Runnable node is timed
# (timeouts.py), a write that holds a message gets its id (write_ids.py)
LAZY_MESSAGES_USERS = {"lgcheckpoint/pregel/runnables.py", "lgcheckpoint/pregel/as_runnable.py",
                       "lgcheckpoint/pregel/timeouts.py", "lgcheckpoint/pregel/write_ids.py"}


def third_party_imports(path: Path, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    names = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {
        n
        for n in names
        if n not in sys.stdlib_module_names and n not in {"lgcheckpoint", "__future__"}
    }


def declared(extra: str | None) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + (project["optional-dependencies"][extra] if extra else [])
    return {r.split("[")[0].split(">")[0].split("=")[0].split(";")[0].strip().lower() for r in reqs}


def part_of(path: Path) -> str | None:
    rel = path.relative_to(PKG).as_posix()
    return next((extra for part, extra in OPTIONAL_PARTS.items() if rel.startswith(part)), None)


def test_core_modules_import_only_declared_dependencies_at_top_level():
    problems = []
    for path in sorted(PKG.rglob("*.py")):
        extra = part_of(path)
        allowed = declared(extra)
        # optional libraries (numpy, a viewer's widgets) may be imported lazily inside functions
        for name in third_party_imports(path, top_level_only=True):
            if IMPORT_TO_DIST.get(name, name).replace("_", "-").lower() not in allowed:
                problems.append(
                    f"{path.relative_to(ROOT)} imports {name}, not declared for {extra or 'core'}"
                )
    assert not problems, "\n".join(problems)


def test_the_package_never_imports_langgraph():
    users = [
        p.relative_to(ROOT).as_posix()
        for p in PKG.rglob("*.py")
        if "langgraph" in third_party_imports(p, top_level_only=False)
    ]
    assert not users, f"LangGraph is a test dependency only; imported by {users}"


def test_only_the_messages_extra_imports_langchain():
    users = [
        p.relative_to(ROOT).as_posix()
        for p in PKG.rglob("*.py")
        if "langchain_core" in third_party_imports(p, top_level_only=False)
        and part_of(p) != "messages" and p.relative_to(ROOT).as_posix() not in LAZY_MESSAGES_USERS
    ]
    assert not users, f"langchain-core is the optional [messages] extra; imported by {users}"
