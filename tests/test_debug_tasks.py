"""pregel/debug.py: a task event carries the caller's metadata and tags, not the runtime's.

LangGraph is compared in tests/differential/scenarios_loop.py
(task_events_carry_the_callers_metadata).
"""

from types import SimpleNamespace

from lgcheckpoint.pregel.debug import map_debug_tasks


def task(config):
    return SimpleNamespace(id="t1", name="tools", input={"x": 1}, triggers=["x"], config=config)


def test_a_task_event_keeps_the_callers_metadata_and_tags_only():
    metadata = {"agent": "mailer", "thread_id": "1", "langgraph_step": 3, "checkpoint_ns": ""}
    config = {"metadata": metadata, "tags": ["seq:step:2", "user-tag"]}
    [event] = map_debug_tasks([task(config)])
    assert event == {"id": "t1", "name": "tools", "input": {"x": 1}, "triggers": ["x"],
                     "metadata": {"agent": "mailer", "tags": ["user-tag"]}}
    metadata["agent"] = "changed later"
    assert event["metadata"]["agent"] == "mailer"  # a copy


def test_no_metadata_key_when_nothing_is_left():
    for config in (None, {}, {"metadata": {"thread_id": "1"}, "tags": ["seq:step:1"]}):
        [event] = map_debug_tasks([task(config)])
        assert "metadata" not in event


def test_a_hidden_task_is_not_shown():
    assert list(map_debug_tasks([task({"tags": ["langsmith:hidden"]})])) == []
