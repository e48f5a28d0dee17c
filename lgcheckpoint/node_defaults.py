"""set_node_defaults(): a retry policy, cache policy, error handler or timeout for every node.

Recorded on the builder, applied when compile() builds the nodes: a node's own policy wins;
retry_policy and timeout reach error handlers too, cache_policy and error_handler do not (a
handler's input varies, and handlers have no handlers).
End of the side trip from pregel/runner.py.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Callable, Sequence

from lgcheckpoint.errors import refuse_unimplemented
from lgcheckpoint.pregel.handlers import DEFAULT_HANDLER
from lgcheckpoint.types import CachePolicy, RetryPolicy, TimeoutPolicy

if TYPE_CHECKING:
    from lgcheckpoint.graph import NodeSpec, StateGraph


@dataclasses.dataclass
class NodeDefaults:
    """set_node_defaults(): what a node gets at compile time when add_node did not say."""

    retry_policy: RetryPolicy | Sequence[RetryPolicy] = ()  # every node, error handlers too
    cache_policy: CachePolicy | None = None  # regular nodes only: a handler's input varies
    error_handler: Callable | None = None  # regular nodes only: handlers never catch handlers
    timeout: TimeoutPolicy | None = None  # every node: a stuck handler is stopped the same way


class WithNodeDefaults:
    """Mix into StateGraph: set_node_defaults, and the specs compile builds with them."""

    node_defaults: NodeDefaults

    def set_node_defaults(self, *, retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                          cache_policy: CachePolicy | None = None,
                          error_handler: Callable | None = None,
                          timeout: float | timedelta | TimeoutPolicy | None = None,
                          **options: Any) -> StateGraph:
        """Policies for every node that add_node left without one, applied at compile time.
        retry_policy and timeout apply to error handlers too; cache_policy and error_handler
        do not."""
        refuse_unimplemented("set_node_defaults", options)
        defaults = self.node_defaults
        if retry_policy is not None:
            defaults.retry_policy = retry_policy
        if cache_policy is not None:
            defaults.cache_policy = cache_policy
        if error_handler is not None:
            defaults.error_handler = error_handler
        if timeout is not None:
            defaults.timeout = TimeoutPolicy.coerce(timeout)
        return self

    def _specs_with_defaults(self) -> dict[str, NodeSpec]:
        """The node specs compile builds: set_node_defaults filled in, per-node values winning."""
        specs, defaults = dict(self.nodes), self.node_defaults
        handler = None
        if defaults.error_handler is not None:
            handler = DEFAULT_HANDLER
            specs[handler] = self._handler_spec(defaults.error_handler, self.state_schema)
        for name, spec in specs.items():
            regular = not spec.is_error_handler
            specs[name] = spec._replace(
                retry_policy=spec.retry_policy or defaults.retry_policy,
                cache_policy=spec.cache_policy or (defaults.cache_policy if regular else None),
                error_handler=spec.error_handler or (handler if regular else None),
                timeout=spec.timeout or defaults.timeout)
        return specs
