"""What live games and jobs need from the other instances, behind two small protocols.

The embedded default is one instance: it owns every game and leads every
job, and nothing here runs on its path (:class:`GameService` with no
``leases``, :data:`ALONE`). With ``--redis-url`` the app composes
:mod:`server.cluster` instead: games are taken through fencing tokens
(:mod:`server.storage.leases`), their pushes fan out through Redis, and jobs run on
the elected leader. These are the ports that layer implements; core imports nothing of it.
"""

from __future__ import annotations

from typing import Any, Protocol


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


class Elsewhere(Protocol):
    """What the other instances must hear of the games held here (with several instances, every
    push of a game starts at the instance holding it)."""

    def hold(self, topic: str) -> None:
        """This instance holds the topic's game now: every push of it starts here."""

    def release(self, topic: str) -> None:
        """This instance no longer holds the topic's game (it moved, or it left memory)."""

    def resend(self, topic: str, message: dict[str, Any]) -> None:
        """Send a message again to the other instances' subscribers only (what an instance that
        just subscribed may have missed)."""


class Alone:
    """An instance on its own: it always leads, and holds every game it has."""

    @property
    def leading(self) -> bool:
        return True

    def hold(self, topic: str) -> None:
        """Every push starts here already: there is nobody to tell."""

    def release(self, topic: str) -> None:
        """Nobody else publishes: there is nobody to tell."""

    def resend(self, topic: str, message: dict[str, Any]) -> None:
        """No other instance has subscribers: this one's have every push already."""


ALONE = Alone()
