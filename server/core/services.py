"""The typed services every feature is built from; one set per running app."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.clock import Clock
from server.config import Settings
from server.core.cluster import ALONE, Leadership
from server.core.context import Peers
from server.core.games import GameService
from server.core.hub import Hub
from server.core.quotas import Quotas
from server.rules.disclosure import Tripwire
from server.storage.db import Database
from server.storage.writer import GroupWriter


@dataclass(frozen=True)
class Services:
    """Settings, storage, the live games, the hub and the quotas: nothing else, and nothing untyped."""

    settings: Settings
    db: Database  # every unit of work: db.transaction(), db.read()
    writer: GroupWriter
    hub: Hub
    games: GameService
    clock: Clock
    quotas: Quotas
    peers: Peers = field(default_factory=Peers)
    leader: Leadership = ALONE  # who runs the once-per-cluster jobs: always this one when alone
    tripwire: Tripwire = field(default_factory=Tripwire)  # the sealed secrets the edge never sends
