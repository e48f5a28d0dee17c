"""lgcheckpoint: LangGraph's durable-execution core, compact enough to read, with viewers to see it.

Start here: ``lgcheckpoint.graph`` builds a graph, ``lgcheckpoint.pregel`` runs it in super-steps,
``lgcheckpoint.checkpoint`` saves what each step did, ``lgcheckpoint.viz`` shows it.
"""

__version__ = "0.1.0"
