"""Run LangGraph's own test suites against lgcheckpoint and print the pass rate over what applies.

    python tools/langgraph_suite.py [--quick] [--markdown out.md] [--files PATTERN ...]

1. **Fetch.** ``pip download`` the pinned sdists (``PINS``) into ``CACHE`` (outside the repository;
   nothing of LangGraph's is copied into it) and extract their ``tests/`` folders.
2. **Rewrite.** Each test file's ``langgraph.*`` imports are routed by lgcheckpoint/swap.py's
   table (``MODULES`` / ``MOVED`` / ``OUT_OF_SCOPE``), the one rule ``lgcheckpoint run`` serves a
   real program by: an import whose names all come from the module the table names points there;
   any other goes to a stand-in module (``lgsuite_stub.<kind>.<path>``, see
   tools/langgraph_suite_plugin.py) that looks each name up by the same table and hands out a
   stand-in for a name the table refuses, so the file still collects and only the tests that
   *use* the absent thing fail, naming it. Postgres URIs point at
   ``LGCHECKPOINT_POSTGRES_URI`` (default: the local server) and a database this tool creates.
3. **Run** pytest per test file with the plugin: an import guard refuses every real ``langgraph``
   module, and the results file carries the proof (modules loaded: must be none).
4. **Classify** every test that did not pass with ``RULES`` (first match wins): out of scope,
   LangGraph-private helper, LangGraph test helper needing real LangGraph, deliberate difference
   (not applicable), or a named cause (missing feature / bug; applicable, counts as failing).
   Anything unmatched is "unclassified" and counts as failing. LangGraph's fixtures run exactly as
   published, and no LangGraph-private name is translated to ours.
5. **Report** passed / applicable per file and overall, the failing causes, and every exclusion
   rule with the number of tests it set aside; ``--markdown`` writes the tables.

Next: tools/langgraph_suite_plugin.py (the guard and the stand-ins).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import uuid
import warnings
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CACHE = Path(os.environ.get("LGSUITE_CACHE", Path.home() / ".cache" / "lgcheckpoint-suite"))
PINS = {  # sdist file stem -> pip requirement (the quick ones first)
    "langgraph_checkpoint-4.3.2": "langgraph-checkpoint==4.3.2",
    "langgraph_checkpoint_sqlite-3.1.2": "langgraph-checkpoint-sqlite==3.1.2",
    "langgraph_checkpoint_postgres-3.2.0": "langgraph-checkpoint-postgres==3.2.0",
    "langgraph_prebuilt-1.1.3": "langgraph-prebuilt==1.1.3",
    "langgraph-1.2.24": "langgraph==1.2.24",
}
ASYNCIO_AUTO = {"langgraph_checkpoint-4.3.2", "langgraph_checkpoint_sqlite-3.1.2",
                "langgraph_checkpoint_postgres-3.2.0",
                "langgraph_prebuilt-1.1.3"}  # as their own pytest config says
POSTGRES_URI = os.environ.get("LGCHECKPOINT_POSTGRES_URI",
                              "postgresql://postgres@127.0.0.1:5432/postgres")
RUN_TIMEOUT = 4 * 3600  # seconds for one sdist's tests
TEST_TIMEOUT = 60  # seconds for one test (pytest-timeout)
# pytest plugins of our venv that LangGraph's tests never use; each costs start-up time in every
# run (nbval alone imports nbformat and jsonschema: over a second)
UNUSED_PLUGINS = ("cacheprovider", "nbval", "langsmith_plugin", "xdist", "xdist.looponfail")

# ---------------------------------------------------------------------------------------------
# Imports. LangGraph's module paths are routed by lgcheckpoint/swap.py (imported in route: the
# tool checks the lgcheckpoint it measures, see --against); this tool adds only what is not a
# LangGraph module: other packages that serve out-of-scope features, and LangGraph test helpers.
NOT_LANGGRAPH = ("langgraph_sdk", "redis")  # the SDK (Platform) and the Redis client
# LangGraph test helpers replaced by our own (same checks, our code); see each file's docstring
REPLACED_HELPERS = {
    "langgraph-1.2.24": {"tests/memory_assert.py": "langgraph_suite_memory_assert.py"},
    "langgraph_prebuilt-1.1.3": {"tests/memory_assert.py": "langgraph_suite_memory_assert.py"},
}
KEEP_REAL = ("langgraph.checkpoint.conformance",)  # a LangGraph test helper; the guard refuses it


def is_private(path: str) -> bool:
    """An underscored segment marks a LangGraph-private module (``langgraph._internal._config``)."""
    return any(part.startswith("_") for part in path.split("."))


def has_module(name: str) -> bool:
    """True if ``name`` imports here (lgcheckpoint on PYTHONPATH)."""
    try:
        with warnings.catch_warnings():  # a deprecated module warns in the tests, not here
            warnings.simplefilter("ignore", DeprecationWarning)
            __import__(name)
        return True
    except ImportError:
        return False


def has_name(module: object, name: str) -> bool:
    """hasattr, for a module that refuses a name it lacks with ImportError (the messages one)."""
    try:
        with warnings.catch_warnings():  # constants.Send: deprecated, but there
            warnings.simplefilter("ignore", DeprecationWarning)
            return hasattr(module, name)
    except ImportError:
        return False


def route(path: str, names: list[str]) -> tuple[str, str, str | None]:
    """Decide an import by swap.py's table: (module to import, kind, our module that serves
    ``path``, where a stand-in module looks names up by the same table)."""
    from lgcheckpoint import swap

    if path.split(".")[0] in NOT_LANGGRAPH:
        return f"lgsuite_stub.out_of_scope.{path}", "out_of_scope", None
    if any(path == p or path.startswith(p + ".") for p in KEEP_REAL):
        return path, "real", None
    if is_private(path):
        return f"lgsuite_stub.private.{path}", "private", None
    target = swap.target_of(path)
    if target in swap.OUT_OF_SCOPE:
        return f"lgsuite_stub.out_of_scope.{path}", "out_of_scope", None
    if target is None or target == swap.NOT_YET or not has_module(target):
        return f"lgsuite_stub.missing.{path}", "missing", None
    module = sys.modules[target]
    direct = [n for n in names if n != "*" and f"{path}.{n}" not in swap.OUT_OF_SCOPE
              and f"{path}.{n}" not in swap.MOVED and not n.startswith("_")
              and has_name(module, n)]
    if len(direct) == len([n for n in names if n != "*"]):
        return target, "lgcheckpoint", None
    return f"lgsuite_stub.missing.{path}", "missing", target


def rewrite_imports(source: str, stubs: dict[str, str | None]) -> str:
    """Point every ``langgraph`` / out-of-scope import of one file at its route (into stubs)."""
    lines = source.splitlines(keepends=True)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            path, names = node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import) and len(node.names) == 1:
            path, names = node.names[0].name, []
        else:
            continue
        if path.split(".")[0] not in ("langgraph", *NOT_LANGGRAPH):
            continue
        new, _kind, fallback = route(path, names)
        if new.startswith("lgsuite_stub."):
            stubs[new] = fallback
        i = node.lineno - 1
        if isinstance(node, ast.Import) and node.names[0].asname is None and "." not in path:
            lines[i] = lines[i].replace(f"import {path}", f"import {new} as {path}", 1)
        else:
            lines[i] = re.sub(rf"\b{re.escape(path)}\b", new, lines[i], count=1)
    return "".join(lines)


# ---------------------------------------------------------------------------------------------
# A failure for want of langchain messages (LangGraph's message module, or a stand-in for it)
MESSAGES = (r"MessagesState|add_messages|RemoveMessage|REMOVE_ALL_MESSAGES|MessageGraph"
            r"|graph\.message\b")

# Classification. (kind, where, pattern, cause). where: "id" (the test id) or "msg" (its error).
# Kinds: out_of_scope / private / helper / deliberate are NOT applicable; missing / bug are
# applicable failures with a named cause. First match wins. Out of scope is what swap.py's table
# refuses as such (OutOfScopeError names its reason) and what DESIGN.md declares: stores, the
# Redis cache, LangGraph Platform / remote graphs / LangSmith, the v3 streaming protocol,
# astream_events, a real LLM provider. Chat models, Runnables as nodes, stream_mode="messages",
# langchain callbacks and tracers are applicable: a test needing what we lack fails as missing.
RULES = [
    ("out_of_scope", "msg", r"OutOfScopeError", "declared out of scope (swap.py's table)"),
    ("out_of_scope", "id", r"\[[^\]]*redis", "Redis cache (a parametrization on Redis)"),
    ("out_of_scope", "id", r"test_(async_)?store\.py|test_redis_cache\.py", "stores"),
    # a tool whose store argument is typed with the BaseStore stand-in: pydantic cannot check it
    ("out_of_scope", "msg", r"InjectedStore needs a store|Field \"store\"[\s\S]*is-instance",
     "stores (a tool's InjectedStore / BaseStore argument)"),
    ("out_of_scope", "id", r"test_remote_graph|stream_events_v3|_transformer\.py|/test_stream_",
     "v3 streaming protocol / remote graphs"),
    ("out_of_scope", "id", r"test_tracing_interops|test_utils\.py::test_runnable_callable_tracing",
     "LangSmith tracing (its client, a node's run tree)"),
    ("out_of_scope", "msg", r"astream_events", "astream_events"),
    # Runtime.server_info comes from LangGraph Platform (swap.py refuses ServerInfo as Platform)
    ("out_of_scope", "id", r"test_runtime\.py::test_server_info",
     "LangGraph Platform (a run's server info)"),
    ("out_of_scope", "msg", r"has no attribute 'stream_events'|stream_mode 'tools'",
     "v3 streaming protocol (stream_events, the tools stream)"),
    ("private", "msg", r"PrivateHelperError: langgraph\.graph\.message\._",
     "LangGraph-private helper"),
    ("private", "msg", r"PrivateHelperError", "LangGraph-private helper"),
    # a LangGraph-private constant (PULL, PUSH, INPUT ...) in a test's expected values: the swap
    # table refuses LangGraph's private modules, so the stand-in differs from the value
    ("private", "msg", r"<class 'lgsuite_stand_in\.private\.",
     "compares with a LangGraph-private constant (PULL, PUSH, INPUT ...)"),
    ("out_of_scope", "msg", r"<class 'lgsuite_stand_in\.out_of_scope\.",
     "declared out of scope (swap.py's table)"),
    ("private", "msg", r"blocked.*'langgraph\.(_internal|pregel\._|checkpoint\.serde\._)",
     "patches a LangGraph-private module"),
    ("helper", "id", r"test_conformance_delta",
     "needs LangGraph's conformance package (which imports real LangGraph)"),
    ("private", "msg", r"has no attribute '_|unexpected keyword argument '__",
     "LangGraph-private method or argument"),
    ("helper", "msg", r"RealLangGraphBlocked: lgsuite guard: real LangGraph module 'langgraph'",
     "imports LangGraph itself at run time (its conformance package or internals)"),
    ("helper", "msg", r"blocked.*'langgraph\.checkpoint\.conformance",
     "needs LangGraph's conformance package (which imports real LangGraph)"),
    # deliberate differences, each listed in README.md "Differences from LangGraph"
    ("deliberate", "msg", r"UnsafeTypeError|Refused to (rebuild|call)",
     "safe deserialization: a type not on the allow-list is refused, not warned about and built"),
    ("deliberate", "id", (r"test_search_where|test_metadata_predicate|"
                          r"test_checkpoint_search_sql_injection|test_metadata_filter_keys_with_hyph"),
     "a metadata filter key is one top-level key on every saver, never SQL text"),
    ("deliberate", "id", r"test_large_cases\.py::test_prebuilt_tool_chat$",
     "a schema's description is our own docstring (create_react_agent's state: LangGraph's "
     "docstrings are not copied)"),
    ("deliberate", "id", r"test_informative_async_errors",
     "the sync savers' async methods work (LangGraph's raise)"),
    ("deliberate", "msg", (r"Regex pattern did not match[\s\S]*Regex: .*langgraph\."
                           r"[\s\S]*Emitted warnings: .*lgcheckpoint\."),
     "a deprecation message names lgcheckpoint's module to import from, not langgraph's"),
    ("deliberate", "id", r"test_deprecation\.py::test_deprecated_import",
     "lgcheckpoint.constants is public: the runtime's reserved names are course material"),
    ("deliberate", "id", r"test_deprecation\.py::test_config_parameter_incorrect_typing",
     "`config` is injected by parameter name whatever its annotation (no warning needed)"),
    ("private", "msg", r"KeyError: '__pregel_", "reads a LangGraph-private config key"),
    # int(DEFAULT_RECURSION_LIMIT) of LangGraph-private _internal._config: test_config_async.py
    # does it at import, so the file does not collect (its public with_config tests pass when
    # the value is given by hand; ours: test_introspect_same_as_langgraph.py)
    ("private", "id", (r"test_config_async\.py::<collect>|test_utils\.py::test_merge_configs_"
                       r"applies_an_explicit_recursion_limit_equal_to_default"),
     "computes LangGraph-private _internal._config.DEFAULT_RECURSION_LIMIT"),
    # LangGraph-private constants handed to a channel or compared with one: from_checkpoint of
    # the MISSING stand-in is a value, not "nothing stored" (ours: tests/test_channels.py)
    ("private", "id", (r"test_channels\.py::(test_last_value|test_untracked_value"
                       r"|test_delta_channel_checkpoint_returns_missing"
                       r"|test_overwrite_dataclass_form_survives_json_roundtrip)$"),
     "uses LangGraph-private _internal constants (MISSING, OVERWRITE) with a channel"),
    # ToolNode invoked on its own with a config that carries LangGraph's private run objects
    # (a functools.partial of its local_read, a Runtime) where a graph would put them; the
    # same reads in a running graph are tested (test_tool_node_send_tool_call_gets_same_state_
    # as_edge, tests/test_prebuilt_send_state.py)
    ("private", "id", (r"test_on_tool_call\.py::test_list_form_send_hydrates_state_"
                       r"|test_tool_node\.py::test_tool_node_tool_runtime_generic"),
     "hands ToolNode a LangGraph-private config key (__pregel_read, __pregel_runtime)"),
    ("private", "id", (r"test_delta_channel_subgraph\.py::test_a?hydrating_"
                       r"|test_algo\.py::test_prepare_next_tasks"
                       r"|test_delta_channel_to_plain\.py::test_plain_reducer_replays_"),
     "calls LangGraph-private pregel._checkpoint.channels_from_checkpoint (ours differs)"),
    ("deliberate", "msg", r"ShallowPostgresSaver|Shallow",
     "the deprecated ShallowPostgresSaver is refused (PostgresSaver with durability='exit')"),
    ("deliberate", "id", r"test_set_node_defaults_error_handler_collides_with_user_node",
     "node names starting with '__' are refused at add_node (LangGraph: at compile, if at all)"),
    ("missing", "msg", r"EncryptedSerializer|serde\.encrypted", "EncryptedSerializer"),
    ("missing", "msg", r"event_hooks|STRICT_MSGPACK", "serializer extension points"),
    ("missing", "msg", r"UntrackedValue|untracked_value", "UntrackedValue channel"),
    ("missing", "msg", r"durability='exit' for graphs with a DeltaChannel",
     "DeltaChannel with durability='exit'"),
    # they call _pydantic.create_model in a thread or under pytest.warns, which hides the
    # PrivateHelperError behind a failed wait(timeout=10) / DID NOT WARN
    ("private", "id", r"test_pydantic\.py::test_create_model_",
     "calls LangGraph-private _pydantic.create_model"),
    ("private", "id", r"test_walk_step_looks_up_the_parent_by_primary_key",
     "reads LangGraph-private SQL text (its query plan)"),
    # it builds a PregelExecutableTask (public) only to hand it to private run_with_retry
    ("private", "id", r"test_retry\.py::test_run_with_retry_creates_execution_info_when_missing",
     "calls LangGraph-private pregel._retry.run_with_retry"),
    # its only observation is the hook: the key is a stand-in we ignore, the events stay empty
    ("private", "id", r"test_retry\.py::test_state_graph_observer_emits_finish_before_error_",
     "observes attempts through LangGraph-private config key __pregel_timed_attempt_observer"),
    ("missing", "msg", r"NodeBuilder|Pregel\(|unexpected keyword argument 'nodes'",
     "low-level Pregel API"),
    # not a bare "timeout": a test's own wait(timeout=10) failing is not about node timeouts
    ("missing", "msg", r"TimeoutPolicy|step_timeout|NodeTimeoutError|NodeCancelledError"
                       r"|\(timeout=\.\.\.\)", "node timeouts"),
    ("missing", "msg", r"task\(cache_policy=|entrypoint\(cache", "caching in the functional API"),
    ("missing", "msg", r"error_handler|set_node_defaults", "node error handlers"),
    ("missing", "msg", r"response_schema|InvalidResume|strict_resume", "interrupt response_schema"),
    ("missing", "msg", r"draw_mermaid|get_graph|to_json|draw_", "get_graph() drawing"),
    ("missing", "msg", r"resumable|Interrupt\.__init__", "old Interrupt fields"),
    ("missing", "msg", r"'type' object is not subscriptable|StateGraph\[", "StateGraph[...]"),
    ("missing", "msg", r"DID NOT WARN.*LangGraphDeprecat",
     "deprecation warnings (the classes exist; the deprecated options are refused, not warned)"),
    ("missing", "msg", r"get_input_jsonschema|get_output_jsonschema|get_subgraphs|with_config",
     "compiled-graph introspection"),
    # StateGraph itself warns as LangGraph does (tests/differential/test_state_schema_check_*)
    ("private", "id", r"test_state\.py::test_warns_invalid_schema",
     "calls LangGraph-private _warn_invalid_state_schema"),
    ("private", "id", r"test_jsonplus\.py::test_deserde_invalid_module",
     "calls LangGraph-private JsonPlusSerializer._revive_lc2 (InvalidModuleError never leaves it)"),
    # pytest.raises(X) where X is a stand-in for a LangGraph exception class we do not have
    ("missing", "msg", r"Expected a BaseException type, but got '\w+'",
     "a LangGraph exception class we do not have"),
    ("missing", "msg", r"version='v2'", "stream(version='v2') stream parts"),
    # messages, prebuilt tools, chat models and Runnables are in scope (the messages issue)
    ("missing", "msg", MESSAGES, "langchain messages as the state type (MessagesState, "
                                 "add_messages, MessageGraph)"),
    ("missing", "msg", r"stream_mode='messages'", "stream_mode='messages' (chat-model tokens)"),
    ("missing", "msg", r"which is not callable: nodes are plain functions",
     "a langchain Runnable as a node"),
    ("missing", "msg", r"object has no attribute '(map|pipe|with_retry|bind|with_config)'",
     "the compiled graph as a langchain Runnable (.map, .pipe, .with_retry ...)"),
    ("missing", "msg", r"FakeTracer|callbacks|Tracer", "langchain callbacks and tracers"),
    ("missing", "msg", r"MissingError|_StandInMeta", "other missing LangGraph name"),
]


# whole files about out-of-scope features are not run at all (listed in the report)
OUT_OF_SCOPE_FILES = (r"test_(async_)?store\.py|test_redis_cache|test_remote_graph|stream_events_v3"
                      r"|_transformer\.py|test_tool_stream_handler"
                      r"|test_tracing_interops|test_delta_channel_benchmark")


def classify(test_id: str, message: str) -> tuple[str, str]:
    """(kind, cause) of a test that did not pass; ("bug", "unclassified: ...") if none matches."""
    for kind, where, pattern, cause in RULES:
        if re.search(pattern, test_id if where == "id" else message):
            return kind, cause
    short = re.sub(r"\s+", " ", re.sub(r"0x[0-9a-f]+|\d{3,}", "…", message))
    return "bug", "unclassified: " + short.replace("|", "/")[:90]


APPLICABLE_KINDS = ("missing", "bug")

# The messages part (issue 25): langgraph's test_messages_state.py, the prebuilt sdist's tests, and
# every test of another file whose own code (or a module-level helper it calls) uses a message, a
# chat model, a Runnable or the string "messages" (stream_mode="messages", a messages channel)
MESSAGES_PART_FILES = r"^langgraph/tests/test_messages_state\.py|^langgraph_prebuilt/"
MESSAGES_PART_NAMES = r"Message|add_messages|ChatModel|FakeChat|Runnable(?!Config)"


def messages_part(source: str) -> list[str]:
    """The tests (``Class::test``) of one file that belong to the messages part."""
    tree = ast.parse(source)

    def uses(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and re.search(MESSAGES_PART_NAMES, n.id)
                   or isinstance(n, ast.Attribute) and re.search(MESSAGES_PART_NAMES, n.attr)
                   or isinstance(n, ast.Constant) and n.value == "messages"
                   for n in ast.walk(node))

    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    helpers = {n.name for n in tree.body if isinstance(n, functions) and uses(n)}
    tests = [(n.name, n) for n in tree.body if isinstance(n, functions)]
    tests += [(f"{c.name}::{n.name}", n) for c in tree.body if isinstance(c, ast.ClassDef)
              for n in c.body if isinstance(n, functions)]
    return [name for name, node in tests if name.rsplit("::", 1)[-1].startswith("test")
            and (uses(node) or any(isinstance(n, ast.Name) and n.id in helpers
                                   for n in ast.walk(node)))]


def in_messages_part(test_id: str, entry: dict) -> bool:
    return bool(re.search(MESSAGES_PART_FILES, test_id)) or entry.get("part") == "messages"

# ---------------------------------------------------------------------------------------------
# The quick subset for CI: a few fast files (each runs in seconds) covering serde, savers, graphs,
# messages and prebuilt tools.
QUICK = {
    "langgraph_checkpoint-4.3.2": ["tests/test_memory.py", "tests/test_jsonplus.py"],
    "langgraph_checkpoint_sqlite-3.1.2": ["tests/test_sqlite.py", "tests/test_aiosqlite.py"],
    "langgraph_prebuilt-1.1.3": ["tests/test_validation_node.py",
                                 "tests/test_injected_state_not_required.py"],
    "langgraph-1.2.24": ["tests/test_interrupt_migration.py", "tests/test_state.py",
                         "tests/test_messages_state.py"],
}


def fetch() -> dict[str, Path]:
    """Download (once) and extract the pinned sdists; return {dist: extracted tests root}."""
    sdists, src = CACHE / "sdists", CACHE / "src"
    sdists.mkdir(parents=True, exist_ok=True)
    missing = [req for stem, req in PINS.items() if not (sdists / f"{stem}.tar.gz").exists()]
    if missing:
        print(f"downloading {', '.join(missing)} into {sdists} ...", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                        ":all:", "-d", str(sdists), *missing], check=True,
                       stdout=subprocess.DEVNULL)
    roots = {}
    for stem in PINS:
        if not (src / stem / "tests").exists():
            with tarfile.open(sdists / f"{stem}.tar.gz") as tar:
                tar.extractall(src, filter="data")
        roots[stem] = src / stem
    return roots


def prepare(stem: str, root: Path, db_uri: str) -> Path:
    """A fresh rewritten copy of one sdist's tests under CACHE/run/<stem>; returns that folder."""
    run = CACHE / "run" / str(os.getpid()) / stem  # one folder per invocation: runs may overlap
    shutil.copytree(root / "tests", run / "tests")
    server = POSTGRES_URI.rsplit("/", 1)[0] + "/"
    stubs: dict[str, str | None] = {}
    part: list[str] = []
    for file in (run / "tests").rglob("*.py"):
        source = file.read_text()
        rel = file.relative_to(run).as_posix()
        part += [f"{rel}::{test}" for test in messages_part(source)]
        text = rewrite_imports(source, stubs)
        # the database URIs only; LangGraph's fixtures themselves run exactly as published
        text = re.sub(r"postgres://postgres(:postgres)?@localhost:\d+/postgres\?sslmode=disable",
                      db_uri, text)
        text = re.sub(r"postgres://postgres:postgres@localhost:\d+/", server, text)
        file.write_text(text)
    for helper, ours in REPLACED_HELPERS.get(stem, {}).items():
        shutil.copy(HERE / ours, run / helper)
    (run / "stubs.json").write_text(json.dumps(stubs, indent=1))
    (run / "part.json").write_text(json.dumps(part, indent=1))
    auto = "asyncio_mode = auto\n" if stem in ASYNCIO_AUTO else ""
    # full assertion diffs, so a stand-in deep in an expected value is seen (plugin: _message)
    (run / "pytest.ini").write_text(f"[pytest]\n{auto}asyncio_default_fixture_loop_scope = "
                                    "function\nfilterwarnings = ignore\nverbosity_assertions = 2\n")
    return run


