"""``python -m tests.durability.weak_sqlite [server options]``: the server with a durability bug
put in on purpose, SQLite's ``synchronous=NORMAL`` for ``FULL``.

In WAL mode NORMAL syncs the log only at checkpoints: a commit (and so its
acknowledgement) comes before the data is on disk. The power-cut tests run it
to show they catch such a bug: acknowledged actions are lost.
"""

from __future__ import annotations

import runpy

from server.storage import db, sqlite_batches


def weaken() -> tuple[str, ...]:
    """Swap the pragma in the engine's and the group-commit writer's copy of the list."""
    pragmas = tuple("synchronous=NORMAL" if p == "synchronous=FULL" else p for p in db.SQLITE_PRAGMAS)
    assert pragmas != db.SQLITE_PRAGMAS, "synchronous=FULL is no longer among the pragmas"
    for module in (db, sqlite_batches):
        setattr(module, "SQLITE_PRAGMAS", pragmas)  # noqa: B010  (a constant replaced on purpose)
    return pragmas


if __name__ == "__main__":
    weaken()
    runpy.run_module("server.cli", run_name="__main__", alter_sys=True)
