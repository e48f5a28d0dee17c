"""The front door's async twins: the state methods in a worker thread, so an event loop never waits.

``Pregel`` inherits them: aget_state, aget_state_history, aupdate_state, abulk_update_state, each
the sync method of pregel/__init__.py run with ``asyncio.to_thread``.
End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncIterator

if TYPE_CHECKING:
    from lgcheckpoint.types import StateSnapshot


class AsyncState:
    """Mix into Pregel: the async twins of get_state, get_state_history and the updates."""

    async def aget_state(self, config: dict, *, subgraphs: bool = False) -> StateSnapshot:
        return await asyncio.to_thread(self.get_state, config, subgraphs=subgraphs)

    async def aget_state_history(self, config: dict, **kwargs: Any) -> AsyncIterator[StateSnapshot]:
        for snap in await asyncio.to_thread(lambda: list(self.get_state_history(config, **kwargs))):
            yield snap

    async def aupdate_state(self, config: dict, values: Any, as_node: str | None = None,
                            task_id: str | None = None) -> dict:
        return await asyncio.to_thread(self.update_state, config, values, as_node, task_id)

    async def abulk_update_state(self, config: dict, supersteps: Any) -> dict:
        return await asyncio.to_thread(self.bulk_update_state, config, supersteps)
