"""What live games and jobs need from the other instances, behind two small protocols.

The embedded default is one instance: it owns every game and leads every
job, and nothing here runs on its path (:class:`GameService` with no
``leases``, :data:`ALONE`). With ``--redis-url`` the app composes
:mod:`server.core.redis_cluster` instead: games are taken through fencing
tokens (:mod:`server.storage.leases`) and jobs run on the elected leader.
"""

from __future__ import annotations

from typing import Protocol


class Leases(Protocol):
    """Ownership of live games among instances."""

    async def take(self, game_id: str) -> int:
        """Make this instance the game's owner; returns the fencing token its commits carry.

        Raises ``LookupError`` for a game that does not exist.
        """


class Leadership(Protocol):
    """Whether this instance runs the once-per-cluster jobs (the day-end sweep and the like)."""

    @property
    def leading(self) -> bool:
        """True while this instance is the leader; a job checks it each time before it runs."""


class Alone:
    """The leadership of an instance on its own: it always leads."""

    @property
    def leading(self) -> bool:
        return True


ALONE = Alone()
