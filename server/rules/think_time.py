"""Think-time signals of a ranked result, pure: the statistics and the screening thresholds.

Taken by the leaderboards' finish hook, in the finishing transaction. Every
figure comes from the server's own timestamps (when it accepted each action),
never from anything a client reports.

A script sets its own pacing at will, so no single figure of the gaps is a
test: a median and a spread are two numbers a script picks. The signals here
read what pacing alone does not set: how many gaps fall under what a person
can do, whether fast moves come in long runs, whether the gaps have the long
thinks every person's play has (think time is heavy-tailed: most moves are
quick, a few take many times the median), and, after the finish, whether the
line is exactly the solver's. docs/competing.md says what they cannot tell.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from server.config import Screening
from server.vocabulary import FlagReason


@dataclass(frozen=True)
class TimeSignals:
    """Think time between accepted actions, and undo use: the evidence an operator reads."""

    actions: int
    moves: int
    median_gap_ms: int
    min_gap_ms: int
    gap_spread_ms: int  # the gaps' standard deviation
    undos: int
    under_floor: float = 0.0  # share of gaps under the human floor (Screening.floor_ms)
    longest_quick_run: int = 0  # most consecutive gaps under twice the floor
    long_thinks: int = 0  # gaps of at least Screening.long_think times the median
    tail_ratio: float = 0.0  # the gaps' 90th percentile over their median

    def evidence(self) -> dict[str, Any]:
        """The figures as stored with the result and shown to operators."""
        return asdict(self)


def longest_run(between: Sequence[int], below: int) -> int:
    """The most consecutive gaps under ``below`` milliseconds."""
    best = run = 0
    for gap in between:
        run = run + 1 if gap < below else 0
        best = max(best, run)
    return best


def percentile(ordered: Sequence[int], share: float) -> float:
    """The ``share`` quantile of sorted values (nearest rank)."""
    return float(ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)])


def time_signals(
    between: Sequence[int], actions: int, moves: int, undos: int, screening: Screening | None = None
) -> TimeSignals:
    """The think-time figures of one game's gaps between accepted actions (``LiveGame.gaps``)."""
    if not between:
        return TimeSignals(actions, moves, 0, 0, 0, undos)
    limits = screening or Screening()
    ordered = sorted(between)
    median = statistics.median(ordered)
    spread = statistics.pstdev(ordered) if len(ordered) > 1 else 0.0
    return TimeSignals(
        actions=actions,
        moves=moves,
        median_gap_ms=round(median),
        min_gap_ms=ordered[0],
        gap_spread_ms=round(spread),
        undos=undos,
        under_floor=round(sum(1 for g in ordered if g < limits.floor_ms) / len(ordered), 3),
        longest_quick_run=longest_run(between, 2 * limits.floor_ms),
        long_thinks=sum(1 for g in ordered if g >= limits.long_think * max(median, 1)),
        tail_ratio=round(percentile(ordered, 0.9) / max(median, 1), 3),
    )


def flag_reasons(signals: TimeSignals, screening: Screening, repeat: bool = False) -> list[FlagReason]:
    """The thresholds a result crosses (none below ``min_moves``, or with screening off).

    ``repeat``: an operator confirmed a flag on this player recently, so every
    ranked result of theirs waits for a look.
    """
    if not screening.enabled or signals.moves < screening.min_moves:
        return []
    reasons = []
    if signals.median_gap_ms < screening.fast_median_ms:
        reasons.append(FlagReason.FAST)
    if signals.gap_spread_ms < screening.even_spread_ms:
        reasons.append(FlagReason.EVEN)
    if signals.under_floor >= screening.under_floor_share:
        reasons.append(FlagReason.INHUMAN)
    if signals.longest_quick_run >= screening.quick_run:
        reasons.append(FlagReason.STREAK)
    if signals.long_thinks == 0 and signals.tail_ratio < screening.flat_tail_ratio:
        reasons.append(FlagReason.FLAT)
    if repeat:
        reasons.append(FlagReason.REPEAT)
    return reasons
