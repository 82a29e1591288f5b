"""``solitaire-server``: run the server (default), apply migrations, back up and restore, or act
as an operator.

``solitaire-server admin …`` works on the database directly (the one
``--database-url`` or ``SOLITAIRE_DATABASE_URL`` names): ``create-token``,
``tokens list`` and ``revoke-token`` manage operator tokens for the admin HTTP
API, and the other commands do what that API does, each written to the audit
log under ``--operator``.

Only ``migrate`` (and ``serve``'s migrate on start) changes the schema; every
other command refuses a database at another revision, in one line saying what
to run. URLs are printed with their password as ``***``.

Flags override ``SOLITAIRE_*`` environment variables. SIGTERM and Ctrl-C shut
down gracefully: ``/ready`` says ``draining`` at once, and once the balancer has
seen it (``--drain-seconds``) clients get a ``bye`` and close code 1001, so
they reconnect to another instance; queued writes are committed, then the
process exits. A second signal skips the wait.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import getpass
import json
import logging
import socket
import sys
import warnings
from collections.abc import Coroutine
from dataclasses import replace
from types import FrameType
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

from server.config import Limits, Settings, redact_url
from server.edge.health import Drain
from server.edge.http_transport import (
    address_cap,
    connection_cap,
    guarded_http,
    install_exhaustion_filter,
    open_files_limit,
    raise_open_files_limit,
)
from server.edge.security import WILDCARD_HOSTS
from server.edge.ws_transport import IMPL_CHOICES, IMPL_NAME, uvicorn_ws
from server.logs import FORMATS, ready_line
from server.logs import configure as configure_logs
from server.storage.db import InstanceLock, InstanceLocked, is_sqlite, migrate_sync
from server.storage.migrate import SchemaMismatch, head_revision, require_current

log = logging.getLogger(__name__)
READY_LINE = "Solitaire server ready: open "  # then the URL, on stdout once listening
GC_YOUNG_THRESHOLD = 50_000  # net container allocations between young collections (default 700)
SWITCH_INTERVAL_S = 0.0005  # the longest a thread waits for the GIL held by another (default 5 ms)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solitaire-server",
        description="Authoritative server for Heart to Heart and Seahaven Towers.",
    )
    parser.add_argument(
        "command",
        nargs="?",
        default="serve",
        choices=["serve", "migrate", "backup", "restore", "admin"],
        help="serve (default), migrate the database and exit, backup FILE (a consistent copy "
        "while the server runs: SQLite's backup API, PostgreSQL's pg_dump), restore FILE (with the "
        "servers stopped), or admin … (operator commands: solitaire-server admin --help)",
    )
    parser.add_argument("file", nargs="?", help="backup, restore: the backup file")
    parser.add_argument(
        "--database-url",
        help="SQLAlchemy URL (env SOLITAIRE_DATABASE_URL; "
        "default: SQLite in ./data; PostgreSQL: postgresql+asyncpg://…)",
    )
    parser.add_argument("--host", help="interface to listen on (env SOLITAIRE_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (env SOLITAIRE_PORT, default 8000; 0 = any free)")
    parser.add_argument(
        "--public-url",
        help="the address browsers open, e.g. https://solitaire.example (env SOLITAIRE_PUBLIC_URL; "
        "default http://127.0.0.1:PORT and http://localhost:PORT): its origin may open the "
        "WebSocket and its host is served",
    )
    parser.add_argument(
        "--allowed-origin",
        action="append",
        default=None,
        help="another site's origin allowed to open the WebSocket (repeatable; "
        "env SOLITAIRE_ALLOWED_ORIGINS, comma separated)",
    )
    parser.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        help="another Host name served besides the public URL's and loopback (repeatable; "
        "env SOLITAIRE_ALLOWED_HOSTS, comma separated; * serves any)",
    )
    parser.add_argument(
        "--secret",
        help="secret daily codes derive from (env SOLITAIRE_SECRET; default: one generated on "
        "first start and stored in the database, shared by every instance on it)",
    )
    parser.add_argument("--max-frame-bytes", type=int, help="largest WebSocket frame accepted")
    parser.add_argument("--rate", type=float, help="messages per second per connection")
    parser.add_argument(
        "--max-connections",
        type=int,
        help="open TCP connections at most (env SOLITAIRE_MAX_CONNECTIONS, default 20000; "
        "kept below the open-files limit)",
    )
    parser.add_argument(
        "--request-timeout",
        type=float,
        help="seconds a request or WebSocket upgrade may take to arrive whole "
        "(env SOLITAIRE_REQUEST_TIMEOUT_S, default 10)",
    )
    parser.add_argument(
        "--drain-seconds",
        type=float,
        help="on SIGTERM, how long /ready says draining before clients are told bye: enough for the "
        "balancer to see it (env SOLITAIRE_DRAIN_S, default 2: two checks of deploy/haproxy.cfg)",
    )
    parser.add_argument(
        "--ws",
        choices=IMPL_CHOICES,
        help=f"WebSocket implementation (env SOLITAIRE_WS_IMPL, default {IMPL_NAME}; "
        "the others are uvicorn's own)",
    )
    parser.add_argument(
        "--redis-url",
        help="Redis for several instances on one PostgreSQL database, e.g. redis://127.0.0.1:6379/0 "
        "(env SOLITAIRE_REDIS_URL; default none: one instance)",
    )
    parser.add_argument(
        "--metrics-listen",
        help="HOST:PORT serving /metrics alone, without a token, e.g. 10.0.0.5:9100 (env "
        "SOLITAIRE_METRICS_LISTEN; default none: /metrics on the main port, to an operator's token)",
    )
    parser.add_argument(
        "--db-pool-size",
        type=int,
        help="PostgreSQL connections this instance keeps open (env SOLITAIRE_DB_POOL_SIZE, default 10)",
    )
    parser.add_argument(
        "--db-max-overflow",
        type=int,
        help="PostgreSQL connections opened past the pool at a peak (env SOLITAIRE_DB_MAX_OVERFLOW, "
        "default 10)",
    )
    parser.add_argument(
        "--forwarded-allow-ips",
        help="proxies whose X-Forwarded-For and X-Forwarded-Proto are trusted, comma separated "
        "(addresses, networks, or *; env SOLITAIRE_FORWARDED_ALLOW_IPS; default uvicorn's "
        "FORWARDED_ALLOW_IPS or 127.0.0.1)",
    )
    parser.add_argument("--log-level", default="info", help="debug, info, warning or error")
    parser.add_argument(
        "--log-format",
        choices=FORMATS,
        help="text (default) or json: one object a line with connection and request ids "
        "(env SOLITAIRE_LOG_FORMAT)",
    )
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    changes: dict[str, object] = {}
    for name in (
        "database_url",
        "host",
        "port",
        "secret",
        "public_url",
        "redis_url",
        "log_format",
        "metrics_listen",
        "db_pool_size",
        "db_max_overflow",
        "forwarded_allow_ips",
    ):
        value = getattr(args, name)
        if value is not None:
            changes[name] = value
    if args.ws:
        changes["ws_impl"] = args.ws
    if args.max_connections:
        changes["max_connections"] = args.max_connections
    if args.request_timeout:
        changes["request_timeout_s"] = args.request_timeout
    if args.drain_seconds is not None:
        changes["drain_s"] = args.drain_seconds
    if args.allowed_origin:
        changes["allowed_origins"] = tuple(args.allowed_origin)
    if args.allowed_host:
        changes["allowed_hosts"] = tuple(args.allowed_host)
    limits: Limits = settings.limits
    if args.max_frame_bytes:
        limits = replace(limits, max_frame_bytes=args.max_frame_bytes)
    if args.rate:
        limits = replace(limits, rate_per_s=args.rate)
    return replace(settings, limits=limits, **changes)  # type: ignore[arg-type]


class GracefulServer(uvicorn.Server):
    """Uvicorn server that drains: ``/ready`` fails first, then WebSocket clients get a goodbye.

    Saying ``bye`` while the balancer still counted this instance in sent the
    reconnects straight back here (it has the fewest connections), to be cut
    again; so the instance first says ``draining``, waits ``drain_s`` for the
    balancer's checks to see it, and only then says goodbye.
    """

    goodbye_started = False
    starlette_app: Any = None
    drain_s = 0.0
    log_format = "text"

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        services = getattr(getattr(self.starlette_app, "state", None), "services", None)
        if services is None or self.goodbye_started:
            super().handle_exit(sig, frame)
            return
        self.goodbye_started = True
        loop = asyncio.get_event_loop()
        loop.call_soon_threadsafe(lambda: loop.create_task(self._goodbye(services, sig, frame)))

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:  # on stdout whatever the log level: scripts wait for this line
            text = f"{READY_LINE}{self.url}/ in a browser"
            print(ready_line(text, self.log_format, url=f"{self.url}/"), flush=True)  # JSON: a record

    @property
    def url(self) -> str:
        """``http://HOST:PORT`` with the port actually bound (the free one after ``--port 0``)."""
        port = self.servers[0].sockets[0].getsockname()[1]
        host = "0.0.0.0" if self.config.host is None else self.config.host
        scheme = "https" if self.config.ssl else "http"
        return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"

    async def _goodbye(self, services: object, sig: int, frame: FrameType | None) -> None:
        from server.app import shutdown_connections
        from server.core.services import Services

        try:
            drain: Drain | None = getattr(self.starlette_app.state, "drain", None)
            if drain is not None and self.drain_s > 0:
                drain.start()
                log.info("draining: /ready says so; clients are told bye in %.1f s", self.drain_s)
                await asyncio.sleep(self.drain_s)  # a second signal meanwhile stops at once
            if isinstance(services, Services):  # the app has started: tell its clients first
                await asyncio.wait_for(shutdown_connections(services), timeout=5)
        finally:
            super().handle_exit(sig, frame)


