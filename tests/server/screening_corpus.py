"""A corpus of paced games for the screening tests: scripted attacks and a model of people.

Each game is its gaps between accepted actions (milliseconds), generated from
a seeded random source so that every run judges the same corpus.

The people are a model, not recorded play: a motor time (seeing the card,
moving the pointer, the answer's round trip) plus a log-normal think time
whose median and spread differ from player to player, some moves obvious
(a short think), a few long pauses, and a handful of undos. Think time in
choice tasks is right-skewed like this: most moves quick, a few many times
slower.

The attacks are what a script does to look slower than a machine: sleep a
fixed time, sleep from a range, sleep from a bell curve, or mix machine-fast
moves with just-slow-enough ones to move the median.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

Pacer = Callable[[random.Random, int], list[int]]


@dataclass(frozen=True)
class Paced:
    """One game of the corpus: its gaps and how many undos it used."""

    gaps: list[int]
    undos: int

    @property
    def moves(self) -> int:
        return len(self.gaps) + 1


def person(rng: random.Random, n: int) -> list[int]:
    """A person's gaps: motor time plus a heavy-tailed think time, with obvious moves and pauses."""
    median = rng.uniform(350.0, 2500.0)
    sigma = rng.uniform(0.75, 1.2)
    gaps = []
    for _ in range(n):
        think = median * rng.lognormvariate(0.0, sigma)
        if rng.random() < 0.15:  # an obvious move: the card to its foundation
            think *= 0.3
        if rng.random() < 0.04:  # a pause: reading the board again, a sip of tea
            think *= rng.uniform(3.0, 10.0)
        gaps.append(round(rng.uniform(170.0, 350.0) + think))
    return gaps


def machine(rng: random.Random, n: int) -> list[int]:
    return [rng.randint(0, 5) for _ in range(n)]


def metronome(rng: random.Random, n: int) -> list[int]:
    beat = rng.randint(200, 2000)
    return [beat + rng.randint(-2, 2) for _ in range(n)]


def bimodal(rng: random.Random, n: int) -> list[int]:
    """Just over half the gaps at 255-275 ms, the rest machine-fast: the median passes 250 ms."""
    slow = n // 2 + 1
    gaps = [rng.randint(255, 275) for _ in range(slow)] + [rng.randint(0, 5) for _ in range(n - slow)]
    rng.shuffle(gaps)
    return gaps


def uniform_jitter(rng: random.Random, n: int) -> list[int]:
    low = rng.uniform(250.0, 900.0)
    high = low * rng.uniform(1.3, 5.0)
    return [round(rng.uniform(low, high)) for _ in range(n)]


def bell_jitter(rng: random.Random, n: int) -> list[int]:
    mean = rng.uniform(400.0, 2000.0)
    spread = mean * rng.uniform(0.05, 0.3)
    return [max(0, round(rng.gauss(mean, spread))) for _ in range(n)]


ATTACKS: dict[str, Pacer] = {
    "machine speed": machine,
    "metronome": metronome,
    "bimodal": bimodal,
    "uniform jitter": uniform_jitter,
    "bell-curve jitter": bell_jitter,
}


def games(pacer: Pacer, count: int, seed: int, people: bool = False) -> list[Paced]:
    """``count`` games of 30-160 gaps paced by ``pacer``; people also undo now and then."""
    rng = random.Random(seed)
    corpus = []
    for _ in range(count):
        n = rng.randint(30, 160)
        corpus.append(Paced(pacer(rng, n), rng.choice((0, 0, 1, 2, 3, 5)) if people else 0))
    return corpus
