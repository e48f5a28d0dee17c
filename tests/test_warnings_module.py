"""lgcheckpoint.warnings: LangGraph's deprecation warning classes, same names and messages."""

import warnings

import langgraph.warnings as theirs
import pytest

import lgcheckpoint.warnings as ours


@pytest.mark.parametrize("name", ours.__all__[1:])
def test_versioned_warnings_read_as_langgraphs(name):
    mine, reference = getattr(ours, name)("Use X instead."), getattr(theirs, name)("Use X instead.")
    assert str(mine) == str(reference)
    assert (mine.since, mine.expected_removal) == (reference.since, reference.expected_removal)
    assert isinstance(mine, ours.LangGraphDeprecationWarning) and isinstance(
        mine, DeprecationWarning)
    with pytest.warns(ours.LangGraphDeprecationWarning, match="Deprecated in LangGraph"):
        warnings.warn(mine)


def test_base_warning_defaults_removal_to_the_next_major():
    assert str(ours.LangGraphDeprecationWarning("Old.", since=(1, 2))) == str(
        theirs.LangGraphDeprecationWarning("Old.", since=(1, 2)))
    assert ours.__all__ == theirs.__all__
