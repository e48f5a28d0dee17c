"""ShallowPostgresSaver stays refused by name (postgres/shallow.py says why): the names import
as in LangGraph, where they are deprecated; building one names the saver to use instead."""

import warnings

import pytest


def test_langgraph_deprecates_the_shallow_savers(postgres_uri):
    from langgraph.checkpoint.postgres import ShallowPostgresSaver
    from langgraph.checkpoint.postgres.aio import AsyncShallowPostgresSaver

    import psycopg

    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        for cls in (ShallowPostgresSaver, AsyncShallowPostgresSaver):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    cls(conn)
                except Exception:  # noqa: BLE001 - an async saver on a sync connection: the
                    pass           # warning comes first, which is all this test reads
            assert any(issubclass(w.category, DeprecationWarning)
                       and "deprecated" in str(w.message) for w in caught), cls


@pytest.mark.parametrize("module, name, instead", [
    ("lgcheckpoint.checkpoint.postgres", "ShallowPostgresSaver", "PostgresSaver"),
    ("lgcheckpoint.checkpoint.postgres.aio", "AsyncShallowPostgresSaver", "AsyncPostgresSaver"),
])
def test_ours_refuse_by_name_and_name_the_replacement(module, name, instead):
    import importlib

    cls = getattr(importlib.import_module(module), name)
    for build in (lambda: cls(None), lambda: cls.from_conn_string("postgresql://unused")):
        with pytest.raises(TypeError, match=f"does not implement {name}.*use {instead}"
                                            r"\.from_conn_string.*durability=\"exit\""):
            build()
