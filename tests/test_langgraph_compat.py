"""Small compatibility points found by LangGraph's own tests, each checked against LangGraph."""

from __future__ import annotations

from typing import TypedDict

import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer as TheirSerializer
from langgraph.types import Interrupt as TheirInterrupt

from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.graph import StateGraph
from lgcheckpoint.types import Interrupt


def legacy_interrupt_json(ns: list[str]) -> bytes:
    """An Interrupt as LangGraph < 0.6 stored it in the "json" format (with ns/when/resumable)."""
    return (b'{"lc": 2, "type": "constructor", "id": ["langgraph", "types", "Interrupt"], '
            b'"kwargs": {"value": "v", "resumable": true, "ns": %s, "when": "during"}}'
            % str(ns).replace("'", '"').encode())


@pytest.mark.parametrize("ns", [["one"], ["a:b", "c:d", "e:f"]])
def test_old_interrupt_from_a_checkpoint_gets_langgraphs_id(ns):
    stored = ("json", legacy_interrupt_json(ns))
    ours = JsonPlusSerializer().loads_typed(stored)
    theirs = TheirSerializer(allowed_json_modules=True).loads_typed(stored)
    assert (ours.value, ours.id) == (theirs.value, theirs.id)


def test_old_interrupt_fields_accepted_and_the_rest_refused():
    kwargs = {"value": 1, "resumable": True, "when": "during", "ns": ["n:1"]}
    assert Interrupt(**kwargs).id == TheirInterrupt(**kwargs).id
    assert Interrupt.from_ns(2, "a|b").id == TheirInterrupt.from_ns(2, "a|b").id
    assert Interrupt(1, "given", ns=["n:1"]).id == "given"  # an explicit id wins, as in LangGraph
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['colour'\\]"):
        Interrupt(1, colour="red")


def test_state_graph_is_subscriptable_like_langgraphs():
    class State(TypedDict):
        x: int

    graph = StateGraph[State, None, State, State](State)
    assert type(graph) is StateGraph and graph.state_schema is State


def _metadata_round_trip(saver, empty_checkpoint) -> dict:
    config = {"configurable": {"thread_id": "1", "checkpoint_ns": ""}}
    metadata = {"source": "input", "step": 1, "writes": {"foo": "bar"}, "parents": {}}
    return saver.get_tuple(saver.put(config, empty_checkpoint(), metadata, {})).metadata


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
def test_user_metadata_key_writes_is_kept_like_langgraph(kind, request, tmp_path):
    """A "writes" key the caller puts in metadata is stored as LangGraph's savers store it:
    kept by memory and SQLite, dropped by Postgres."""
    from langgraph.checkpoint.base import empty_checkpoint as their_empty
    from langgraph.checkpoint.memory import InMemorySaver as TheirMemory
    from langgraph.checkpoint.postgres import PostgresSaver as TheirPostgres

    from lgcheckpoint.checkpoint.base import empty_checkpoint
    from lgcheckpoint.checkpoint.memory import InMemorySaver
    from lgcheckpoint.checkpoint.postgres import PostgresSaver
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    expected = _metadata_round_trip(TheirMemory(), their_empty)
    assert expected["writes"] == {"foo": "bar"}
    if kind == "memory":
        assert _metadata_round_trip(InMemorySaver(), empty_checkpoint) == expected
    elif kind == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "m.sqlite")) as saver:
            assert _metadata_round_trip(saver, empty_checkpoint) == expected
    else:
        uri = request.getfixturevalue("postgres_uri")
        with TheirPostgres.from_conn_string(uri) as saver:
            saver.setup()
            expected = _metadata_round_trip(saver, their_empty)
        assert "writes" not in expected
        with PostgresSaver.from_conn_string(uri) as saver:
            saver.setup()
            assert _metadata_round_trip(saver, empty_checkpoint) == expected


