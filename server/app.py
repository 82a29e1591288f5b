"""The composition root: settings, storage, live games, features and routes, wired by hand.

Nothing registers itself on import. The layers, from the top (each imports
only from below it; ``tests/server/test_layers.py`` checks it):

- edge: :mod:`server.edge` (the WebSocket session and its plumbing, HTTP helpers)
- features: :mod:`server.features` (play, players, accounts, profiles, dailies,
  leaderboards, races, replays, solutions, screening, moderation, results log), each exporting its routes
  and request handlers; no feature imports another: where one needs another's service it
  names a small protocol, and :func:`build_features` passes the other's object in
- core: :mod:`server.core` (live games, the hub, topics, the handler contract)
- solver: :mod:`server.solver` (the worker process every search runs in, cached answers)
- storage: :mod:`server.storage`
- rules: :mod:`server.rules` (the pure rules several features share) and each feature's model
- below all: :mod:`engine`
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute

from server.clock import Clock, wall_clock_ms
from server.config import Settings, listen_address
from server.core.backoff import FailureCounts, in_memory
from server.core.context import Handler, Handlers
from server.core.games import GameService
from server.core.hub import Hub
from server.core.quotas import Quotas, SharedQuotas
from server.core.services import Services
from server.edge import facts, ws
from server.edge.admission import AdmitThenRun, admitted
from server.edge.disclosure import Withhold
from server.edge.envelope import http_error
from server.edge.health import Drain, FleetDatabase, Ping, health_routes
from server.edge.prometheus import MetricsListener, metrics_routes
from server.edge.rate import AddressRate
from server.edge.request_id import RequestIds
from server.edge.security import BrowserPolicy, SecurityHeaders
from server.edge.static import ClientFiles, schema_file
from server.features.accounts.api import AccountsApi
from server.features.accounts.service import Accounts
from server.features.dailies.api import DailiesApi
from server.features.dailies.service import Dailies
from server.features.leaderboards.api import LeaderboardsApi
from server.features.leaderboards.service import Leaderboards
from server.features.moderation.api import ModerationApi
from server.features.moderation.service import Moderation
from server.features.play import Play
from server.features.players import Players
from server.features.profiles.api import ProfilesApi
from server.features.profiles.service import Profiles
from server.features.races.api import RacesApi
from server.features.races.ghosts import GhostRaces
from server.features.races.service import Races
from server.features.replays.api import ReplaysApi
from server.features.results_log.api import ResultsLogApi
from server.features.results_log.service import ResultsLog
from server.features.screening.service import SolverComparison
from server.features.solutions.api import SolutionsApi
from server.features.solutions.hints import Hints
from server.features.solutions.service import DeadEnds, Solutions
from server.solver.deals import Deals
from server.solver.pool import SolverPool
from server.solver.spare import OnSpareCores, SpareCores
from server.storage.db import Database, DatabaseLock, InstanceLock, is_sqlite, migrate_logged
from server.storage.writer import GroupWriter

if TYPE_CHECKING:  # imported where several instances are composed: one alone never loads Redis
    from server.cluster.node import RedisCluster

log = logging.getLogger(__name__)
STATIC_DIR = Path(__file__).resolve().parent / "static"


@dataclass(frozen=True)
class Features:
    """Every feature of one app, built from its services."""

    dailies: Dailies
    leaderboards: Leaderboards
    races: Races
    dead_ends: DeadEnds
    solver_signals: SolverComparison
    profiles: Profiles
    ghosts: GhostRaces
    solver: SolverPool
    results_log: ResultsLog
    games: GameService
    routes: list[BaseRoute]
    handlers: Mapping[str, Handler]

    async def start(self) -> None:
        await self.results_log.start(self.games)  # its finish hook first: see ResultsLog.start
        await self.leaderboards.start()
        await self.profiles.start()
        await self.races.start_listening()
        await self.ghosts.start()
        await self.dead_ends.start()
        await self.solver_signals.start()
        await self.dailies.start()

    async def stop(self) -> None:
        await self.dailies.stop()
        await self.solver_signals.stop()
        await self.races.stop()
        await self.ghosts.stop()
        await self.leaderboards.stop()
        await self.dead_ends.stop()
        await self.solver.close()  # last: nothing solves any more


def build_services(settings: Settings, clock: Clock) -> Services:
    """The embedded default: one instance owns every game, fans out in memory and leads every job."""
    db = Database.open(settings.database_url, settings.db_pool_size, settings.db_max_overflow)
    writer = GroupWriter(db.engine, linger_s=settings.commit_interval_ms / 1000)
    hub = Hub()
    games = GameService(db, writer, hub, clock, cache_size=settings.live_games)
    return Services(settings, db, writer, hub, games, clock, Quotas(settings.limits, clock))


def build_cluster_services(settings: Settings, clock: Clock) -> tuple[Services, RedisCluster]:
    """One of several instances: games taken through fencing tokens, fan-out and leader through Redis."""
    from server.cluster.node import RedisCluster
    from server.storage.leases import FencedWriter

    if is_sqlite(settings.database_url):
        raise ValueError("several instances (--redis-url) need PostgreSQL: one process per SQLite file")
    db = Database.open(settings.database_url, settings.db_pool_size, settings.db_max_overflow)
    writer = FencedWriter(db.engine, linger_s=settings.commit_interval_ms / 1000)
    cluster = RedisCluster(settings.redis_url, settings.redis_prefix, db)
    games = GameService(
        db,
        writer,
        cluster.hub,
        clock,
        cache_size=settings.live_games,
        leases=cluster.leases,
        elsewhere=cluster.hub,
    )
    cluster.on_moved = games.moved
    cluster.on_interest = games.followed_elsewhere
    services = Services(
        settings,
        db,
        writer,
        cluster.hub,
        games,
        clock,
        Quotas(settings.limits, clock, shared_quotas(cluster, clock)),
        leader=cluster.leader,
    )

    async def resync() -> None:
        games.forget_all()  # moves announced meanwhile were missed: read every game again
        await services.peers.goodbye_all("pushes may have been missed; reconnect to read every state again")

    cluster.on_resync = resync
    services.peers.elsewhere = cluster.sessions_ended  # the other instances close theirs too
    cluster.on_sessions_ended = services.peers.end_here
    return services, cluster


def shared_quotas(cluster: RedisCluster, clock: Clock) -> SharedQuotas:
    """The fleet's quotas in Redis: every instance takes from the same buckets and counts."""
    from server.cluster.quotas import RedisQuotas

    return RedisQuotas(cluster.redis, cluster.prefix, clock)