def run_files(run: Path, files: list[str], against: Path, select: str | None = None) -> dict:
    """Run rewritten test files in one pytest process under the guard; return the results."""
    out = run / "results.json"
    out.unlink(missing_ok=True)
    env = dict(os.environ, LGSUITE_RESULTS=str(out), LGSUITE_STUBS=str(run / "stubs.json"),
               PYTHONPATH=os.pathsep.join([str(run), str(HERE), str(against)]),
               # bytecode (pytest's rewritten plugins among it) is kept in our cache, never beside
               # a source, so a run reuses the last one's even where PYTHONDONTWRITEBYTECODE is set
               PYTHONPYCACHEPREFIX=str(CACHE / "pycache"), PYTHONDONTWRITEBYTECODE="")
    cmd = [sys.executable, "-m", "pytest", *files, "-q", "-p", "langgraph_suite_plugin",
           *[arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")],
           "-c", str(run / "pytest.ini"), "--rootdir", str(run),
           f"--timeout={TEST_TIMEOUT}", "--continue-on-collection-errors",
           *(["-k", select] if select else [])]
    try:
        proc = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT, check=False)
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        tail = [f"run timed out after {RUN_TIMEOUT}s"]
    if not out.exists():  # the process died: every file counts as one crashed entry
        return {"tests": {f"{f}::<crashed>": {"outcome": "collect_error",
                                              "message": " | ".join(tail)} for f in files},
                "guard": {"blocked": [], "loaded": []}}
    got = json.loads(out.read_text())
    part = set(json.loads((run / "part.json").read_text()))
    for test_id, entry in got["tests"].items():
        if test_id.split("[")[0] in part:
            entry["part"] = "messages"
    return got