@pytest.mark.parametrize("gone", ["module", "class"])
def test_value_whose_class_is_gone_comes_back_as_its_fields(gone, monkeypatch, caplog):
    """Like LangGraph: an allowed stored type that no longer imports is returned as its stored
    fields (with a warning), never imported or guessed; LangGraph's own bytes read the same."""
    import dataclasses
    import sys
    import types

    @dataclasses.dataclass
    class Saved:
        value: int

    Saved.__module__, Saved.__qualname__ = "gone_module", "Saved"
    module = types.ModuleType("gone_module")
    module.Saved = Saved
    monkeypatch.setitem(sys.modules, "gone_module", module)
    allowed = [("gone_module", "Saved")]
    theirs = TheirSerializer(allowed_msgpack_modules=allowed)
    ours = JsonPlusSerializer(allowed_msgpack_modules=allowed)
    stored, their_stored = ours.dumps_typed({"s": Saved(1)}), theirs.dumps_typed({"s": Saved(1)})
    assert stored == their_stored and ours.loads_typed(stored) == {"s": Saved(1)}
    if gone == "module":
        monkeypatch.delitem(sys.modules, "gone_module")
    else:
        monkeypatch.delattr(module, "Saved")
    fresh = JsonPlusSerializer(allowed_msgpack_modules=allowed)  # nothing imported and cached
    assert fresh.loads_typed(stored) == theirs.loads_typed(stored) == {"s": {"value": 1}}
    assert "could not reconstruct gone_module.Saved" in caplog.text


def test_channels_name_their_value_and_update_types_like_langgraph():
    import operator

    from langgraph.channels import BinaryOperatorAggregate as TheirBinop
    from langgraph.channels import LastValue as TheirLastValue
    from langgraph.channels import Topic as TheirTopic

    from lgcheckpoint.channels import BinaryOperatorAggregate, LastValue, Topic

    pairs = [(Topic(str), TheirTopic(str)), (LastValue(int), TheirLastValue(int)),
             (BinaryOperatorAggregate(int, operator.add), TheirBinop(int, operator.add))]
    for ours, theirs in pairs:
        assert (ours.ValueType, ours.UpdateType) == (theirs.ValueType, theirs.UpdateType)


def test_serde_events_match_langgraphs():
    """The same listener sees the same events from both serializers (LangGraph's kinds)."""
    import uuid as uuidlib

    from langgraph.checkpoint.serde.event_hooks import (
        register_serde_event_listener as their_register,
    )
    from pydantic import BaseModel

    from lgcheckpoint.checkpoint.errors import UnsafeTypeError
    from lgcheckpoint.checkpoint.serde.event_hooks import register_serde_event_listener

    class Model(BaseModel):
        foo: str

    def events_of(register, serde_class, allowed, value):
        seen: list[dict] = []
        stop = register(seen.append)
        try:
            serde = serde_class(allowed_msgpack_modules=allowed)
            try:
                serde.loads_typed(serde.dumps_typed(value))
            except UnsafeTypeError:  # we refuse where LangGraph warns (a documented difference)
                pass
        finally:
            stop()
        return seen

    cases = [(None, Model(foo="x")), (True, Model(foo="x")), (None, uuidlib.uuid4())]
    for allowed, value in cases:
        ours = events_of(register_serde_event_listener, JsonPlusSerializer, allowed, value)
        theirs = events_of(their_register, TheirSerializer, allowed, value)
        assert ours == theirs, (allowed, value)

    def broken(event):
        raise RuntimeError("listener bug")

    stop = register_serde_event_listener(broken)
    try:
        assert events_of(register_serde_event_listener, JsonPlusSerializer, True, Model(foo="y"))
    finally:
        stop()


def test_a_class_removed_after_it_was_loaded_once_comes_back_as_fields(monkeypatch):
    """The same serializer, before and after the class's module goes away (as LangGraph)."""
    import dataclasses
    import sys
    import types

    @dataclasses.dataclass
    class Saved:
        value: int

    Saved.__module__, Saved.__qualname__ = "gone_later", "Saved"
    module = types.ModuleType("gone_later")
    module.Saved = Saved
    monkeypatch.setitem(sys.modules, "gone_later", module)
    serde = JsonPlusSerializer(allowed_msgpack_modules=[("gone_later", "Saved")])
    stored = serde.dumps_typed({"s": Saved(2)})
    assert serde.loads_typed(stored) == {"s": Saved(2)}
    monkeypatch.delitem(sys.modules, "gone_later")
    theirs = TheirSerializer(allowed_msgpack_modules=[("gone_later", "Saved")])
    assert serde.loads_typed(stored) == theirs.loads_typed(stored) == {"s": {"value": 2}}
