"""What runs a solve: the pool itself, or the pool behind the spare-cores gate."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class Runner(Protocol):
    """Runs a module-level function in the solver's worker process (its arguments and result
    pickle)."""

    async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R: ...
