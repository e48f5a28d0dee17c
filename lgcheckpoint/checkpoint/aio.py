"""The saver contract's async twins, kept apart so base.py shows each verb once.

``AsyncTwins`` gives ``BaseCheckpointSaver`` an ``a*`` verb for each sync one, run in a worker
thread, so every saver works under ``ainvoke``; ``InPlaceAsync`` runs them in place for a saver
that never blocks (InMemorySaver); ``SyncOverAsync`` goes the other way, for savers on an async
driver. End of the side trip from checkpoint/base.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from lgcheckpoint.checkpoint.errors import SyncCallOnEventLoopError

if TYPE_CHECKING:
    from lgcheckpoint.checkpoint.base import (
        ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple, PutWrites, RunnableConfig,
    )
    from lgcheckpoint.checkpoint.delta_history import DeltaChannelHistory


class AsyncTwins:
    """Each verb's async twin: the sync verb in a worker thread (an async driver overrides)."""

    async def aget(self, config: RunnableConfig) -> Checkpoint | None:
        saved = await self.aget_tuple(config)
        return saved.checkpoint if saved else None

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in found:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def aput_writes_and_checkpoint(
        self,
        task: PutWrites,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        await self.aput_writes(*task)
        return await self.aput(config, checkpoint, metadata, new_versions)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)


class InPlaceAsync:
    """Async verbs that call the sync ones in place: base.py's ``AsyncBySync`` mixes this in.

    For a saver that never blocks (InMemorySaver): no worker thread, no await inside.
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.get_tuple(config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None,
                    ) -> AsyncIterator[CheckpointTuple]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata, new_versions: ChannelVersions) -> RunnableConfig:
        return self.put(config, checkpoint, metadata, new_versions)

    async def aget_delta_channel_history(self, *, config: RunnableConfig,
                                         channels: Sequence[str]
                                         ) -> dict[str, DeltaChannelHistory]:
        return self.get_delta_channel_history(config=config, channels=channels)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.delete_thread(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.delete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.copy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.prune(thread_ids, strategy=strategy)


class SyncOverAsync:
    """Sync verbs for an async saver: each runs its async twin on the saver's event loop.

    Mix in before BaseCheckpointSaver. Called from another thread they wait for the loop; called on
    the loop's own thread they would deadlock, so that is refused with a clear error.
    """

    loop: asyncio.AbstractEventLoop  # set by the saver: the loop its connection lives on

    def _wait(self, coro: Any) -> Any:
        try:
            on_loop = asyncio.get_running_loop() is self.loop
        except RuntimeError:  # no loop running in this thread: fine
            on_loop = False
        if on_loop:
            coro.close()
            raise SyncCallOnEventLoopError(
                f"{type(self).__name__}'s sync methods would block its own event loop: use the "
                "async ones (await saver.aget_tuple(...), graph.ainvoke(...)) or call from "
                "another thread")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._wait(self.aget_tuple(config))

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None,
             ) -> Iterator[CheckpointTuple]:
        async def collect() -> list[CheckpointTuple]:
            return [t async for t in self.alist(config, filter=filter, before=before, limit=limit)]
        yield from self._wait(collect())

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        return self._wait(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        self._wait(self.aput_writes(config, writes, task_id, task_path))

    def put_writes_and_checkpoint(self, task: PutWrites, config: RunnableConfig,
                                  checkpoint: Checkpoint, metadata: CheckpointMetadata,
                                  new_versions: ChannelVersions) -> RunnableConfig:
        return self._wait(
            self.aput_writes_and_checkpoint(task, config, checkpoint, metadata, new_versions))

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]
                                  ) -> dict[str, DeltaChannelHistory]:
        return self._wait(self.aget_delta_channel_history(config=config, channels=channels))

    def delete_thread(self, thread_id: str) -> None:
        self._wait(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._wait(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._wait(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._wait(self.aprune(thread_ids, strategy=strategy))
