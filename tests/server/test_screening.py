"""Think-time signals and thresholds, pure (the live path is in test_integrity.py)."""

from __future__ import annotations

from server.config import Screening
from server.features.screening.model import compare_lines, solver_flag
from server.rules.think_time import TimeSignals, flag_reasons, longest_run, time_signals
from server.vocabulary import FlagReason
from tests.server.screening_corpus import ATTACKS, games, person

CORPUS = 400  # games per pattern: a flag rate of 1% is 4 of them


def test_gaps_and_figures() -> None:
    signals = time_signals([300, 0, 700], actions=4, moves=4, undos=1)
    assert (signals.median_gap_ms, signals.min_gap_ms, signals.undos, signals.actions) == (300, 0, 1, 4)
    assert signals.gap_spread_ms == 287  # population standard deviation of 300, 0, 700
    assert time_signals([], actions=0, moves=0, undos=0).median_gap_ms == 0


def test_thresholds() -> None:
    screening = Screening()
    fast = time_signals([20] * 40, actions=41, moves=41, undos=0)
    assert flag_reasons(fast, screening) == [
        FlagReason.FAST,
        FlagReason.EVEN,
        FlagReason.INHUMAN,
        FlagReason.STREAK,
        FlagReason.FLAT,
    ]
    metronome = time_signals([900] * 40, actions=41, moves=41, undos=0)
    assert flag_reasons(metronome, screening) == [FlagReason.EVEN, FlagReason.FLAT]
    thinking = [900, 1200, 700, 3100, 800, 650, 5200, 1000, 1400, 750] * 4  # long thinks among quick ones
    human = time_signals(thinking, actions=41, moves=41, undos=0)
    assert flag_reasons(human, screening) == []
    assert flag_reasons(human, screening, repeat=True) == [FlagReason.REPEAT]
    sawtooth = time_signals([400 + (i * 337) % 2500 for i in range(40)], actions=41, moves=41, undos=0)
    assert flag_reasons(sawtooth, screening) == [FlagReason.FLAT]  # a range, no tail: no person thinks so
    short = time_signals([20] * 20, actions=21, moves=21, undos=0)  # under min_moves: never flagged
    assert flag_reasons(short, screening) == []
    assert flag_reasons(fast, Screening(enabled=False)) == []


def test_the_figures_pacing_alone_does_not_set() -> None:
    signals = time_signals([3, 270, 2, 260, 4, 1000, 5000], actions=8, moves=8, undos=0)
    assert signals.under_floor == round(3 / 7, 3)
    assert signals.longest_quick_run == 5 and longest_run([1, 1, 500, 1], 2) == 2
    assert signals.long_thinks == 2  # 1000 and 5000 against a median of 260
    assert signals.evidence()["tail_ratio"] == signals.tail_ratio


def flag_rate(corpus: list[TimeSignals], screening: Screening) -> float:
    return sum(1 for s in corpus if flag_reasons(s, screening)) / len(corpus)


def signals_of(pacer: str, seed: int) -> list[TimeSignals]:
    pace = person if pacer == "person" else ATTACKS[pacer]
    screening = Screening()
    return [
        time_signals(g.gaps, g.moves, g.moves, g.undos, screening)
        for g in games(pace, CORPUS, seed, people=pacer == "person")
    ]


def test_every_scripted_pacing_of_the_corpus_is_flagged() -> None:
    for attack in ATTACKS:
        assert flag_rate(signals_of(attack, seed=11), Screening()) == 1.0, attack


def test_under_one_percent_of_the_people_are_flagged() -> None:
    assert flag_rate(signals_of("person", seed=12), Screening()) < 0.01


def test_the_old_two_thresholds_miss_the_pacing_attacks() -> None:
    """Median and spread alone: what a script that sets both passes (kept as the reason for the rest)."""
    old = Screening(under_floor_share=2.0, quick_run=10**6, flat_tail_ratio=0.0)
    assert flag_rate(signals_of("bimodal", seed=13), old) == 0.0
    assert flag_rate(signals_of("uniform jitter", seed=13), old) == 0.0


def test_the_solvers_exact_line_is_held_at_any_pace() -> None:
    line = [f"a{i}" for i in range(40)]
    exact, detour = compare_lines(line, line), compare_lines(["x", "undo", *line], line)
    assert solver_flag(exact, undos=0, moves=40, screening=Screening())
    assert not solver_flag(exact, undos=1, moves=40, screening=Screening())
    assert not solver_flag(exact, undos=0, moves=12, screening=Screening())  # short deals: people too
    assert not solver_flag(detour, undos=1, moves=42, screening=Screening())
    assert not solver_flag(exact, undos=0, moves=40, screening=Screening(enabled=False))


def test_thresholds_from_the_environment() -> None:
    read = Screening.from_env({"SOLITAIRE_FLAG_FLOOR_MS": "120", "SOLITAIRE_FLAG_FLAT_TAIL_RATIO": "1.5"})
    assert (read.floor_ms, read.flat_tail_ratio, read.min_moves) == (120, 1.5, 30)
    assert Screening.from_env({"SOLITAIRE_SCREENING": "0"}).enabled is False


def test_solver_comparison() -> None:
    assert compare_lines(["draw", "pair a b"], ["draw", "pair a b"]).solver_line is True
    found = compare_lines(["draw", "undo", "draw", "pair a b"], ["draw", "pair a b"])
    assert (found.solver_length, found.extra_moves, found.solver_line) == (2, 2, False)
    assert compare_lines(["draw"], None).solver_length is None