def test_files(root: Path) -> list[str]:
    """Every test module of one sdist, relative to its root."""
    return sorted(str(p.relative_to(root)) for p in (root / "tests").rglob("test_*.py"))


def summarize(results: dict[str, dict]) -> tuple[list[dict], Counter]:
    """Per-file rows (passed, applicable, not applicable, causes) and the overall causes (failing
    and set aside)."""
    rows, causes = [], Counter()
    per_file: dict[str, list] = defaultdict(list)
    for test_id, entry in results.items():
        per_file[test_id.split("::")[0]].append((test_id, entry))
    for file, entries in sorted(per_file.items()):
        row = Counter()
        for test_id, entry in entries:
            outcome = entry["outcome"]
            if outcome in ("passed", "xfailed"):
                row["passed"] += 1
            elif outcome == "skipped":
                row["skipped"] += 1
            else:
                kind, cause = classify(test_id, entry["message"])
                row[kind] += 1
                causes[(kind, cause)] += 1
        row["applicable"] = row["passed"] + sum(row[k] for k in APPLICABLE_KINDS)
        rows.append({"file": file, **row})
    return rows, causes


def overall(rows: list[dict]) -> tuple[int, int]:
    """(passed, applicable) over all rows."""
    return sum(r.get("passed", 0) for r in rows), sum(r["applicable"] for r in rows)


