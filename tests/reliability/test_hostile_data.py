"""The published attacks on LangGraph's savers, replayed against ours (SQLite file and Postgres).

* CVE-2025-67644: metadata filter keys carrying SQL (``x') OR '1'='1``, a UNION SELECT that forges
  a checkpoint row, stacked DELETE / INSERT) -> no extra rows, nothing forged, nothing changed.
* CVE-2026-28277: a stored checkpoint / pending write UPDATEd in the database so its msgpack names
  os.system, subprocess.run, builtins.exec, importlib.import_module or a class nobody allowed ->
  get_tuple, list, get_state and a resume raise a clear error; the payload's file never appears.
* CVE-2025-64439 / CVE-2026-48775: the same with "json" rows holding LangChain-style
  ``{"lc": 2, "type": "constructor", "id": ["os", "system"], ...}`` records.
* Hypothesis: ``list(filter=...)`` with random keys and values -> only TypeError / ValueError,
  never another exception, a slow query or a row that does not match.

The serializer's own fuzzing of loads_typed lives in tests/test_serde_security.py.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lgcheckpoint.checkpoint.base import empty_checkpoint
from lgcheckpoint.checkpoint.id import uuid6
from lgcheckpoint.errors import InvalidCheckpointError
from tests.reliability.helpers import Store, open_saver, small_graph

EVIL_MODULE = "reliability_evil_module"  # importing it creates the canary file


class Canary:
    """A class no allow-list names; building it creates the canary file."""

    def __init__(self, path: str) -> None:
        Path(path).touch()


# --- databases ------------------------------------------------------------------------------------
@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> tuple[str, str]:
    """(kind, target) of a set-up database: a fresh SQLite file, or the session's Postgres one."""
    if request.param == "postgres":
        target = request.getfixturevalue("postgres_uri")
    else:
        target = str(tmp_path / "hostile.sqlite")
    with open_saver(request.param, target) as saver:
        saver.setup()
    return request.param, target


def fresh_thread() -> str:
    return f"hostile-{uuid.uuid4().hex[:12]}"


def run_thread(kind: str, target: str, thread_id: str) -> dict:
    """A finished two-node run; returns its config."""
    config = {"configurable": {"thread_id": thread_id}}
    with open_saver(kind, target) as saver:
        assert small_graph(saver).invoke({"value": 1, "log": []}, config)["value"] == 4
    return config


# --- CVE-2025-67644: SQL in metadata filter keys --------------------------------------------------
INJECTION_KEYS = [
    "x') OR '1'='1",
    "x' OR '1'='1",
    "source') = 'loop' OR ('1'='1",
    "step')) OR 1=1 --",
    "$.source",
    "x') IS NULL UNION SELECT 'forged', '', 'forged-id', NULL, 'msgpack', X'80', '{}' --",
    "x') IS NULL UNION SELECT 'forged','','forged-id',NULL,'{}'::jsonb,'{}'::jsonb,"
    "NULL,NULL,NULL --",
    "x'); DELETE FROM checkpoints; --",
    "x'); INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) "
    "VALUES ('forged', '', 'forged-id'); --",
    "a\" = 1 OR \"b",
]


@pytest.mark.parametrize("key", INJECTION_KEYS)
def test_sql_in_filter_keys_forges_nothing(db, key):
    kind, target = db
    config = run_thread(kind, target, fresh_thread())
    store = Store(kind, target)
    before = store.counts()
    stored = list_all(kind, target, config)
    for value, scope in itertools.product(["x", "loop", "' OR '1'='1", 1, None], (config, None)):
        with open_saver(kind, target) as saver:
            found = list(saver.list(scope, filter={key: value}))
        if value is None and kind == "sqlite":  # a missing key counts as None (as LangGraph)
            assert len(found) >= (len(stored) if scope else 1)
        for tup in found:
            assert tup.config["configurable"]["thread_id"] != "forged"
            assert tup.metadata.get(key) == value, f"{key!r}: a row that does not match"
        if value is not None:
            assert found == [], f"{key!r} matched rows although no metadata has that key"
    assert store.counts() == before, "the filter changed the database"
    assert store.rows("SELECT count(*) FROM checkpoints WHERE thread_id = 'forged'") == [(0,)]


@pytest.mark.parametrize("part", ["thread_id", "checkpoint_ns", "checkpoint_id"])
def test_sql_in_config_values_forges_nothing(db, part):
    kind, target = db
    config = run_thread(kind, target, fresh_thread())
    evil = "x' OR '1'='1' UNION SELECT * FROM checkpoints --"
    hostile = {"configurable": {**config["configurable"], part: evil}}
    with open_saver(kind, target) as saver:
        assert list(saver.list(hostile)) == []
        assert saver.get_tuple(hostile) is None


def list_all(kind: str, target: str, config: dict) -> list[Any]:
    with open_saver(kind, target) as saver:
        return list(saver.list(config))


