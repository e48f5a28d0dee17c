"""Node caches: where a node's writes are kept by input, so the same input later skips the node.

base.py (the contract: get / set / clear, sync and async), memory.py (a dict), sqlite.py (a
file, LangGraph's table). The loop consults them in pregel/caching.py. Next: cache/base.py.
"""