def shared_failures(cluster: RedisCluster, clock: Clock) -> FailureCounts:
    """Failed logins counted in Redis, so every instance slows a username or address alike."""
    from server.cluster.backoff import RedisCounts

    return RedisCounts(cluster.redis, cluster.prefix, clock)


def build_features(
    services: Services,
    failures: FailureCounts,
    redis_ping: Ping | None = None,
    fleet: FleetDatabase | None = None,
    drain: Drain | None = None,
) -> Features:
    """Each feature from what it needs, and the routes and handlers they export."""
    solver = SolverPool()  # every solve, one at a time, in one worker process per server
    background = OnSpareCores(solver, SpareCores())  # what no player waits for runs on idle cores
    deals = Deals(solver)  # deal answers, kept for this app: requests and background share them
    dailies = Dailies(services, deals)
    results_log = ResultsLog(services.db, services.clock)
    dailies.day_end_hooks.append(results_log.day_ended)  # heads once a day's attempts are final
    leaderboards = Leaderboards(services)
    shared = bool(services.settings.redis_url)  # several instances: races change elsewhere too
    races = Races(services, starter=dailies, sealed=dailies.sealed_code, shared=shared)
    solutions = Solutions(services.clock, deals)
    dead_ends = DeadEnds(services.games, background)
    solver_signals = SolverComparison(services, deals.on(background))
    players = Players(services)
    boards_api = LeaderboardsApi(services.db, dailies)
    hints = Hints(services.clock, solver, services.quotas.hints)  # a player waits: not on spare cores
    solutions_api = SolutionsApi(services.games, solutions, hints, services.db)
    moderation = Moderation(services.db, services.clock, services.peers, boards=results_log)
    accounts = Accounts(services, failures)
    profiles = Profiles(services)
    ghosts = GhostRaces(services, dailies, profiles, services.quotas.races)
    routes: list[BaseRoute] = [
        *health_routes(services.db, services.writer, drain or Drain(), redis_ping, fleet),
        *metrics_routes(bool(services.settings.metrics_listen), moderation.admin),
        Route("/api/schema/{name}", schema_file),
        *players.routes(),
        *DailiesApi(dailies).routes(),
        *boards_api.routes(),
        *ReplaysApi(services.db, services.clock).routes(),
        *solutions_api.routes(),
        *ModerationApi(moderation).routes(),
        *AccountsApi(accounts).routes(),
        *ProfilesApi(profiles, accounts).routes(),
        *ResultsLogApi(results_log).routes(),
    ]
    handlers = merge_handlers(
        Play(services.games, starter=dailies, new_games=services.quotas.games, deals=deals).handlers(),
        boards_api.handlers(),
        RacesApi(races, opened=services.quotas.races).handlers(),
        solutions_api.handlers(),
        ghosts.handlers(),
    )
    return Features(
        dailies,
        leaderboards,
        races,
        dead_ends,
        solver_signals,
        profiles,
        ghosts,
        solver,
        results_log,
        services.games,
        routes,
        handlers,
    )


