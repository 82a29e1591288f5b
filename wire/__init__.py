"""The public protocol's vocabulary, shared by the server and every client.

Both sides import these words from here, so a client program installs the
protocol without the server: ``wire`` imports nothing of ``server``,
``client`` or ``engine`` (``tests/server/test_layers.py`` checks it), and
``tests/test_wire.py`` checks it against the published schemas
(``server/schema/asyncapi.json``, ``openapi.json``). The game's own words
(statuses, results, refusals) are the engine's, in :mod:`engine.vocabulary`.
"""

from __future__ import annotations

from wire.vocabulary import (
    LISTED_STANDINGS,
    PROTOCOL_VERSION,
    CloseCode,
    ErrorCode,
    PlayerKind,
    RaceEvent,
    RaceStatus,
    Standing,
)

__all__ = [
    "LISTED_STANDINGS",
    "PROTOCOL_VERSION",
    "CloseCode",
    "ErrorCode",
    "PlayerKind",
    "RaceEvent",
    "RaceStatus",
    "Standing",
]
