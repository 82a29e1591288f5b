"""``solitaire-server`` under :mod:`tracemalloc`, for ``bench/load.py --idle N --trace``.

Started by :func:`serverproc.started_server` instead of ``python -m server.cli``
when a bench asks where the server's memory goes. Tracing starts at the
first SIGUSR1 (a server traced from its start takes minutes to import and
migrate on a busy machine, and only what is allocated later is of
interest); that and each later SIGUSR1 writes a
snapshot to ``SOLITAIRE_BENCH_TRACE`` (a path prefix) followed by ``.0``,
``.1``…, each there only once whole. Nothing of this is in the server's own code paths.
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
TRACE_FRAMES = 4  # enough to see whose code allocated; more slows a busy server past its deadlines


def main() -> None:
    prefix = os.environ["SOLITAIRE_BENCH_TRACE"]
    numbers = itertools.count()

    def snapshot(signum: int, frame: FrameType | None) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start(TRACE_FRAMES)
        path = f"{prefix}.{next(numbers)}"
        tracemalloc.take_snapshot().dump(path + ".part")
        os.replace(path + ".part", path)  # whole once it exists under its name

    signal.signal(signal.SIGUSR1, snapshot)
    from server.cli import main as serve

    serve(sys.argv[1:])


if __name__ == "__main__":
    main()
