"""A tampered checkpoint must not run code: every payload below would create a file if obeyed.

Each test checks both halves: the clear error (or inert Opaque in inspect mode) AND that the
file does not exist. One test documents that LangGraph 1.2's default serializer does run it.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import sys
import tempfile
from pathlib import Path

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer as LangGraphSerializer

from lgcheckpoint.checkpoint.serde.jsonplus import TAGS, JsonPlusSerializer
from lgcheckpoint.errors import InvalidCheckpointError, UnsafeTypeError
from tests.serde_corpus import CORPUS, CorpusState, Point

DOCUMENTED_ERRORS = (
    InvalidCheckpointError,
)  # the only family loads_typed may raise (UnsafeTypeError is one)
EVIL_MODULE = "evil_canary_mod"  # importing it creates the canary file


def ext(code: int, *payload) -> bytes:
    """A msgpack blob holding one extension value, as a tampered database would."""
    return ormsgpack.packb(ormsgpack.Ext(code, ormsgpack.packb(payload)))


def msgpack_attacks(canary: Path) -> dict[str, tuple[str, bytes]]:
    cmd, py = f"touch {canary}", f"__import__('pathlib').Path({str(canary)!r}).touch()"
    return {
        "os.system": ("msgpack", ext(0, "os", "system", cmd)),
        "subprocess.Popen": ("msgpack", ext(1, "subprocess", "Popen", [["sh", "-c", cmd]])),
        "subprocess.run": ("msgpack", ext(1, "subprocess", "run", [["sh", "-c", cmd]])),
        "builtins.eval": ("msgpack", ext(0, "builtins", "eval", py)),
        "builtins.exec": ("msgpack", ext(0, "builtins", "exec", py)),
        "importlib.import_module": ("msgpack", ext(0, "importlib", "import_module", EVIL_MODULE)),
        f"{EVIL_MODULE}.Anything": ("msgpack", ext(2, EVIL_MODULE, "Anything", {})),
        "tests.serde_corpus.Canary": (
            "msgpack",
            ext(2, "tests.serde_corpus", "Canary", {"path": str(canary)}),
        ),
        "os.system (pydantic v2 code)": ("msgpack", ext(5, "os", "system", {"command": cmd}, "x")),
        "os.system (pydantic v1 code)": ("msgpack", ext(4, "os", "system", {"command": cmd})),
        "os.system.__call__ (method code)": ("msgpack", ext(3, "os", "system", cmd, "__call__")),
        "os.system (nested in state)": (
            "msgpack",
            ormsgpack.packb({"a": [1, ormsgpack.Ext(0, ormsgpack.packb(("os", "system", cmd)))]}),
        ),
    }


def json_attacks(canary: Path) -> dict[str, tuple[str, bytes]]:
    cmd = f"touch {canary}"
    record = {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": [cmd]}
    popen = {
        "lc": 2,
        "type": "constructor",
        "id": ["subprocess", "Popen"],
        "args": [["sh", "-c", cmd]],
    }
    via_method = {
        "lc": 2,
        "type": "constructor",
        "id": ["datetime", "datetime"],
        "method": "__init_subclass__",
    }
    return {
        "os.system (json)": ("json", json.dumps(record).encode()),
        "subprocess.Popen (json, nested)": ("json", json.dumps({"state": [popen]}).encode()),
        "datetime.datetime.__init_subclass__ (json method)": (
            "json",
            json.dumps(via_method).encode(),
        ),
    }


class _Boom:
    """Pickles into a call of os.system (the classic pickle exploit)."""

    def __init__(self, cmd: str) -> None:
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


@pytest.fixture
def canary(tmp_path, monkeypatch):
    """A path that any executed payload would create; and an importable module that creates it."""
    target = tmp_path / "pwned"
    (tmp_path / f"{EVIL_MODULE}.py").write_text(
        f"import pathlib\npathlib.Path({str(target)!r}).touch()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield target
    sys.modules.pop(EVIL_MODULE, None)


def all_attacks(canary: Path) -> dict[str, tuple[str, bytes]]:
    pickled = ("pickle", pickle.dumps(_Boom(f"touch {canary}")))
    return {**msgpack_attacks(canary), **json_attacks(canary), "pickle os.system": pickled}


ATTACK_NAMES = list(all_attacks(Path("/x")))
STRICT_SERIALIZERS = {
    "default": JsonPlusSerializer(),
    "with schema allow-list": JsonPlusSerializer().with_msgpack_allowlist(
        [Point, ("uuid", "UUID")]
    ),
}


@pytest.mark.lesson("06_serializer_security")
@pytest.mark.parametrize("serializer", STRICT_SERIALIZERS, ids=str)
@pytest.mark.parametrize("attack", ATTACK_NAMES)
def test_attack_is_refused_and_nothing_runs(attack, serializer, canary):
    blob = all_attacks(canary)[attack]
    with pytest.raises(UnsafeTypeError) as err:
        STRICT_SERIALIZERS[serializer].loads_typed(blob)
    assert not canary.exists(), "the payload ran"
    assert EVIL_MODULE not in sys.modules, "an attacker-named module was imported"
    message = str(err.value)
    if blob[0] == "pickle":
        assert "pickle_fallback=True" in message
        return
    assert attack.split()[0] in message  # names what was refused
    if blob[0] == "msgpack" and "method" not in attack:  # and the exact entry that would allow it
        module, _, name = attack.split()[0].rpartition(".")
        assert f"allowed_msgpack_modules=[{(module, name)!r}]" in message


@pytest.mark.lesson("06_serializer_security")
@pytest.mark.parametrize("attack", ATTACK_NAMES)
def test_inspect_mode_shows_attack_as_inert_data(attack, canary):
    seen = JsonPlusSerializer(inspect=True).loads_typed(all_attacks(canary)[attack])
    assert not canary.exists() and EVIL_MODULE not in sys.modules
    flat = repr(seen)
    assert "Opaque(" in flat and "0x" not in flat


def test_langgraph_default_serializer_runs_the_os_system_payload(canary, caplog):
    """Documents LangGraph 1.2's behaviour (the reason we are stricter): its default builds it."""
    caplog.set_level(logging.ERROR)
    result = LangGraphSerializer().loads_typed(all_attacks(canary)["os.system"])
    assert canary.exists() and result == 0  # os.system's exit status came back as the value


