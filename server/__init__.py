"""The authoritative game server: WebSocket play, HTTP API, storage and live fan-out.

Modules: ``config`` (settings), ``cli`` (the ``solitaire-server`` command),
``app`` (Starlette app and lifespan), ``ws`` (WebSocket protocol),
``http_api`` (HTTP routes), ``protocol`` (message validation and error codes),
``games`` (live games: validation through the engine, serialization, time),
``live`` (in-process fan-out to watchers), ``storage`` (SQLAlchemy models,
database set-up, group-commit writer, queries).
"""

__version__ = "0.1.0"