def uvicorn_config(app: Any, settings: Settings, log_level: str = "info") -> uvicorn.Config:
    """The one uvicorn configuration, used by the command and by the tests' servers."""
    warnings.filterwarnings("ignore", message=".*`websockets` implementation is deprecated.*")
    files = open_files_limit()
    max_connections = connection_cap(settings.max_connections, files)
    per_address = address_cap(settings.max_connections_per_address, files)
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level=log_level,
        http=guarded_http(settings.request_timeout_s, max_connections, per_address),
        ws=uvicorn_ws(settings.ws_impl),
        ws_max_size=settings.limits.max_frame_bytes,
        ws_per_message_deflate=False,
        ws_ping_interval=20,
        ws_ping_timeout=20,
        lifespan="on",
        forwarded_allow_ips=settings.forwarded_allow_ips or None,  # None: uvicorn's own default
        log_config=None if settings.log_format == "json" else LOGGING_CONFIG,  # JSON: the root's handler
    )


def tune_gc() -> None:
    """Make the cyclic garbage collector cheap for a server holding many live games.

    Every live game keeps up to 100 earlier states for undo, so the heap holds
    about a million objects that the default thresholds (a young collection
    every 700 net allocations, a full one soon after) walk over and over:
    under load that took about a fifth of the server's time. Almost all
    garbage here is freed by reference counting; collections still run, only
    less often, and what was loaded at start-up is frozen out of them.
    """
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 20)


