"""Values and classes for the serializer tests, in an importable module so that both our
serializer and LangGraph's can find the classes by (module, name) when decoding."""

from __future__ import annotations

import dataclasses
import pathlib
import re
from collections import deque, namedtuple
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from enum import Enum, IntEnum
from ipaddress import (
    IPv4Address,
    IPv4Interface,
    IPv4Network,
    IPv6Address,
    IPv6Interface,
    IPv6Network,
)
from typing import Annotated, Any, NamedTuple, Optional, TypedDict
from uuid import UUID
from zoneinfo import ZoneInfo

import numpy as np
import pydantic
import pydantic.v1


class Color(Enum):
    RED = "red"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Point:
    x: int
    y: int


@dataclasses.dataclass
class Shape:
    name: str
    points: list[Point]
    created: datetime
    color: Color = Color.RED


class Pair(NamedTuple):
    left: Any
    right: Any


OldPair = namedtuple("OldPair", "a b")


class Address(pydantic.BaseModel):
    city: str
    since: date


class Person(pydantic.BaseModel):
    name: str
    tags: set[str]
    address: Address
    nicknames: list[str] = []


class LegacyPerson(pydantic.v1.BaseModel):
    name: str
    age: int


class Note(pydantic.BaseModel):
    text: str
    secret: pydantic.SecretStr


class CorpusState(TypedDict):
    """A state schema naming every class in the corpus: collect_allowlist must find them all."""

    shapes: Annotated[list[Shape], "reducer metadata is ignored"]
    pair: Optional[Pair]
    old: OldPair | None
    people: dict[str, Person]
    legacy: LegacyPerson
    level: Level
    note: Note


UTC_PLUS_530 = timezone(timedelta(hours=5, minutes=30), "IST")

# name -> value; each must round-trip to an equal value (see `same` for tuples and arrays)
CORPUS: dict[str, Any] = {
    "none_in_list": [None],
    "bools": [True, False],
    "ints": [0, -1, 2**31, 2**63 - 1, 2**64 - 1, -(2**63)],
    "floats": [0.0, -1.5, 1e300, float("inf")],
    "unicode": ["", "ascii", "漢字 ✓ 🎉", "line\nbreak\x00nul"],
    "bytes_in_dict": {"b": b"\x00\xff", "ba": bytearray(b"xy")},
    "nested": {"a": [1, {"b": [2, 3, {"c": None}]}], "d": {"e": {"f": "g"}}},
    "non_str_keys": {1: "one", 2.5: "x", None: "n", (1, 2): "tuple key"},
    "tuple": (1, "two", (3, 4)),
    "set": {1, 2, 3},
    "frozenset": frozenset({"a", "b"}),
    "deque": deque([1, 2, 3]),
    "datetime_naive": datetime(2024, 1, 2, 3, 4, 5, 678),
    "datetime_utc": datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
    "datetime_offset": datetime(2024, 6, 1, 12, tzinfo=UTC_PLUS_530),
    "datetime_zoneinfo": datetime(2024, 6, 1, 12, tzinfo=ZoneInfo("Europe/Paris")),
    "date": date(1999, 12, 31),
    "time": time(23, 59, 58, 1, tzinfo=timezone.utc),
    "time_naive": time(1, 2),
    "timedelta": timedelta(days=-3, seconds=5, microseconds=7),
    "timezone": UTC_PLUS_530,
    "zoneinfo": ZoneInfo("America/New_York"),
    "uuid": UUID("0c94bc68-4d53-49b6-9c99-1e7f5284c31a"),
    "decimal": Decimal("3.14159265358979323846"),
    "path": pathlib.Path("/tmp/some/file.txt"),
    "regex": re.compile(r"a+b\d", re.IGNORECASE | re.MULTILINE),
    "ipv4": [IPv4Address("10.0.0.1"), IPv4Interface("10.0.0.1/24"), IPv4Network("10.0.0.0/8")],
    "ipv6": [IPv6Address("::1"), IPv6Interface("fe80::1/64"), IPv6Network("2001:db8::/32")],
    "enum": Color.BLUE,
    "int_enum": Level.HIGH,
    "dataclass": Point(1, 2),
    "nested_dataclass": Shape("tri", [Point(0, 0), Point(1, 0)], datetime(2020, 5, 5), Color.BLUE),
    "namedtuple": Pair(Point(1, 1), [1, 2]),
    "collections_namedtuple": OldPair(1, "b"),
    "pydantic_v2": Person(
        name="ann", tags={"x"}, address=Address(city="Oslo", since=date(2001, 2, 3))
    ),
    "pydantic_v1": LegacyPerson(name="bob", age=42),
    "secret": Note(text="t", secret=pydantic.SecretStr("hunter2")),
    "exception": ValueError("boom"),
    "numpy_int": np.arange(6, dtype=np.int64),
    "numpy_2d_float32": np.arange(12, dtype=np.float32).reshape(3, 4),
    "numpy_fortran": np.asfortranarray(np.arange(6).reshape(2, 3)),
    "numpy_strided": np.arange(20)[::3],
    "numpy_bool": np.array([True, False]),
    "mixed": {"when": date(2020, 1, 1), "who": [Point(3, 4)], "ids": {UUID(int=5)}, "c": Color.RED},
}

# what a value comes back as, where that is not the value itself (msgpack has no tuples)
EXPECTED: dict[str, Any] = {
    "tuple": [1, "two", [3, 4]],
    "bytes_in_dict": {"b": b"\x00\xff", "ba": b"xy"},  # a nested bytearray comes back as bytes
    "exception": "ValueError('boom')",
    "namedtuple": Pair(Point(1, 1), [1, 2]),
}


def expected(name: str) -> Any:
    return EXPECTED.get(name, CORPUS[name])


def same(a: Any, b: Any) -> bool:
    """Deep equality that also compares numpy arrays (dtype, shape, order-independent values)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(np.array_equal(a, b))
        )
    if isinstance(a, re.Pattern):
        return isinstance(b, re.Pattern) and (a.pattern, a.flags) == (b.pattern, b.flags)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


class Canary:
    """A class whose construction would create a file: proof that it was (not) built."""

    def __init__(self, path: str) -> None:
        pathlib.Path(path).touch()