def test_langgraph_default_serializer_imports_an_attacker_named_module(canary, caplog):
    caplog.set_level(logging.ERROR)
    LangGraphSerializer().loads_typed(all_attacks(canary)[f"{EVIL_MODULE}.Anything"])
    assert canary.exists()


def test_permissive_mode_is_explicitly_unsafe(canary):
    """allowed_msgpack_modules=True is LangGraph's old behaviour: only for trusted databases."""
    JsonPlusSerializer(allowed_msgpack_modules=True).loads_typed(
        all_attacks(canary)["tests.serde_corpus.Canary"]
    )
    assert canary.exists()


# --- fuzzing: random tags and bytes, random extension payloads, mutated real blobs ----------

FUZZ_DIR = Path(tempfile.mkdtemp(prefix="serde-fuzz-"))
FUZZ_CANARY = FUZZ_DIR / "pwned"
SERIALIZERS = [
    JsonPlusSerializer(),
    JsonPlusSerializer(inspect=True),
    JsonPlusSerializer(
        allowed_msgpack_modules=[Point]
    ),  # (never Canary: building it is allowed to run)
]
FUZZ_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
MODULES = [
    "os",
    "subprocess",
    "builtins",
    "importlib",
    "datetime",
    "uuid",
    "decimal",
    "re",
    "pathlib",
    "zoneinfo",
    "collections",
    "ipaddress",
    "langgraph.types",
    "tests.serde_corpus",
    EVIL_MODULE,
]
NAMES = [
    "system",
    "Popen",
    "run",
    "eval",
    "exec",
    "import_module",
    "datetime",
    "date",
    "time",
    "UUID",
    "Decimal",
    "compile",
    "Path",
    "ZoneInfo",
    "deque",
    "set",
    "IPv4Address",
    "Send",
    "Interrupt",
    "Canary",
    "Point",
    "fromisoformat",
    "__call__",
]
leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.text(max_size=12)
    | st.binary(max_size=12)
)
data = st.recursive(
    leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=10,
)
# command-like strings aimed at the canary, so that any executed payload leaves a trace
commands = st.sampled_from(
    [f"touch {FUZZ_CANARY}", str(FUZZ_CANARY), f"__import__('os').system('touch {FUZZ_CANARY}')"]
)


def check_loads(serializer: JsonPlusSerializer, blob) -> None:
    """Decoding may succeed or raise a documented error; nothing else, and nothing runs."""
    try:
        serializer.loads_typed(blob)
    except DOCUMENTED_ERRORS:
        pass
    assert not FUZZ_CANARY.exists() and EVIL_MODULE not in sys.modules


@FUZZ_SETTINGS
@given(
    tag=st.sampled_from(TAGS) | st.text(max_size=8),
    payload=st.binary(max_size=200),
    which=st.integers(0, 2),
)
def test_fuzz_random_tags_and_bytes(tag, payload, which):
    check_loads(SERIALIZERS[which], (tag, payload))


@FUZZ_SETTINGS
@given(
    code=st.integers(0, 9),
    module=st.sampled_from(MODULES),
    name=st.sampled_from(NAMES),
    arg=data | commands,
    extra=st.lists(data | st.sampled_from(NAMES), max_size=2),
    which=st.integers(0, 2),
)
def test_fuzz_extension_payloads(code, module, name, arg, extra, which):
    check_loads(SERIALIZERS[which], ("msgpack", ext(code, module, name, arg, *extra)))


@FUZZ_SETTINGS
@given(
    case=st.sampled_from(sorted(CORPUS)),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
    which=st.integers(0, 2),
)
def test_fuzz_mutated_real_blobs(case, flips, which):
    from lgcheckpoint.checkpoint.serde.allowlist import collect_allowlist

    tag, blob = JsonPlusSerializer().dumps_typed(CORPUS[case])
    mutated = bytearray(blob)
    for at, byte in flips:
        if mutated:
            mutated[at % len(mutated)] = byte
    check_loads(
        SERIALIZERS[which].with_msgpack_allowlist(collect_allowlist(CorpusState)),
        (tag, bytes(mutated)),
    )


@FUZZ_SETTINGS
@given(
    ident=st.lists(st.sampled_from(MODULES + NAMES), min_size=0, max_size=4),
    lc=st.sampled_from([1, 2, 3]),
    args=st.lists(data | commands, max_size=2),
    method=st.none()
    | st.sampled_from(NAMES)
    | st.lists(st.none() | st.sampled_from(NAMES), max_size=2),
    which=st.integers(0, 2),
)
def test_fuzz_legacy_json_records(ident, lc, args, method, which):
    record = {"lc": lc, "type": "constructor", "id": ident, "args": args, "method": method}
    check_loads(SERIALIZERS[which], ("json", json.dumps({"v": [record]}, default=repr).encode()))
