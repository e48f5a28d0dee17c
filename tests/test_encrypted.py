"""EncryptedSerializer stores what LangGraph's stores: each reads the other's encrypted data."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer as TheirEncrypted
from langgraph.checkpoint.sqlite import SqliteSaver as TheirSqliteSaver
from langgraph.graph import START as THEIR_START
from langgraph.graph import StateGraph as TheirStateGraph

from lgcheckpoint import START, StateGraph
from lgcheckpoint.checkpoint.serde.base import CipherProtocol
from lgcheckpoint.checkpoint.serde.encrypted import EncryptedSerializer
from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.checkpoint.sqlite import SqliteSaver

KEY = b"0123456789abcdef"
VALUES = [None, b"raw", bytearray(b"ba"), "text", 3, 2.5, {"a": [1, "x", None]}, ["t", 1]]


class State(TypedDict):
    log: Annotated[list, operator.add]


def build(graph_class, start):
    graph = graph_class(State)
    graph.add_node("a", lambda state: {"log": ["a"]})
    graph.add_edge(start, "a")
    return graph


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_each_reads_the_others_values(value):
    ours = EncryptedSerializer.from_pycryptodome_aes(key=KEY)
    theirs = TheirEncrypted.from_pycryptodome_aes(key=KEY)
    stored = ours.dumps_typed(value)
    assert stored[0].endswith("+aes") and theirs.loads_typed(stored) == value
    assert ours.loads_typed(theirs.dumps_typed(value)) == value


def test_same_layout_as_langgraph():
    ours, theirs = (cls.from_pycryptodome_aes(key=KEY) for cls in (EncryptedSerializer,
                                                                    TheirEncrypted))
    (tag, data), (their_tag, their_data) = ours.dumps_typed("x" * 40), theirs.dumps_typed("x" * 40)
    assert tag == their_tag == "msgpack+aes"
    assert len(data) == len(their_data)  # nonce 16 + tag 16 + the same plaintext length


def test_sqlite_database_written_by_langgraph_opens_in_lgcheckpoint(tmp_path):
    path, thread = str(tmp_path / "enc.sqlite"), {"configurable": {"thread_id": "t"}}
    with TheirSqliteSaver.from_conn_string(path) as saver:
        saver.serde = TheirEncrypted.from_pycryptodome_aes(key=KEY)
        build(TheirStateGraph, THEIR_START).compile(checkpointer=saver).invoke({"log": []}, thread)
    with SqliteSaver.from_conn_string(path) as saver:
        saver.serde = EncryptedSerializer.from_pycryptodome_aes(key=KEY)
        assert saver.get_tuple(thread).checkpoint["channel_values"]["log"] == ["a"]
        app = build(StateGraph, START).compile(checkpointer=saver)
        assert app.invoke({"log": ["b"]}, thread) == {"log": ["a", "b", "a"]}
    with TheirSqliteSaver.from_conn_string(path) as saver:  # and back
        saver.serde = TheirEncrypted.from_pycryptodome_aes(key=KEY)
        assert saver.get_tuple(thread).checkpoint["channel_values"]["log"] == ["a", "b", "a"]


def test_plain_data_is_read_and_the_key_must_match():
    plain = JsonPlusSerializer().dumps_typed({"k": 1})
    serde = EncryptedSerializer.from_pycryptodome_aes(key=KEY)
    assert serde.loads_typed(plain) == {"k": 1}  # written before encryption was switched on
    other = EncryptedSerializer.from_pycryptodome_aes(key=b"fedcba9876543210")
    with pytest.raises(ValueError, match="MAC check failed"):
        other.loads_typed(serde.dumps_typed({"k": 1}))


def test_key_from_environment(monkeypatch):
    monkeypatch.delenv("LANGGRAPH_AES_KEY", raising=False)
    with pytest.raises(ValueError, match="LANGGRAPH_AES_KEY environment variable is not set"):
        EncryptedSerializer.from_pycryptodome_aes()
    monkeypatch.setenv("LANGGRAPH_AES_KEY", "short")
    with pytest.raises(ValueError, match="16, 24, or 32 bytes"):
        EncryptedSerializer.from_pycryptodome_aes()
    monkeypatch.setenv("LANGGRAPH_AES_KEY", KEY.decode())
    serde = EncryptedSerializer.from_pycryptodome_aes()
    assert TheirEncrypted.from_pycryptodome_aes(key=KEY).loads_typed(serde.dumps_typed(7)) == 7


def test_any_cipher_and_the_allowlist_keeps_the_cipher():
    class Reverse(CipherProtocol):
        def encrypt(self, plaintext):
            return "rev", plaintext[::-1]

        def decrypt(self, ciphername, ciphertext):
            assert ciphername == "rev"
            return ciphertext[::-1]

    serde = EncryptedSerializer(Reverse())
    assert serde.dumps_typed("x")[0] == "msgpack+rev"
    assert serde.loads_typed(serde.dumps_typed(5)) == 5
    widened = serde.with_msgpack_allowlist([("my.module", "Thing")])
    assert isinstance(widened, EncryptedSerializer) and widened.cipher is serde.cipher