def tune_threads() -> None:
    """Let the database writer's thread take the interpreter back quickly from the busy loop.

    The SQLite writer releases the GIL for every statement step and for the
    commit's fsync, and must take it back each time. While the event loop is
    busy it holds the GIL until the switch interval forces it to let go: by
    default 5 ms a time, several times per batch, and every acknowledgement
    of the batch waits for it (the p99 at half load was mostly such waits).
    At 0.5 ms the waits are bounded tenfold tighter for a few more switches.
    """
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run the server on uvloop where it is installed (with uvicorn[standard], on Linux and macOS).

    The server's own work is Python, but every frame also passes through the
    event loop's sockets and callbacks, which uvloop runs in C: measured, that
    was a sixth of the server's time per action on the standard loop.
    """
    try:
        import uvloop
    except ImportError:  # Windows: the standard loop
        asyncio.run(main)
        return
    uvloop.run(main)


async def serve(settings: Settings, log_level: str) -> None:
    from server.app import create_app

    app = create_app(settings)
    tune_gc()
    tune_threads()
    files = raise_open_files_limit()  # before the cap is computed from it
    config = uvicorn_config(app, settings, log_level)
    install_exhaustion_filter()  # after uvicorn has set up its loggers
    cap = connection_cap(settings.max_connections, files)
    per_address = address_cap(settings.max_connections_per_address, files)
    logging.getLogger(__name__).info(
        "open files: at most %d; connections: at most %d, %d from one address", files, cap, per_address
    )
    server = GracefulServer(config)
    server.starlette_app = app
    server.drain_s = settings.drain_s
    server.log_format = settings.log_format
    await server.serve()


ADMIN_COMMANDS = (
    "create-token",
    "tokens",
    "revoke-token",
    "flagged",
    "confirm",
    "clear",
    "remove",
    "ban",
    "rename",
    "audit",
)


def fail(message: str, status: int = 2) -> None:
    """One line on stderr, no traceback, and a non-zero exit."""
    print(f"solitaire-server: {message}", file=sys.stderr)
    sys.exit(status)


def check_schema(database_url: str, allow_newer: bool = False) -> None:
    """Exit, saying what to run, unless the database is at this release's revision."""
    try:
        asyncio.run(require_current(database_url, allow_newer))
    except SchemaMismatch as exc:
        fail(str(exc))
    except Exception as exc:  # unreachable, refused, not a database: say so in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        fail(f"cannot read the database at {redact_url(database_url)}: {first}")