def merge_handlers(*groups: Handlers) -> dict[str, Handler]:
    """One handler per request type: two features answering the same type is a wiring error."""
    merged: dict[str, Handler] = {}
    for group in groups:
        for kind, handler in group.items():
            if kind in merged:
                raise ValueError(f"two handlers for {kind!r}")
            merged[kind] = handler
    return merged


async def shutdown_connections(services: Services, reason: str = "server shutting down") -> None:
    """Tell every client we are going away; used on SIGTERM before the server stops."""
    await services.peers.goodbye_all(reason)


def create_app(settings: Settings | None = None, clock: Clock = wall_clock_ms) -> Starlette:
    """Build the app. Storage opens (and migrates) in the lifespan, not at import."""
    settings = settings or Settings.from_env()
    cluster: RedisCluster | None = None
    drain = Drain()  # started by the command's SIGTERM (server/cli.py): /ready says draining
    if settings.redis_url:
        from server.cluster.health import RedisFleetDatabase

        services, cluster = build_cluster_services(settings, clock)
        fleet = RedisFleetDatabase(cluster.redis, cluster.prefix, cluster.name)
        features = build_features(services, shared_failures(cluster, clock), cluster.ping, fleet, drain)
    else:
        services = build_services(settings, clock)
        features = build_features(services, in_memory(clock), drain=drain)

    metrics = MetricsListener(*listen_address(settings.metrics_listen)) if settings.metrics_listen else None
    instance = InstanceLock(settings.database_url)
    database = DatabaseLock(settings.database_url, shared=cluster is not None)

    def lost_lock(why: str) -> None:
        """After a failover another instance holds the database: this one stops taking clients."""
        log.critical("the database lock was taken by another instance during a failover: %s", why)
        drain.start()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        instance.acquire()  # before anything touches the file: a second process stops here
        try:
            await database.acquire()  # PostgreSQL: alone, or every instance with Redis
            keeper = asyncio.create_task(database.keep(lost_lock))  # through a failover too
            try:
                async with serving(app):
                    yield
            finally:
                keeper.cancel()
                await database.release()
        finally:
            instance.release()

    @contextlib.asynccontextmanager
    async def serving(app: Starlette) -> AsyncIterator[None]:
        if settings.migrate_on_start:
            await migrate_logged(settings.database_url)
        services.writer.start()
        app.state.services = services
        if cluster is not None:
            await cluster.start()
        await features.start()
        try:
            if metrics is not None:
                await metrics.start()
                app.state.metrics = metrics
            yield
        finally:
            if metrics is not None:
                await metrics.stop()
            await features.stop()
            await shutdown_connections(services)
            await services.quotas.close()
            if cluster is not None:
                await cluster.stop()
            await services.writer.close()
            await services.db.dispose()

    client = ClientFiles(directory=STATIC_DIR, generated=facts.generated()) if STATIC_DIR.is_dir() else None
    policy = BrowserPolicy.from_settings(settings, client.bundle.inline_scripts if client else ())
    routes: list[BaseRoute] = [
        *features.routes,
        WebSocketRoute("/ws", admitted(ws.endpoint(services, features.handlers, policy))),
    ]
    if client is not None:
        routes.append(facts.route())  # generated, before the files it sits among
        routes.append(Mount("/", client, name="static"))
    middleware = [  # outermost first: a refused Host still gets the security headers
        Middleware(AdmitThenRun),  # an admitted WebSocket runs above the rest (server.edge.admission)
        Middleware(RequestIds),  # X-Request-ID and the HTTP metrics, of every request
        Middleware(SecurityHeaders, policy=policy),
        Middleware(TrustedHostMiddleware, allowed_hosts=policy.hosts(), www_redirect=False),
        Middleware(AddressRate, rate=services.quotas.http),  # per-address request rate
        Middleware(Withhold, tripwire=services.tripwire, clock=services.clock),  # no sealed secret out
    ]
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=lifespan,
        exception_handlers={HTTPException: http_error},
    )
    app.state.drain = drain
    return app
