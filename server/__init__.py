"""The authoritative game server: WebSocket play, HTTP API, storage and live fan-out.

Layers, top to bottom (docs/architecture.md draws them): ``app`` and ``cli``
compose; ``edge`` (the WebSocket session, HTTP helpers) and each feature's
adapters face the network; ``features`` (dailies, leaderboards, races,
replays, solutions) hold services and pure models; ``core`` holds live games
and the fan-out hub; ``storage`` talks to the database; the ground floor
(``vocabulary``, ``errors``, ``clock``, ``config``) is shared by all; the
``engine`` package lies below everything.
"""

__version__ = "0.1.0"
