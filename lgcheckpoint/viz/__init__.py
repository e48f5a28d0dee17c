"""Viewers that make checkpoints visible; they read only the public saver API.

Read in this order: ``history.py`` (the one model every viewer shares), ``render.py`` (DOT -> SVG),
``lineage.py``, ``versions.py``, ``topology.py``, ``player.py``, ``hitl.py``, ``storage.py``.
Every viewer displays itself statically (SVG / HTML / PNG) and has ``.widget()`` for a live kernel.
"""

from lgcheckpoint.viz.hitl import HITLPanel
from lgcheckpoint.viz.history import History, Step, aload_history, load_history
from lgcheckpoint.viz.lineage import LineageGraph
from lgcheckpoint.viz.player import SuperStepPlayer
from lgcheckpoint.viz.render import GraphvizNotFound, dot_to_svg, find_engine
from lgcheckpoint.viz.storage import StorageView
from lgcheckpoint.viz.topology import GraphDrawing
from lgcheckpoint.viz.versions import ChannelVersionTable, VersionsSeenMatrix

__all__ = [
    "ChannelVersionTable", "GraphDrawing", "GraphvizNotFound", "HITLPanel", "History",
    "LineageGraph", "Step", "StorageView", "SuperStepPlayer", "VersionsSeenMatrix", "dot_to_svg",
    "aload_history", "find_engine",
    "load_history",
]
