"""The authoritative game server: WebSocket play, HTTP API, storage and live fan-out.

Layers, top to bottom (docs/architecture.md draws them): ``app`` and ``cli``
compose; ``edge`` (the WebSocket session, HTTP helpers) and each feature's
adapters face the network; ``features`` hold the services, each feature its
own package, none importing another; ``core`` holds live games and the fan-out
hub; ``solver`` runs every search in its worker process; ``storage`` talks to
the database; ``rules`` and the features' models are the pure rules; the
ground floor (``vocabulary``, ``errors``, ``clock``, ``config``, ``metrics``,
``logs``) is shared by all; the ``engine`` package lies below everything.
"""

__version__ = "0.1.0"