def rate(passed: int, applicable: int) -> str:
    return f"{100 * passed / applicable:.1f} %" if applicable else "n/a"


def table(rows: list[dict], causes: Counter, top: int = 25) -> str:
    """The report as markdown: per-file table, overall line, top failing causes, and every rule
    that sets tests aside (not applicable) with its count, zero included."""
    cols = ["passed", "applicable", "missing", "bug", "out_of_scope", "private", "helper",
            "deliberate", "skipped"]
    out = ["| file | rate | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    total = Counter()
    for row in rows:
        total.update({c: row.get(c, 0) for c in cols})
        out.append(f"| {row['file']} | {rate(row.get('passed', 0), row['applicable'])} | "
                   + " | ".join(str(row.get(c, 0)) for c in cols) + " |")
    out.append(f"| **all** | **{rate(total['passed'], total['applicable'])}** | "
               + " | ".join(str(total[c]) for c in cols) + " |")
    overall = rate(total["passed"], total["applicable"])
    passed, applicable = total['passed'], total['applicable']
    summary = f"Overall: {passed} of {applicable} applicable tests pass ({overall})."
    failing = Counter({kc: n for kc, n in causes.items() if kc[0] in APPLICABLE_KINDS})
    out += ["", summary, "",
            "| failing cause | tests | kind |", "|---|---|---|"]
    out += [f"| {cause} | {n} | {kind} |" for (kind, cause), n in failing.most_common(top)]
    excluded = dict.fromkeys((kind, cause) for kind, _, _, cause in RULES
                             if kind not in APPLICABLE_KINDS)
    out += ["", "| set aside by rule (not applicable) | tests | kind |", "|---|---|---|"]
    out += [f"| {cause} | {causes[(kind, cause)]} | {kind} |" for kind, cause in excluded]
    return "\n".join(out)


def create_database() -> str:
    """A database of our own on the server for tests that want a fixed one; returns its URI."""
    import psycopg

    name = f"lgsuite_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_URI, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return POSTGRES_URI.rsplit("/", 1)[0] + "/" + name


def drop_database(uri: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES_URI, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{uri.rsplit("/", 1)[1]}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the fast CI subset (QUICK)")
    parser.add_argument("--markdown", help="also write the table to this markdown file")
    parser.add_argument("--json", help="write per-test outcomes and classes to this file")
    parser.add_argument("--against", default=str(REPO),
                        help="folder holding the lgcheckpoint package to test (default: this repo)")
    parser.add_argument("--files", nargs="*",
                        help="only test files whose path contains one of these")
    parser.add_argument("-k", dest="select", help="pytest -k expression (e.g. 'memory or sqlite')")
    parser.add_argument("--from-json", help="classify and report saved --json results; run nothing")
    args = parser.parse_args(argv)
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text())
        return report(saved, set(), set(), [], args)

    against = Path(args.against).resolve()
    sys.path.insert(0, str(against))  # the rewrite checks which modules and names exist there
    roots = fetch()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still drops its database
    db_uri = create_database()
    results: dict[str, dict] = {}
    loaded, blocked, skipped_files = set(), set(), []
    started = time.monotonic()
    try:
        for stem, root in roots.items():
            files = QUICK.get(stem, []) if args.quick else test_files(root)
            if args.files:
                files = [f for f in files if any(p in f"{stem}/{f}" for p in args.files)]
            skipped_files += [f"{stem}/{f}" for f in files if re.search(OUT_OF_SCOPE_FILES, f)]
            files = [f for f in files if not re.search(OUT_OF_SCOPE_FILES, f)]
            if not files:
                continue
            run = prepare(stem, root, db_uri)
            t0 = time.monotonic()
            got = run_files(run, files, against, args.select)
            loaded.update(got["guard"]["loaded"])
            blocked.update(got["guard"]["blocked"])
            for test_id, entry in got["tests"].items():
                results[f"{stem.split('-')[0]}/{test_id}"] = entry
            print(f"  {stem}: {len(files)} files, {len(got['tests'])} tests "
                  f"in {time.monotonic() - t0:.0f}s", file=sys.stderr, flush=True)
    finally:
        drop_database(db_uri)
        shutil.rmtree(CACHE / "run" / str(os.getpid()), ignore_errors=True)
    return report(results, loaded, blocked, skipped_files, args,
                  time.monotonic() - started)


def report(results: dict, loaded: set, blocked: set, skipped_files: list,
           args: argparse.Namespace, seconds: float = 0.0) -> int:
    """Print (and write) the table; exit status 1 if the guard saw real LangGraph loaded."""
    rows, causes = summarize(results)
    text = table(rows, causes)
    part = {t: e for t, e in results.items() if in_messages_part(t, e)}
    if part:
        passed, applicable = overall(summarize(part)[0])
        text += (f"\n\nThe messages part (test_messages_state.py, langgraph-prebuilt, the message /"
                 f" chat-model / Runnable tests of the other files): {passed} of {applicable} "
                 f"applicable tests pass ({rate(passed, applicable)}), {len(part)} tests.")
    if skipped_files:
        text += "\n\nNot run (whole file out of scope): " + ", ".join(skipped_files)
    print(text)
    if not args.from_json:
        print(f"\nimport guard: {len(loaded)} real langgraph modules loaded {sorted(loaded)}; "
              f"{len(blocked)} distinct imports blocked; {seconds:.0f}s")
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    if args.json:
        done = ("passed", "xfailed", "skipped")
        Path(args.json).write_text(json.dumps(
            {tid: {**e, "class": None if e["outcome"] in done else
                   classify(tid, e["message"])} for tid, e in results.items()},
            indent=1))
    return 1 if loaded else 0


if __name__ == "__main__":
    sys.exit(main())