# --- CVE-2026-28277, CVE-2025-64439, CVE-2026-48775: tampered rows --------------------------------
@pytest.fixture
def canary(tmp_path, monkeypatch) -> Path:
    """A file any executed payload would create; an importable module that creates it."""
    target = tmp_path / "pwned"
    code = f"import pathlib\npathlib.Path({str(target)!r}).touch()\n"
    (tmp_path / f"{EVIL_MODULE}.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield target
    sys.modules.pop(EVIL_MODULE, None)


def ext(code: int, *payload: Any) -> ormsgpack.Ext:
    """A msgpack extension value: 0 = cls(arg), 1 = cls(*args), 2 = cls(**kwargs)."""
    return ormsgpack.Ext(code, ormsgpack.packb(payload))


def msgpack_payloads(canary: Path) -> dict[str, ormsgpack.Ext]:
    cmd = f"touch {canary}"
    return {
        "os.system": ext(0, "os", "system", cmd),
        "subprocess.run": ext(1, "subprocess", "run", [["sh", "-c", cmd]]),
        "builtins.exec": ext(0, "builtins", "exec", f"open({str(canary)!r}, 'w')"),
        "importlib.import_module": ext(0, "importlib", "import_module", EVIL_MODULE),
        f"{__name__}.Canary": ext(2, __name__, "Canary", {"path": str(canary)}),
    }


def json_payloads(canary: Path) -> dict[str, dict]:
    cmd = f"touch {canary}"
    return {
        "os.system": {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": [cmd],
                      "kwargs": {}},
        "subprocess.run": {"lc": 2, "type": "constructor", "id": ["subprocess", "run"],
                           "kwargs": {"args": ["sh", "-c", cmd]}},
    }


ATTACKS = [("msgpack", name) for name in msgpack_payloads(Path("/x"))] + [
    ("json", name) for name in json_payloads(Path("/x"))]


def tamper_checkpoint(kind: str, target: str, thread_id: str, tag: str, payload: Any) -> None:
    """UPDATE the stored 'value' channel of every checkpoint of the thread to the payload."""
    store = Store(kind, target)
    if kind == "postgres":  # a blob under each version the checkpoints name, none kept inline
        blob = ormsgpack.packb(payload) if tag == "msgpack" else json.dumps(payload).encode()
        assert store.execute(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
            "SELECT DISTINCT thread_id, checkpoint_ns, 'value', checkpoint -> 'channel_versions' "
            "->> 'value', ?, ? FROM checkpoints WHERE thread_id = ? "
            "AND checkpoint -> 'channel_versions' ->> 'value' IS NOT NULL ON CONFLICT "
            "(thread_id, checkpoint_ns, channel, version) DO UPDATE SET type = EXCLUDED.type, "
            "blob = EXCLUDED.blob", (tag, blob, thread_id)) > 0
        store.execute("UPDATE checkpoints SET checkpoint = checkpoint #- '{channel_values,value}' "
                      "WHERE thread_id = ?", (thread_id,))
        return
    from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    with store._cursor() as conn:
        rows = conn.execute("SELECT checkpoint_id, type, checkpoint FROM checkpoints WHERE "
                            "thread_id = ?", (thread_id,)).fetchall()
        for checkpoint_id, type_, blob in rows:
            checkpoint = serde.loads_typed((type_, blob))
            checkpoint["channel_values"]["value"] = payload
            raw = (ormsgpack.packb(checkpoint) if tag == "msgpack"
                   else json.dumps(checkpoint).encode())
            conn.execute("UPDATE checkpoints SET type = ?, checkpoint = ? WHERE thread_id = ? AND "
                         "checkpoint_id = ?", (tag, raw, thread_id, checkpoint_id))
        conn.commit()


def tamper_write(kind: str, target: str, config: dict, tag: str, payload: Any) -> None:
    """Save a pending write on the latest checkpoint, then UPDATE its value to the payload."""
    with open_saver(kind, target) as saver:
        latest = saver.get_tuple(config)
        saver.put_writes(latest.config, [("value", 5)], "task-1")
    blob = ormsgpack.packb(payload) if tag == "msgpack" else json.dumps(payload).encode()
    table, column = ("checkpoint_writes", "blob") if kind == "postgres" else ("writes", "value")
    thread_id = config["configurable"]["thread_id"]
    assert Store(kind, target).execute(
        f"UPDATE {table} SET type = ?, {column} = ? WHERE thread_id = ? AND task_id = ?",
        (tag, blob, thread_id, "task-1")) == 1


LOADERS = {
    "get_tuple": lambda saver, config: saver.get_tuple(config),
    "list": lambda saver, config: list(saver.list(config)),
    "get_state": lambda saver, config: small_graph(saver).get_state(config),
    "resume": lambda saver, config: small_graph(saver).invoke(None, config),
}


@pytest.mark.parametrize("where", ["checkpoint", "pending write"])
@pytest.mark.parametrize(("tag", "attack"), ATTACKS)
def test_tampered_row_is_refused_and_runs_nothing(db, tag, attack, where, canary):
    kind, target = db
    config = run_thread(kind, target, fresh_thread())
    payload = (msgpack_payloads if tag == "msgpack" else json_payloads)(canary)[attack]
    if where == "checkpoint":
        tamper_checkpoint(kind, target, config["configurable"]["thread_id"], tag, payload)
    else:
        tamper_write(kind, target, config, tag, payload)
    for name, load in LOADERS.items():
        with open_saver(kind, target) as saver, pytest.raises(InvalidCheckpointError) as err:
            load(saver, config)
        message = str(err.value)
        assert attack in message or attack.replace(".", "', '") in message, (name, message)
        assert "allowed_" in message or "refused" in message.lower(), (name, message)
        assert not canary.exists(), f"{name}: the payload ran"
        assert EVIL_MODULE not in sys.modules, f"{name}: an attacker-named module was imported"


def test_the_payloads_are_real_an_unsafe_serializer_runs_them(tmp_path, canary):
    """Not a blind test: with every type allowed (LangGraph 1.2's old default) the file appears."""
    from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    target = str(tmp_path / "unsafe.sqlite")
    config = run_thread("sqlite", target, fresh_thread())
    tamper_checkpoint("sqlite", target, config["configurable"]["thread_id"], "msgpack",
                      msgpack_payloads(canary)["os.system"])
    with SqliteSaver.from_conn_string(target) as saver:
        saver.serde = JsonPlusSerializer(allowed_msgpack_modules=True)
        saver.get_tuple(config)
    assert canary.exists()


# --- fuzzing list(filter=...) ---------------------------------------------------------------------
SEED_METADATA = [
    {"source": "loop", "step": 1, "user": "alice", "score": 1.5, "flag": True, "tags": ["a", "b"],
     "nested": {"k": 1, "deep": {"z": None}}, "x') OR '1'='1": "evil", "a.b": 1, "": "empty"},
    {"source": "input", "step": -1, "user": "bob", "score": 2, "flag": False, "tags": [],
     "nested": {"k": 2}, "nullish": None, "ünï": "ü"},
    {"source": "update", "step": 3, "user": "' OR '1'='1", "parents": {}},
]
KEYS = st.one_of(st.text(max_size=10), st.sampled_from(sorted(set().union(*SEED_METADATA))))
INT64 = st.integers()  # any size: beyond 64 bits the saver must say so (ValueError)
SCALARS = st.one_of(st.none(), st.booleans(), INT64, st.floats(), st.text(max_size=10),
                    st.sampled_from(["alice", "loop", "' OR '1'='1", "evil", "ü"]))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)), max_leaves=5)