def positive_days(text: str) -> float:
    """``--expires-in``: a number of days above 0."""
    try:
        days = float(text)
    except ValueError:
        days = 0.0
    if not days > 0 or days == float("inf"):
        raise argparse.ArgumentTypeError(f"not a number of days above 0: {text!r}")
    return days


def build_admin_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solitaire-server admin",
        description="Operator commands, run against the database; every change is audited.",
    )
    parser.add_argument("--database-url", help="SQLAlchemy URL (env SOLITAIRE_DATABASE_URL)")
    parser.add_argument(
        "--operator", default=None, help="who is acting, for the audit log (default: the login name)"
    )
    sub = parser.add_subparsers(dest="action", required=True)
    token = sub.add_parser("create-token", help="make an operator token (shown once) for /api/admin")
    token.add_argument("name", help="whose token it is, e.g. alice")
    token.add_argument(
        "--expires-in",
        type=positive_days,
        metavar="DAYS",
        help="refused after this many days, e.g. 90 or 0.5 (default: never)",
    )
    tokens = sub.add_parser("tokens", help="operator tokens: tokens list")
    tokens.add_argument("tokens_action", choices=["list"], help="list: every token and its state")
    revoke = sub.add_parser("revoke-token", help="revoke an operator token: refused from now on")
    revoke.add_argument("token_id", help="the token's id (a_…, from tokens list)")
    revoke.add_argument("--reason", default="revoked", help="for the audit log")
    flagged = sub.add_parser("flagged", help="list flagged results with their signals")
    flagged.add_argument(
        "--standing", default="flagged", help="flagged (default), confirmed, cleared, removed"
    )
    flagged.add_argument("--limit", type=int, default=50)
    for name, what in (
        ("confirm", "confirm a result's flag (it stays out of the default view)"),
        ("clear", "clear a result's flag (it is listed again)"),
        ("remove", "remove the entry a game made"),
    ):
        review = sub.add_parser(name, help=what)
        review.add_argument("game_id")
        review.add_argument("--reason", required=True)
    ban = sub.add_parser("ban", help="ban a player: their games stop counting, their entries are hidden")
    ban.add_argument("player_id")
    ban.add_argument("--reason", required=True)
    rename = sub.add_parser("rename", help="rename a player")
    rename.add_argument("player_id")
    rename.add_argument("name")
    rename.add_argument("--reason", required=True)
    audit = sub.add_parser("audit", help="the audit log, newest first")
    audit.add_argument("--limit", type=int, default=50)
    return parser


async def run_admin(args: argparse.Namespace, database_url: str) -> Any:
    """One operator command against the database; returns what it prints (JSON)."""
    from server.clock import wall_clock_ms
    from server.errors import ProtocolError
    from server.features.moderation.service import Moderation
    from server.features.results_log.service import ResultsLog
    from server.rules.names import clean_name
    from server.storage.db import Database
    from wire import Standing

    db = Database.open(database_url)
    moderation = Moderation(db, wall_clock_ms, boards=ResultsLog(db, wall_clock_ms))
    operator = args.operator or getpass.getuser()
    by = ("cli", f"cli:{operator}"[:32])
    try:
        if args.action == "create-token":
            admin_id, token = await moderation.create_token(args.name, by, args.expires_in)
            return {"id": admin_id, "name": args.name, "token": token, "expires_in_days": args.expires_in}
        if args.action == "tokens":
            return {"tokens": await moderation.tokens()}
        if args.action == "revoke-token":
            return await moderation.revoke_token(by, args.token_id, args.reason)
        if args.action == "flagged":
            return {"results": await moderation.flagged(args.limit, Standing(args.standing))}
        if args.action in ("confirm", "clear", "remove"):
            return await moderation.review(by, args.game_id, args.action, args.reason)
        if args.action == "ban":
            return await moderation.ban(by, args.player_id, args.reason)
        if args.action == "rename":
            return await moderation.rename(by, args.player_id, clean_name(args.name), args.reason)
        return {"entries": await moderation.audit_log(args.limit)}
    except ProtocolError as exc:
        return {"error": {"code": exc.code, "message": exc.message}}
    finally:
        await db.dispose()


