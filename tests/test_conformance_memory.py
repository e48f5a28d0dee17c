"""InMemorySaver: LangGraph's public conformance suite (all 8 capabilities, every test), then the
storage layout and housekeeping rules the suite does not check."""

import sys
import threading

import pytest

from lgcheckpoint.checkpoint.base import BaseCheckpointSaver, empty_checkpoint, get_checkpoint_id
from lgcheckpoint.checkpoint.memory import InMemorySaver
from tests.conformance_helpers import run_conformance


async def fresh_memory_saver():
    with InMemorySaver() as saver:
        yield saver


@pytest.mark.lesson("13_write_your_own_saver")
async def test_in_memory_saver_is_fully_conformant():
    report = await run_conformance("lgcheckpoint InMemorySaver", fresh_memory_saver)
    assert report.conformance_level() == "FULL"


class OnlyInherits(InMemorySaver):
    """A saver that forgets prune: it inherits the base's default instead."""

    prune = BaseCheckpointSaver.prune
    aprune = BaseCheckpointSaver.aprune


@pytest.mark.lesson("13_write_your_own_saver")
async def test_harness_rejects_a_saver_missing_a_capability():
    async def factory():
        yield OnlyInherits()

    with pytest.raises(AssertionError, match="prune: no implementation"):
        await run_conformance("incomplete", factory)