def contains(stored: Any, wanted: Any, python_numbers: bool = False) -> bool:
    """Does the stored JSON value satisfy the wanted one (equal, or JSON containment)?

    ``python_numbers``: True == 1 == 1.0 at the top level, as SQLite savers compare (LangGraph's
    too); Postgres compares JSON types strictly.
    """
    if wanted is None:
        return stored is None
    numbers = (bool, int, float)
    if python_numbers and isinstance(wanted, numbers) and isinstance(stored, numbers):
        return stored == wanted
    if isinstance(wanted, bool) or isinstance(stored, bool):
        return type(stored) is type(wanted) and stored == wanted
    if isinstance(wanted, (int, float)):
        return isinstance(stored, (int, float)) and stored == wanted
    if isinstance(wanted, dict):
        return isinstance(stored, dict) and all(
            k in stored and contains(stored[k], v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return isinstance(stored, list) and all(any(contains(s, w) for s in stored) for w in wanted)
    return stored == wanted


@pytest.fixture
def seeded(db) -> tuple[str, str, str]:
    """A thread with three checkpoints whose metadata has odd keys and every JSON type."""
    kind, target = db
    thread_id = fresh_thread()
    with open_saver(kind, target) as saver:
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for metadata in SEED_METADATA:
            checkpoint = {**empty_checkpoint(), "id": str(uuid6())}
            config = saver.put(config, checkpoint, metadata, {})
    return kind, target, thread_id


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(filter=st.dictionaries(KEYS, VALUES, max_size=3))
def test_fuzzed_filters_give_matching_rows_or_a_documented_error(seeded, filter):
    kind, target, thread_id = seeded
    with open_saver(kind, target) as saver:
        started = time.monotonic()
        try:
            found = list(saver.list({"configurable": {"thread_id": thread_id}}, filter=filter))
        except (TypeError, ValueError):
            return  # documented: a key or value the saver cannot compare, said in words
        assert time.monotonic() - started < 5, "a filter made the query slow"
    for tup in found:
        assert tup.config["configurable"]["thread_id"] == thread_id
        assert all(contains(tup.metadata.get(k), v, kind == "sqlite")
                   for k, v in filter.items()), (
            f"{filter!r} returned {tup.metadata!r}")


def test_int_beyond_64_bits_in_a_filter_gives_a_documented_error(seeded):
    """Found by the fuzzer: SQLite cannot bind such an int; say so (ValueError) or match nothing."""
    kind, target, thread_id = seeded
    with open_saver(kind, target) as saver:
        try:
            found = list(saver.list({"configurable": {"thread_id": thread_id}},
                                    filter={"step": 2**64}))
        except (TypeError, ValueError):
            return
    assert found == []
