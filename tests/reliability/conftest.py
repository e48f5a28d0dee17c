"""Reliability tests: start each session with an empty figures file; show the figures at the end."""

import os

import pytest

from tests.reliability import helpers


@pytest.fixture(scope="session", autouse=True)
def _fresh_artifact():
    if "PYTEST_XDIST_WORKER" not in os.environ:  # on workers, tests/conftest.py does it once
        helpers.ARTIFACT.unlink(missing_ok=True)
    yield


def pytest_terminal_summary(terminalreporter):
    if helpers.FIGURES:
        terminalreporter.section("reliability figures")
        for line in helpers.FIGURES:
            terminalreporter.write_line(line)
