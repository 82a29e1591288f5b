"""Think-time signals of a ranked result, pure: the statistics and the screening thresholds.

Taken by the leaderboards' finish hook, in the finishing transaction. Every
figure comes from the server's own timestamps (when it accepted each action),
never from anything a client reports.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from server.config import Screening
from server.vocabulary import FlagReason


@dataclass(frozen=True)
class TimeSignals:
    """Think time between accepted actions, and undo use."""

    actions: int
    moves: int
    median_gap_ms: int
    min_gap_ms: int
    gap_spread_ms: int  # the gaps' standard deviation
    undos: int


def gaps(times: Sequence[int]) -> list[int]:
    """Milliseconds between consecutive accepted actions (the first action has no gap)."""
    return [max(0, b - a) for a, b in itertools.pairwise(times)]


def time_signals(between: Sequence[int], actions: int, moves: int, undos: int) -> TimeSignals:
    """The think-time figures of one game's gaps between accepted actions (``LiveGame.gaps``)."""
    if not between:
        return TimeSignals(actions, moves, 0, 0, 0, undos)
    spread = statistics.pstdev(between) if len(between) > 1 else 0.0
    return TimeSignals(
        actions=actions,
        moves=moves,
        median_gap_ms=round(statistics.median(between)),
        min_gap_ms=min(between),
        gap_spread_ms=round(spread),
        undos=undos,
    )


def flag_reasons(signals: TimeSignals, screening: Screening) -> list[FlagReason]:
    """The thresholds a result crosses (none below ``min_moves``, or with screening off)."""
    if not screening.enabled or signals.moves < screening.min_moves:
        return []
    reasons = []
    if signals.median_gap_ms < screening.fast_median_ms:
        reasons.append(FlagReason.FAST)
    if signals.gap_spread_ms < screening.even_spread_ms:
        reasons.append(FlagReason.EVEN)
    return reasons
