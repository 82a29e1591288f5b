"""The Starlette application: wiring of settings, storage, live games and routes."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from starlette.applications import Starlette
from starlette.routing import Mount, WebSocketRoute
from starlette.staticfiles import StaticFiles

from engine import GameCode, random_code
from engine.codes import VARIANTS
from server import competition, http_api, solutions
from server.config import Settings
from server.games import Clock, GameService, LiveGame, parse_code_or_error, wall_clock_ms
from server.live import Hub
from server.protocol import ProtocolError
from server.storage.db import make_engine, migrate, sessionmaker
from server.storage.writer import GroupWriter
from server.ws import Connection, websocket_endpoint

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).resolve().parent / "static"

# Hooks that resolve how a new game starts (daily challenges plug in here).
GameStarter = Callable[["Services", str, str, dict[str, Any]], Awaitable[LiveGame]]
# How a game on a known code starts (competition: daily attempts ranked once, stuck games counted).
CodeStarter = Callable[["Services", str, str, GameCode], Awaitable[LiveGame]]


@dataclass
class Services:
    """Everything a request handler may use; one per running app."""

    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    writer: GroupWriter
    hub: Hub
    games: GameService
    clock: Clock
    connections: set[Connection] = field(default_factory=set)
    extras: dict[str, Any] = field(default_factory=dict)
    daily_starter: GameStarter | None = None
    code_starter: CodeStarter | None = None

    async def start_game(self, player_id: str, name: str, fields: dict[str, Any]) -> LiveGame:
        """Start a game from a code, from a game and variant, or as today's daily."""
        if "daily" in fields:
            if self.daily_starter is None:
                raise ProtocolError("not_found", "daily challenges are not available")
            return await self.daily_starter(self, player_id, name, fields)
        code = self.code_from_fields(fields)
        if self.code_starter is not None:
            return await self.code_starter(self, player_id, name, code)
        return await self.games.create(player_id, name, code)

    @staticmethod
    def code_from_fields(fields: dict[str, Any]) -> GameCode:
        """A code from ``code``, or a random one from ``game`` and ``variant``."""
        if "code" in fields:
            return parse_code_or_error(fields["code"])
        game = str(fields.get("game", "")).upper()
        if game not in VARIANTS:
            raise ProtocolError("bad_message", "give a code, or a game (HH or SH)", field="game")
        variant = str(fields.get("variant", VARIANTS[game][0])).upper()
        if variant not in VARIANTS[game]:
            allowed = ", ".join(VARIANTS[game])
            raise ProtocolError("bad_code", f"variant must be one of {allowed}", part="variant")
        return random_code(game, variant)


async def shutdown_connections(services: Services, reason: str = "server shutting down") -> None:
    """Tell every client we are going away; used on SIGTERM before the server stops."""
    for conn in list(services.connections):
        await conn.goodbye(reason)


def create_app(settings: Settings | None = None, clock: Clock = wall_clock_ms) -> Starlette:
    """Build the app. Storage opens (and migrates) in the lifespan, not at import."""
    settings = settings or Settings.from_env()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if settings.migrate_on_start:
            await migrate(settings.database_url)
        engine = make_engine(settings.database_url)
        sessions = sessionmaker(engine)
        writer = GroupWriter(engine, linger_s=settings.commit_interval_ms / 1000)
        writer.start()
        hub = Hub()
        games = GameService(sessions, writer, hub, clock)
        services = Services(settings, engine, sessions, writer, hub, games, clock)
        app.state.services = services
        for setup in SETUP_HOOKS:
            await setup(services)
        try:
            yield
        finally:
            for teardown in TEARDOWN_HOOKS:
                await teardown(services)
            await shutdown_connections(services)
            await writer.close()
            await engine.dispose()

    routes: list[Any] = [
        *http_api.routes(),
        WebSocketRoute("/ws", websocket_endpoint),
    ]
    if STATIC_DIR.is_dir():
        routes.append(Mount("/", StaticFiles(directory=STATIC_DIR, html=True), name="static"))
    return Starlette(routes=routes, lifespan=lifespan)


# Other modules (competition, races) register start-up and shut-down work here.
SETUP_HOOKS: list[Callable[[Services], Awaitable[None]]] = []
TEARDOWN_HOOKS: list[Callable[[Services], Awaitable[None]]] = []
SETUP_HOOKS.append(competition.setup)
TEARDOWN_HOOKS.append(competition.teardown)
SETUP_HOOKS.append(solutions.setup)
TEARDOWN_HOOKS.append(solutions.teardown)
