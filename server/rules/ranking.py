"""The ranking order, pure: one ascending number per result, shared by boards, profiles and replays.

Order: wins first; winners by fewer moves, then less time; everyone else by
progress (more first), then fewer moves, then less time. Never by the
displayed score, which Seahaven lets a player farm.
"""

from __future__ import annotations

# sort_key layout, most significant first (63 bits, always positive):
# 1 bit "not won" | 6 bits 63 - progress | 20 bits moves | 36 bits elapsed ms.
MOVES_CAP = (1 << 20) - 1  # a million moves: beyond it moves tie
TIME_CAP = (1 << 36) - 1  # about 795 days of play time: beyond it time ties


def sort_key(won: bool, progress: int, moves: int, elapsed_ms: int) -> int:
    """The one ascending number the whole ranking order is folded into."""
    lost = 0 if won else 1
    progress_part = 63 - max(0, min(progress, 63))
    moves_part = max(0, min(moves, MOVES_CAP))
    time_part = max(0, min(elapsed_ms, TIME_CAP))
    return (lost << 62) | (progress_part << 56) | (moves_part << 36) | time_part
