"""Think-time signals and thresholds, pure (the live path is in test_integrity.py)."""

from __future__ import annotations

from server.config import Screening
from server.features.screening.model import compare_lines
from server.rules.think_time import flag_reasons, gaps, time_signals
from server.vocabulary import FlagReason


def test_gaps_and_figures() -> None:
    assert gaps([1000, 1300, 1300, 2000]) == [300, 0, 700]
    signals = time_signals([300, 0, 700], actions=4, moves=4, undos=1)
    assert (signals.median_gap_ms, signals.min_gap_ms, signals.undos, signals.actions) == (300, 0, 1, 4)
    assert signals.gap_spread_ms == 287  # population standard deviation of 300, 0, 700
    assert time_signals([], actions=0, moves=0, undos=0).median_gap_ms == 0


def test_thresholds() -> None:
    screening = Screening()
    fast = time_signals([20] * 40, actions=41, moves=41, undos=0)
    assert flag_reasons(fast, screening) == [FlagReason.FAST, FlagReason.EVEN]
    metronome = time_signals([900] * 40, actions=41, moves=41, undos=0)
    assert flag_reasons(metronome, screening) == [FlagReason.EVEN]
    human = time_signals([400 + (i * 337) % 2500 for i in range(40)], actions=41, moves=41, undos=0)
    assert flag_reasons(human, screening) == []
    short = time_signals([20] * 20, actions=21, moves=21, undos=0)  # under min_moves: never flagged
    assert flag_reasons(short, screening) == []
    assert flag_reasons(fast, Screening(enabled=False)) == []


def test_solver_comparison() -> None:
    assert compare_lines(["draw", "pair a b"], ["draw", "pair a b"]).solver_line is True
    found = compare_lines(["draw", "undo", "draw", "pair a b"], ["draw", "pair a b"])
    assert (found.solver_length, found.extra_moves, found.solver_line) == (2, 2, False)
    assert compare_lines(["draw"], None).solver_length is None
