"""The injected clock: integer milliseconds since the Unix epoch.

Everything time-dependent (game clocks, days, rate limits, auth and race
deadlines) reads a :data:`Clock` handed to it, so tests move time by hand
instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], int]


def wall_clock_ms() -> int:
    return int(time.time() * 1000)
