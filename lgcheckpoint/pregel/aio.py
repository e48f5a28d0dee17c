"""The front door's async twins: each reads as its sync method in pregel/__init__.py, awaited.

``Pregel`` inherits them. ``astream`` drives the same PregelLoop as ``stream`` with the asyncio
runner and the savers' ``a*`` verbs; ``ainvoke`` collects it; aget_state, aget_state_history,
aupdate_state and abulk_update_state run the sync methods with ``asyncio.to_thread``.
Next: pregel/arunner.py (the async step).
"""

from __future__ import annotations

import asyncio
from contextlib import aclosing
from functools import partial
from typing import TYPE_CHECKING, Any, AsyncIterator

from lgcheckpoint.constants import CONF
from lgcheckpoint.guard import aguarded
from lgcheckpoint.pregel import caching, delta, live, state
from lgcheckpoint.pregel import stream as out
from lgcheckpoint.pregel.calls import AsyncCalls
from lgcheckpoint.pregel.saves import AsyncSaveQueue
from lgcheckpoint.pregel.state import moved_past, without_id
from lgcheckpoint.pregel.subgraphs import aload_before, replay_bound
from lgcheckpoint.runtime import RunControl

if TYPE_CHECKING:
    from lgcheckpoint.checkpoint.base import CheckpointTuple
    from lgcheckpoint.pregel import Run
    from lgcheckpoint.types import StateSnapshot


class AsyncTwins:
    """Mix into Pregel: ainvoke, astream (the same loop on the asyncio runner and the async saver
    verbs), and the state methods' twins."""

    async def ainvoke(self, input: Any, config: dict | None = None, *,
                      stream_mode: str = "values", version: str = "v1", **kwargs: Any) -> Any:
        modes = out.invoke_modes(version, stream_mode)
        kwargs.setdefault("output_keys", self.output_channels)
        chunks = [c async for c in self.astream(input, config, stream_mode=modes, version=version,
                                                **kwargs)]
        return out.collect_output(chunks, stream_mode, version, kwargs.get("subgraphs", False))

    @partial(aguarded, restore=state.restore)
    async def astream(self, input: Any, config: dict | None = None, *, stream_mode: Any = None,
                      interrupt_before: Any = None, interrupt_after: Any = None,
                      durability: str | None = None, subgraphs: bool = False,
                      output_keys: Any = None, context: Any = None,
                      control: RunControl | None = None, version: str = "v1",
                      **options: Any) -> AsyncIterator[Any]:
        """Async twin of stream: same loop, asyncio runner, async saver verbs."""
        run = self._prepare("astream", config, stream_mode, subgraphs, durability,
                            interrupt_before, interrupt_after, output_keys, context, control,
                            version, options)
        saves, _own = self._saves(run, AsyncSaveQueue)  # nothing to shut down: flush is close
        loop = self._loop(input, run, saves, *await self._aload(run))
        calls = AsyncCalls(loop, self)
        error: BaseException | None = None
        try:
            for tasks in loop.run():
                for chunk in run.drain():
                    yield chunk
                if self.cache is not None and (keys := caching.wanted(tasks)):
                    tasks = loop.apply_cached(tasks, keys, await self.cache.aget(tuple(keys)))
                async with aclosing(live.astep(self, run, partial(calls.step, tasks),
                                               tasks)) as step:
                    async for _ in step:
                        for chunk in run.drain():
                            yield chunk
                for chunk in run.drain():
                    yield chunk
                await saves.end_of_step()
        except GeneratorExit as exc:
            self._finish(loop, None)
            if loop.listeners.trace is not None:
                loop.listeners.trace.closed(exc)
            await saves.flush()
            raise
        except BaseException as exc:
            error = exc
        suppressed = self._finish(loop, error)
        await saves.flush()
        for chunk in run.drain():
            yield chunk
        self._raise_outcome(loop, run, error, suppressed)

    async def _aload(self, run: Run) -> tuple[CheckpointTuple | None, bool]:
        if run.saver is None:
            return None, False
        if bound := replay_bound(run.config[CONF]):
            saved = await aload_before(run.saver, run.config, bound)
            return await delta.aresolve(run.saver, self.channels, saved), False
        saved = await delta.aresolve(
            run.saver, self.channels, await run.saver.aget_tuple(run.config))
        if saved is None or not run.config[CONF].get("checkpoint_id"):
            return saved, False
        return saved, moved_past(saved, await run.saver.aget_tuple(without_id(run.config)))

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
