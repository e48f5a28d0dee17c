"""Differential tests: every scenario runs on LangGraph and on lgcheckpoint, and the two normalised
histories (results, streams, states, the saver's raw checkpoints and writes) must be equal.

Read ``libs.py`` (the two libraries; why LangGraph runs with durability="sync"), ``harness.py``
(recording and normalising), then the scenarios; ``test_random_graphs.py`` draws graphs with
hypothesis (``LGC_SHRINK=1`` to shrink a failure). To look at one scenario:
``python -m tests.differential.harness linear_chain ours``; without a library name it prints
the diff (or "same").
"""
