"""Background solves wait for a spare core (server.solver.spare), on an injected
clock and idle counter: no test sleeps."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from prometheus_client import REGISTRY

from server.solver.spare import LOOK_S, OnSpareCores, SpareCores, needed_cores

P = ParamSpec("P")
R = TypeVar("R")


class Machine:
    """A machine whose cores are idle at a given rate for each look in turn."""

    def __init__(self, idle_rates: list[float]) -> None:
        self.rates = idle_rates
        self.now = 0.0
        self.idle = 0.0
        self.looks = 0
        self.log: list[str] = []

    async def sleep(self, seconds: float) -> None:
        assert seconds == LOOK_S
        self.idle += self.rates[min(self.looks, len(self.rates) - 1)] * seconds
        self.now += seconds
        self.looks += 1
        self.log.append("look")

    def gate(self, needed: float = 1.0) -> SpareCores:
        return SpareCores(idle=lambda: self.idle, monotonic=lambda: self.now, sleep=self.sleep, needed=needed)


def waits() -> float:
    return REGISTRY.get_sample_value("solitaire_solver_waits_total") or 0.0


async def test_a_background_solve_waits_until_a_core_was_idle_over_a_look() -> None:
    machine = Machine([0.3, 0.9, 0.2, 1.1])  # idle cores during each look
    before = waits()
    await machine.gate().wait()
    assert machine.looks == 4
    assert waits() - before == 3  # the busy looks are counted


async def test_an_idle_machine_lets_a_solve_go_after_one_look() -> None:
    machine = Machine([2.0])
    await machine.gate().wait()
    assert machine.looks == 1


async def test_a_machine_of_one_core_needs_half_of_it() -> None:
    assert needed_cores(1) == 0.5
    assert needed_cores(2) == needed_cores(16) == 1.0
    machine = Machine([0.4, 0.6])
    await machine.gate(needed=needed_cores(1)).wait()
    assert machine.looks == 2


async def test_the_runner_looks_before_it_hands_the_solve_to_the_pool() -> None:
    machine = Machine([0.1, 1.5])

    class Pool:
        async def run(self, fn: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
            machine.log.append("solve")
            return fn(*args, **kwargs)

    answer = await OnSpareCores(Pool(), machine.gate()).run(max, 3, 7)
    assert answer == 7
    assert machine.log == ["look", "look", "solve"]
