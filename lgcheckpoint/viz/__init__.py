"""Viewers that make checkpoints visible; they read only the public saver API.

In a notebook, after ``graph.invoke(inputs, config)`` on a graph compiled with a checkpointer::

    LineageGraph(graph, config)                # every checkpoint of the thread, as a DAG
    ChannelVersionTable(graph, config)         # versions per checkpoint, changed cells marked
    VersionsSeenMatrix(graph, config)          # why ``next`` is what it is
    SuperStepPlayer(graph, config).widget()    # replay the thread one super-step at a time
    HITLPanel(graph, config).widget()          # answer pending interrupts
    Studio(graph, config).widget()             # drive it live: step, break, fork, answer
    StorageView(saver, config)                 # the rows as the saver stored them
    Conversation(graph, config)                # chat messages as a conversation (conversation.py)

A saver works in place of the graph (``LineageGraph(saver, config)``), also one that LangGraph
wrote.

Read in this order: ``history.py`` (the one model every viewer shares), ``render.py`` (DOT -> SVG),
``lineage.py``, ``versions.py``, ``topology.py``, ``player.py``, ``studio.py`` (live:
step, break, fork, answer; its widget and its Voilà page beside it), ``hitl.py``,
``storage.py``. Every viewer displays itself statically with a PNG beside its SVG / HTML
(untrusted notebooks and GitHub show only the PNG) and has ``.widget()`` for a live kernel.
``palette.py`` names the colours ("yellow = changed in this step, red = fires") that every
picture uses.
"""

from lgcheckpoint.viz import palette
from lgcheckpoint.viz.conversation import Conversation
from lgcheckpoint.viz.history import History, Step, aload_history, load_history
from lgcheckpoint.viz.hitl import HITLPanel
from lgcheckpoint.viz.lineage import LineageGraph
from lgcheckpoint.viz.player import SuperStepPlayer
from lgcheckpoint.viz.render import GraphvizNotFound, dot_to_png, dot_to_svg, find_engine
from lgcheckpoint.viz.storage import StorageView
from lgcheckpoint.viz.studio import Refused, Studio
from lgcheckpoint.viz.topology import GraphDrawing
from lgcheckpoint.viz.versions import ChannelVersionTable, VersionsSeenMatrix

__all__ = [
    "ChannelVersionTable",
    "Conversation",
    "GraphDrawing",
    "GraphvizNotFound",
    "HITLPanel",
    "History",
    "LineageGraph",
    "Refused",
    "Step",
    "StorageView",
    "Studio",
    "SuperStepPlayer",
    "VersionsSeenMatrix",
    "aload_history",
    "dot_to_png",
    "dot_to_svg",
    "find_engine",
    "load_history",
    "palette",
]