# --- beyond the public suite: the storage layout and the housekeeping rules -------------------
def put_chain(saver, thread_id="t", ns="", n=3, run_id="r"):
    """n checkpoints, each the child of the previous; channel "a" changes every step, "b" never."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
    configs, a = [], None
    for step in range(n):
        a = saver.get_next_version(a)
        cp = empty_checkpoint()
        versions = {"a": a, "b": "00000000000000000000000000000001.0.5"}
        cp.update(channel_values={"a": step, "b": "same"}, channel_versions=versions)
        new = versions if step == 0 else {"a": a}
        metadata = {"source": "loop", "step": step, "run_id": f"{run_id}{step}"}
        config = saver.put(config, cp, metadata, new)
        saver.put_writes(config, [("a", step + 1)], f"task{step}")
        configs.append(config)
    return configs


def test_records_kept_as_plain_tuples_read_the_same():
    """LangGraph's InMemorySaver stores plain tuples (and its tests write them by hand); ours are
    NamedTuples of the same shape read by position, so either reads the same."""
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    for step in range(3):
        checkpoint = {**empty_checkpoint(), "channel_values": {"x": step},
                      "channel_versions": {"x": saver.get_next_version(step or None)}}
        config = saver.put(config, checkpoint, {"step": step}, checkpoint["channel_versions"])
        saver.put_writes(config, [("x", step + 10), ("y", "w")], f"task-{step}", f"p{step}")
    before = list(saver.list({"configurable": {"thread_id": "t"}}))
    history = saver.get_delta_channel_history(config=config, channels=["x", "y"])
    for checkpoints in saver.storage["t"].values():
        checkpoints.update({i: tuple(saved) for i, saved in checkpoints.items()})
    for writes in saver.writes.values():
        writes.update({key: tuple(write) for key, write in writes.items()})
    assert type(saver.storage["t"][""][get_checkpoint_id(config)]) is tuple
    assert list(saver.list({"configurable": {"thread_id": "t"}})) == before
    assert saver.get_delta_channel_history(config=config, channels=["x", "y"]) == history
    assert history["y"]["writes"] == [("task-0", "y", "w"), ("task-1", "y", "w")]


def test_an_unchanged_channel_is_stored_once():
    saver = InMemorySaver()
    put_chain(saver, n=4)
    assert sorted(ch for (_, _, ch, _) in saver.blobs) == ["a"] * 4 + ["b"]
    assert all(t.checkpoint["channel_values"]["b"] == "same" for t in saver.list(None))


def test_a_channel_without_a_value_is_stored_as_empty_and_not_loaded():
    saver = InMemorySaver()
    cp = empty_checkpoint()
    cp["channel_versions"] = {"gone": 2}
    saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, cp, {}, {"gone": 2})
    assert saver.blobs[("t", "", "gone", 2)] == ("empty", b"")
    assert saver.get_tuple({"configurable": {"thread_id": "t"}}).checkpoint["channel_values"] == {}


def test_the_saved_checkpoint_is_a_copy():
    saver = InMemorySaver()
    cp = empty_checkpoint()
    cp.update(channel_values={"a": [1]}, channel_versions={"a": 1})
    saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, cp, {}, {"a": 1})
    cp["channel_values"]["a"].append(2)
    cp["channel_versions"]["a"] = 2
    loaded = saver.get_tuple({"configurable": {"thread_id": "t"}}).checkpoint
    assert loaded["channel_values"] == {"a": [1]} and loaded["channel_versions"] == {"a": 1}
    assert "channel_values" in cp  # the caller's dict is left whole


def test_latest_follows_the_largest_id_even_when_put_out_of_order():
    saver = InMemorySaver()
    early, late = empty_checkpoint(), empty_checkpoint()
    base = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    saver.put(base, late, {}, {})
    saver.put(base, early, {}, {})
    assert saver.get_tuple(base).checkpoint["id"] == late["id"]
    assert [t.checkpoint["id"] for t in saver.list(base)] == [late["id"], early["id"]]


def test_prune_keep_latest_drops_old_writes_and_blobs_and_orphans_the_survivor():
    saver = InMemorySaver()
    configs = put_chain(saver, n=3)
    saver.prune(["t"])
    (kept,) = saver.list(None)
    assert kept.config == configs[-1] and kept.parent_config is None
    assert kept.checkpoint["channel_values"] == {"a": 2, "b": "same"}
    assert kept.pending_writes == [("task2", "a", 3)]
    assert len(saver.writes) == 1 and len(saver.blobs) == 2  # latest "a" and the shared "b"


def test_prune_delete_and_delete_thread_leave_nothing_behind():
    saver = InMemorySaver()
    put_chain(saver, "t1", n=2), put_chain(saver, "t1", "sub:1", n=2), put_chain(saver, "t2", n=1)
    saver.prune(["t1"], strategy="delete")
    saver.delete_thread("t2")
    assert not saver.storage and not saver.writes and not saver.blobs
    assert saver.get_tuple({"configurable": {"thread_id": "t1"}}) is None


def test_delete_for_runs_removes_checkpoints_writes_and_unused_blobs():
    saver = InMemorySaver()
    configs = put_chain(saver, n=3)
    saver.delete_for_runs(["r1"])
    assert [t.config for t in saver.list(None)] == [configs[2], configs[0]]
    assert saver.get_tuple(configs[2]).parent_config is None  # its parent r1 is gone
    assert ("t", "", configs[1]["configurable"]["checkpoint_id"]) not in saver.writes
    assert len(saver.blobs) == 3  # "a" of steps 0 and 2, and "b"


def test_copy_thread_copies_every_namespace_write_and_blob():
    saver = InMemorySaver()
    put_chain(saver, "src", n=2), put_chain(saver, "src", "sub:1", n=1)
    saver.copy_thread("src", "dst")

    def view(thread_id):
        return [(t.config["configurable"]["checkpoint_ns"], t.checkpoint, t.metadata,
                 t.pending_writes, t.parent_config and get_checkpoint_id(t.parent_config))
                for t in saver.list({"configurable": {"thread_id": thread_id}})]

    assert view("dst") == view("src") and len(view("dst")) == 3
    saver.delete_thread("src")
    assert len(view("dst")) == 3 and all(k[0] == "dst" for k in saver.blobs)


def test_list_without_namespace_walks_all_namespaces_and_with_it_only_one():
    saver = InMemorySaver()
    put_chain(saver, ns="", n=2), put_chain(saver, ns="sub:1", n=1)
    assert len(list(saver.list({"configurable": {"thread_id": "t"}}))) == 3
    sub = {"configurable": {"thread_id": "t", "checkpoint_ns": "sub:1"}}
    assert len(list(saver.list(sub))) == 1
    assert len(list(saver.list({"configurable": {"thread_id": "t"}}, limit=0))) == 0


async def test_async_verbs_and_async_context_manager():
    saver = InMemorySaver()
    async with saver:
        (config,) = put_chain(saver, n=1)
        assert (await saver.aget_tuple(config)).config == config
        assert [t.config async for t in saver.alist(None)] == [config]
        await saver.aprune(["t"], strategy="delete")
        assert await saver.aget(config) is None


def test_a_value_that_cannot_be_serialized_leaves_nothing_half_written():
    class Picky:
        def dumps_typed(self, obj):
            if obj == "bad":
                raise TypeError("cannot store 'bad'")
            return "str", str(obj).encode()

        def loads_typed(self, data):
            return data[1].decode()

    saver = InMemorySaver(serde=Picky())
    cp = empty_checkpoint()
    cp.update(channel_values={"a": "good", "b": "bad"}, channel_versions={"a": 1, "b": 1})
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with pytest.raises(TypeError, match="bad"):
        saver.put(config, cp, {}, {"a": 1, "b": 1})
    written = {"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": "c"}}
    with pytest.raises(TypeError, match="bad"):
        saver.put_writes(written, [("a", "good"), ("b", "bad")], "task")
    assert not saver.blobs and not saver.storage and not saver.writes


def test_prune_keep_latest_drops_subgraph_calls_of_deleted_root_checkpoints():
    saver = InMemorySaver()
    roots = put_chain(saver, "t", "", n=3)

    def call(ns, root_config):
        cp = empty_checkpoint()
        parents = {"": get_checkpoint_id(root_config)}
        saver.put({"configurable": {"thread_id": "t", "checkpoint_ns": ns}}, cp,
                  {"source": "loop", "step": 0, "parents": parents}, {})

    call("sub:old-call", roots[0])  # started from a root checkpoint that prune deletes
    call("sub:this-call", roots[-1])  # started from the root checkpoint that stays
    call("sub:this-call", roots[-1])
    call("persistent", roots[0])  # no ":" -- a subgraph with its own lasting namespace
    call("persistent", roots[0])
    saver.prune(["t"])
    kept = {t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)}
    assert kept == {"", "sub:this-call", "persistent"}
    assert len(list(saver.list(None))) == 3


def test_threads_writing_and_pruning_at_once_keep_the_index_true():
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, to interleave them
    try:
        _write_and_prune_at_once()
    finally:
        sys.setswitchinterval(previous)


def _write_and_prune_at_once():
    saver, errors = InMemorySaver(), []

    def catching(work):
        def run(*args):
            try:
                work(*args)
            except Exception as exc:  # noqa: BLE001 - reported by the assert below
                errors.append(exc)
        return run

    def writer(thread_id):
        put_chain(saver, thread_id, n=150)

    def pruner():
        for _ in range(50):
            saver.prune([f"w{i}" for i in range(3)])

    workers = [threading.Thread(target=catching(writer), args=(f"w{i}",)) for i in range(3)]
    workers.append(threading.Thread(target=catching(pruner)))
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors
    for thread_id, namespaces in saver.storage.items():
        for checkpoints in namespaces.values():
            assert checkpoints.latest == max(checkpoints)  # the O(1) 'latest' index
            assert saver.get_tuple({"configurable": {"thread_id": thread_id}}).checkpoint["id"] \
                == max(checkpoints)