def admin_main(argv: list[str]) -> None:
    args = build_admin_parser().parse_args(argv)
    try:
        database_url = args.database_url or Settings.from_env().database_url
    except ValueError as exc:  # SOLITAIRE_DATABASE_URL and its _FILE both set, an unreadable file
        fail(str(exc))
    check_schema(database_url)  # never migrates: `solitaire-server migrate` does
    result = asyncio.run(run_admin(args, database_url))
    print(json.dumps(result, indent=2, ensure_ascii=False))
    if isinstance(result, dict) and "error" in result:
        sys.exit(1)


def backup_command(settings: Settings, file: str | None) -> None:
    """``backup FILE``: a consistent copy while servers run (SQLite's backup API, pg_dump)."""
    from server.storage.backups import BackupFailed, backup

    if not file:
        build_parser().error("backup needs the FILE to write")
    check_schema(settings.database_url)
    try:
        what = backup(settings.database_url, file)
    except BackupFailed as exc:
        fail(f"backup failed: {exc}", 1)
    print(f"backed up {redact_url(settings.database_url)} to {file} ({what})")


def restore_command(settings: Settings, file: str | None) -> None:
    """``restore FILE``: the database's contents replaced by a backup's, with its servers stopped."""
    from server.storage.backups import BackupFailed, restore

    if not file:
        build_parser().error("restore needs the backup FILE to read")
    url = settings.database_url
    instance = InstanceLock(url)  # SQLite: no server may have the file open meanwhile
    try:
        instance.acquire()
    except InstanceLocked as exc:
        fail(f"{exc}: stop it before restoring")
    try:
        restore(url, file)
    except BackupFailed as exc:
        fail(f"restore failed: {exc}", 1)
    finally:
        instance.release()
    print(f"restored {file} into {redact_url(url)}")
    try:  # a backup of an older release: say to migrate it
        asyncio.run(require_current(url))
    except SchemaMismatch as exc:
        print(f"solitaire-server: {exc}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["admin"]:
        admin_main(argv[1:])
        return
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
    except ValueError as exc:  # a public URL that is not one, a port that is not a number
        build_parser().error(str(exc))
    if args.command == "migrate":
        try:
            migrate_sync(settings.database_url)
        except Exception as exc:  # unreachable or refused: one line, the URL without its password
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            fail(f"migrate failed on {redact_url(settings.database_url)}: {first}", 1)
        print(f"database is up to date (revision {head_revision()}): {redact_url(settings.database_url)}")
        return
    if args.command == "backup":
        backup_command(settings, args.file)
        return
    if args.command == "restore":
        restore_command(settings, args.file)
        return
    try:
        uvicorn_ws(settings.ws_impl)  # SOLITAIRE_WS_IMPL is not checked by the parser's choices
    except ValueError as exc:
        build_parser().error(str(exc))
    if settings.redis_url and is_sqlite(settings.database_url):
        build_parser().error("--redis-url needs PostgreSQL (--database-url postgresql+asyncpg://…)")
    try:
        configure_logs(args.log_level, settings.log_format)  # SOLITAIRE_LOG_FORMAT is not checked above
    except ValueError as exc:
        build_parser().error(str(exc))
    if settings.host in WILDCARD_HOSTS and not settings.public_url:
        log.warning(
            "listening on every interface, but only loopback names are served "
            "until --public-url (or --allowed-host) names the address browsers use"
        )
    if not settings.migrate_on_start:  # an older schema would fail mid-game; a newer one is additive
        check_schema(settings.database_url, allow_newer=True)
    instance = InstanceLock(settings.database_url)  # held by this process; the app counts itself in
    try:
        instance.acquire()
    except InstanceLocked as exc:
        print(f"solitaire-server: {exc}", file=sys.stderr)
        sys.exit(2)
    try:
        run_loop(serve(settings, args.log_level))
    except KeyboardInterrupt:
        sys.exit(0)
    finally:
        instance.release()


if __name__ == "__main__":
    main()
