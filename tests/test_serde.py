"""JsonPlusSerializer: round trips, and byte-for-byte agreement with LangGraph's serializer."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, ForwardRef, Literal, Optional, TypedDict, Union
from zoneinfo import ZoneInfo

import langgraph.types as lg_types
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.serde import jsonplus as lg_jsonplus
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer as LangGraphSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

import lgcheckpoint.types as our_types
from lgcheckpoint.checkpoint.serde import msgpack_ext
from lgcheckpoint.checkpoint.serde.allowlist import collect_allowlist
from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.checkpoint.serde.types import DeltaSnapshot, Opaque
from lgcheckpoint.errors import InvalidCheckpointError, UnsafeTypeError
from tests.serde_corpus import CORPUS, Color, CorpusState, Point, expected, same

ALLOW = collect_allowlist(CorpusState)
OURS = JsonPlusSerializer(allowed_msgpack_modules=ALLOW)
THEIRS = LangGraphSerializer(allowed_msgpack_modules=list(ALLOW))  # strict + the test classes


@pytest.fixture(autouse=True)
def _quiet_langgraph_warnings(caplog):
    caplog.set_level(logging.ERROR, logger="langgraph.checkpoint.serde.jsonplus")


# --- the corpus: ours <-> ours, ours <-> LangGraph ----------------------------------------


@pytest.mark.parametrize("name", CORPUS)
def test_round_trip(name):
    assert same(OURS.loads_typed(OURS.dumps_typed(CORPUS[name])), expected(name))


@pytest.mark.parametrize("name", CORPUS)
def test_same_bytes_as_langgraph(name):
    assert OURS.dumps_typed(CORPUS[name]) == THEIRS.dumps_typed(CORPUS[name])


@pytest.mark.parametrize("name", CORPUS)
def test_we_read_what_langgraph_wrote(name):
    assert same(OURS.loads_typed(THEIRS.dumps_typed(CORPUS[name])), expected(name))


@pytest.mark.parametrize("name", CORPUS)
def test_langgraph_reads_what_we_wrote(name):
    assert same(THEIRS.loads_typed(OURS.dumps_typed(CORPUS[name])), expected(name))


@pytest.mark.parametrize("value", [None, b"\x00raw", bytearray(b"ba"), "s", 7, [1], {"a": 1}])
def test_top_level_tags_match_langgraph(value):
    ours = OURS.dumps_typed(value)
    assert ours == THEIRS.dumps_typed(value)
    assert ours[0] == {type(None): "null", bytes: "bytes", bytearray: "bytearray"}.get(
        type(value), "msgpack"
    )
    assert OURS.loads_typed(ours) == value and type(OURS.loads_typed(ours)) is type(value)


def test_extension_codes_are_langgraphs():
    names = [n for n in dir(msgpack_ext) if n.startswith("EXT_") and n != "EXT_CODES"]
    assert len(names) == 8 == len(msgpack_ext.EXT_CODES)
    assert {n: getattr(msgpack_ext, n) for n in names} == {
        n: getattr(lg_jsonplus, n) for n in names
    }


# --- what cannot be encoded ---------------------------------------------------------------


class Plain:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, Plain) and other.v == self.v


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, Plain(1)])
def test_unencodable_raises_like_langgraph_or_pickles_on_request(value):
    with pytest.raises(TypeError, match="pickle_fallback=True"):
        OURS.dumps_typed(value)
    with pytest.raises(TypeError):
        THEIRS.dumps_typed(value)
    ours = JsonPlusSerializer(pickle_fallback=True)
    typed = ours.dumps_typed(value)
    assert typed == LangGraphSerializer(pickle_fallback=True).dumps_typed(value)
    assert typed[0] == "pickle" and ours.loads_typed(typed) == value


# --- our runtime types are stored under LangGraph's names ----------------------------------


RUNTIME_PAIRS = [
    (our_types.Send("node", {"x": 1}), lg_types.Send("node", {"x": 1})),
    (
        our_types.Interrupt("question?", "abc123"),
        lg_types.Interrupt(value="question?", id="abc123"),
    ),
    (our_types.Command(resume={"a": 1}, goto="n"), lg_types.Command(resume={"a": 1}, goto="n")),
    (our_types.Overwrite([1, 2]), lg_types.Overwrite([1, 2])),
]


@pytest.mark.parametrize("ours,theirs", RUNTIME_PAIRS, ids=lambda v: type(v).__name__)
def test_runtime_types_match_langgraph(ours, theirs):
    default = JsonPlusSerializer()  # no allow-list needed for the runtime's own types
    assert default.dumps_typed(ours) == THEIRS.dumps_typed(theirs)
    assert default.loads_typed(THEIRS.dumps_typed(theirs)) == ours
    assert THEIRS.loads_typed(default.dumps_typed(ours)) == theirs


def test_delta_snapshot_extension_matches_langgraph():
    theirs = THEIRS.dumps_typed(_DeltaSnapshot({"k": [1, 2]}))
    assert OURS.dumps_typed(DeltaSnapshot({"k": [1, 2]})) == theirs
    assert OURS.loads_typed(theirs) == DeltaSnapshot({"k": [1, 2]})


# --- LangChain messages: encoded as pydantic models; LangGraph's safe list built by default ----


MESSAGES = [HumanMessage(content="hi", id="1"), AIMessage(content="yo", id="2", tool_calls=[])]


class UnlistedMessage(HumanMessage):
    """A message class that LangGraph's safe list does not name (a user's own subclass)."""


UNLISTED = [UnlistedMessage(content="hi", id="1")]


def test_langchain_messages_same_bytes_and_built_only_when_allowed():
    default = JsonPlusSerializer()
    blob = THEIRS.dumps_typed(MESSAGES)
    assert default.dumps_typed(MESSAGES) == blob
    assert default.loads_typed(blob) == MESSAGES  # on LangGraph's safe list, as in LangGraph
    unlisted = THEIRS.dumps_typed(UNLISTED)
    assert default.dumps_typed(UNLISTED) == unlisted
    with pytest.raises(UnsafeTypeError, match=r"tests\.test_serde\.UnlistedMessage"):
        default.loads_typed(unlisted)
    allowed = default.with_msgpack_allowlist(collect_allowlist(list[BaseMessage]))
    assert allowed.loads_typed(unlisted) == UNLISTED


def test_inspect_mode_returns_opaque_and_writes_it_back_unchanged():
    blob = THEIRS.dumps_typed({"messages": UNLISTED})
    seen = JsonPlusSerializer(inspect=True).loads_typed(blob)
    first = seen["messages"][0]
    assert isinstance(first, Opaque) and (first.module, first.name) == (
        "tests.test_serde",
        "UnlistedMessage",
    )
    assert first.data["content"] == "hi" and "0x" not in repr(first)
    assert repr(first).startswith("Opaque(tests.test_serde.UnlistedMessage, {")
    assert JsonPlusSerializer().dumps_typed(seen) == blob  # viewers can copy what they cannot build


def test_package_imports_neither_langchain_nor_langgraph():
    code = (
        "import sys, lgcheckpoint.checkpoint.serde.jsonplus as j; "
        "j.JsonPlusSerializer().loads_typed(j.JsonPlusSerializer().dumps_typed({'a': 1})); "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('langchain_core', 'langgraph')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd="/")


# --- allow-lists -------------------------------------------------------------------------


def test_allowlist_is_required_for_user_classes_and_clones_are_independent():
    blob = OURS.dumps_typed(Point(1, 2))
    strict = JsonPlusSerializer()
    with pytest.raises(UnsafeTypeError) as err:
        strict.loads_typed(blob)
    assert "allowed_msgpack_modules=[('tests.serde_corpus', 'Point')]" in str(err.value)
    wider = strict.with_msgpack_allowlist([Point])
    assert wider is not strict and wider.loads_typed(blob) == Point(1, 2)
    with pytest.raises(UnsafeTypeError):
        strict.loads_typed(blob)  # the original is unchanged
    assert wider.with_msgpack_allowlist([("tests.serde_corpus", "Point")]) is wider  # nothing new
    everything = JsonPlusSerializer(allowed_msgpack_modules=True)
    assert everything.with_msgpack_allowlist([Point]) is everything
    assert everything.loads_typed(blob) == Point(1, 2)


def test_a_subclass_whose_init_takes_no_arguments_widens_its_allowlist():
    class Custom(JsonPlusSerializer):
        def __init__(self) -> None:
            super().__init__(inspect=True)

    blob = OURS.dumps_typed(Point(1, 2))
    strict = Custom()
    wider = strict.with_msgpack_allowlist([Point])
    assert type(wider) is Custom and wider is not strict and wider.inspect
    assert wider.loads_typed(blob) == Point(1, 2)
    assert type(strict.loads_typed(blob)).__name__ == "Opaque"  # the original is unchanged


def test_bad_allowlist_entry_is_a_clear_error():
    with pytest.raises(TypeError, match="'module', 'Name'"):
        JsonPlusSerializer(allowed_msgpack_modules=["tests.serde_corpus.Point"])


class Inner(pydantic.BaseModel):
    n: int


@dataclass
class Holder:
    inner: Inner
    maybe: Optional["Point"]


class Schema(TypedDict):
    a: Union[Holder, int]
    b: Literal["x", "y"]
    c: Any
    d: dict[str, list[tuple[Point, ...]]]
    e: "Inner | None"


def test_collect_allowlist_walks_nested_schema():
    found = collect_allowlist(Schema)
    assert found == {(__name__, "Holder"), (__name__, "Inner"), ("tests.serde_corpus", "Point")}


def test_collect_allowlist_finds_subclasses_of_a_declared_base():
    found = collect_allowlist(list[BaseMessage])
    assert ("langchain_core.messages.human", "HumanMessage") in found
    assert ("langchain_core.messages.ai", "AIMessage") in found
    assert ("langchain_core.messages.modifier", "RemoveMessage") in found  # add_messages writes it
    assert not any(name in ("UsageMetadata", "ToolCall") for _, name in found)  # TypedDicts: dicts


def test_collect_allowlist_survives_unresolvable_forward_refs():
    @dataclass
    class Broken:
        p: Point
        q: "DoesNotExist"  # noqa: F821

    assert collect_allowlist(Broken) >= {(__name__, "Broken"), ("tests.serde_corpus", "Point")}
    assert collect_allowlist(ForwardRef("X")) == set()


# --- legacy "json" tag ---------------------------------------------------------------------


def lc2(module: str, name: str, **rest: Any) -> dict:
    return {"lc": 2, "type": "constructor", "id": [*module.split("."), name], **rest}


LEGACY = [
    (lc2("uuid", "UUID", args=["0c94bc684d5349b69c991e7f5284c31a"]), CORPUS["uuid"]),
    (lc2("builtins", "set", args=[[1, 2]]), {1, 2}),
    (lc2("decimal", "Decimal", args=["1.5"]), CORPUS["decimal"].__class__("1.5")),
    (
        {"outer": [lc2("datetime", "date", args=[2020, 1, 2])]},
        {"outer": [CORPUS["date"].replace(2020, 1, 2)]},
    ),
    (lc2("tests.serde_corpus", "Point", kwargs={"x": 1, "y": 2}), Point(1, 2)),
]


@pytest.mark.parametrize("record,value", LEGACY)
def test_legacy_json_decodes_like_langgraph(record, value):
    blob = ("json", json.dumps(record).encode())
    ours = JsonPlusSerializer(allowed_json_modules=[("tests", "serde_corpus", "Point")])
    theirs = LangGraphSerializer(allowed_json_modules=[("tests", "serde_corpus", "Point")])
    assert ours.loads_typed(blob) == value == theirs.loads_typed(blob)


def test_legacy_json_pydantic_and_datetime_methods():
    ours = JsonPlusSerializer(
        allowed_json_modules=[(__name__.split(".")[0], __name__.split(".")[1], "Inner")]
    )
    model = lc2(__name__, "Inner", kwargs={"n": 3}, method=[None, "model_construct"])
    assert ours.loads_typed(("json", json.dumps(model).encode())) == Inner(n=3)
    stamp = lc2("datetime", "datetime", method="fromisoformat", args=["2024-01-02T03:04:05"])
    blob = ("json", json.dumps(stamp).encode())
    assert ours.loads_typed(blob) == CORPUS["datetime_naive"].replace(microsecond=0)
    assert (
        LangGraphSerializer().loads_typed(blob) is None
    )  # LangGraph 1.2 ignores `method` and loses it


def test_legacy_json_langchain_objects_need_inspect_mode():
    record = {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "HumanMessage"],
        "kwargs": {"content": "hi"},
    }
    blob = ("json", json.dumps({"messages": [record]}).encode())
    with pytest.raises(UnsafeTypeError, match="LangChain object"):
        JsonPlusSerializer().loads_typed(blob)
    seen = JsonPlusSerializer(inspect=True).loads_typed(blob)
    assert seen == {
        "messages": [Opaque("langchain.schema.messages", "HumanMessage", {"content": "hi"})]
    }


@pytest.mark.parametrize(
    "blob",
    [
        ("json", b"{not json"),
        ("json", b"\xff\xfe"),
        ("msgpack", b"\xc1"),
        ("nope", b""),
        ("msgpack", "text, not bytes"),
    ],
)
def test_corrupt_or_unknown_data_is_a_clear_error(blob):
    with pytest.raises(InvalidCheckpointError):
        JsonPlusSerializer().loads_typed(blob)


def test_allowed_type_with_bad_arguments_is_a_clear_error():
    blob = (
        "msgpack",
        msgpack_ext.pack(
            __import__("ormsgpack").Ext(1, msgpack_ext.pack(("datetime", "date", (2024, 13, 1))))
        ),
    )
    with pytest.raises(InvalidCheckpointError, match=r"datetime\.date .*month must be in 1\.\.12"):
        JsonPlusSerializer().loads_typed(blob)
    assert JsonPlusSerializer(inspect=True).loads_typed(blob) == Opaque(
        "datetime", "date", [2024, 13, 1], 1
    )


# --- property: any nested value of supported types agrees with LangGraph -------------------

fixed_offsets = st.builds(timezone, st.timedeltas(timedelta(hours=-23), timedelta(hours=23)))
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
    | st.binary(max_size=20)
    | st.datetimes(timezones=st.none() | st.timezones() | fixed_offsets)
    | st.dates()
    | st.times()
    | st.timedeltas()
    | st.uuids()
    | st.decimals(allow_nan=False)
    | st.sets(st.integers(-5, 5), max_size=3)
    | st.builds(Point, st.integers(-(2**63), 2**63), st.integers(-5, 5))
    | st.sampled_from(list(Color))
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(value=values)
def test_property_same_bytes_and_round_trip(value):
    typed = OURS.dumps_typed(value)
    assert typed == THEIRS.dumps_typed(value)
    assert OURS.loads_typed(typed) == THEIRS.loads_typed(typed)
    assert OURS.loads_typed(typed) == value or has_ambiguous_local_time(value)


def has_ambiguous_local_time(value: Any) -> bool:
    """A zone-local time in a DST overlap: stored as offset, it compares unequal (PEP 495)."""
    if isinstance(value, datetime) and isinstance(value.tzinfo, ZoneInfo):
        return value.replace(fold=1 - value.fold).utcoffset() != value.utcoffset()
    if isinstance(value, dict):
        value = list(value.values())
    return isinstance(value, list) and any(has_ambiguous_local_time(v) for v in value)


def test_zone_local_datetimes_keep_the_instant_but_not_the_zone_like_langgraph():
    stamp = datetime(2024, 11, 3, 1, 30, fold=1, tzinfo=ZoneInfo("America/New_York"))  # 2nd 1:30
    back = OURS.loads_typed(OURS.dumps_typed(stamp))
    assert back == THEIRS.loads_typed(THEIRS.dumps_typed(stamp))
    assert back.utcoffset() == stamp.utcoffset() and back.tzinfo == timezone(timedelta(hours=-5))
