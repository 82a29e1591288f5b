"""Server settings, from environment variables overridden by command-line flags.

One frozen object is built at start and handed to the app, so nothing below
reads the environment on its own.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_DATA_DIR = Path("data")
DEFAULT_PORTS = {"http": 80, "https": 443}


def default_database_url(data_dir: Path = DEFAULT_DATA_DIR) -> str:
    """The embedded default: a SQLite file inside the data folder."""
    return f"sqlite+aiosqlite:///{(data_dir / 'solitaire.db').resolve()}"


def origin_of(url: str) -> str:
    """The browser origin of a URL (``scheme://host[:port]``, a default port left out), as
    browsers send it in ``Origin``; ValueError for anything but an http or https URL with a host."""
    parts = urlsplit(url.strip())
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"not an http:// or https:// URL with a host: {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    port = parts.port  # ValueError for a port that is not a number
    if port is None or port == DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"


def listen_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9100`` for IPv6) as (host, port); ValueError for anything else."""
    host, sep, port = text.strip().rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"not HOST:PORT: {text!r}")
    return host, int(port)


SECRET_SETTINGS = ("DATABASE_URL", "REDIS_URL", "SECRET")  # each may come from SOLITAIRE_<NAME>_FILE


def secret_setting(env: dict[str, str], name: str) -> str | None:
    """``SOLITAIRE_<NAME>``, or the contents of the file ``SOLITAIRE_<NAME>_FILE`` names (its
    trailing newline stripped: a Docker or Kubernetes secret), so the value stays out of the
    environment other processes can read; ValueError if both are set (an empty one counts as
    unset) or the file cannot be read."""
    direct, path = env.get(f"SOLITAIRE_{name}"), env.get(f"SOLITAIRE_{name}_FILE")
    if not path:  # unset or empty: as if unset
        return direct
    if direct:
        raise ValueError(f"SOLITAIRE_{name} and SOLITAIRE_{name}_FILE are both set: set one")
    try:
        return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as exc:
        raise ValueError(f"SOLITAIRE_{name}_FILE: cannot read {path}: {exc.strerror}") from None


def redact_url(url: str) -> str:
    """A database or Redis URL as it may be printed or logged: its password as ``***``."""
    from sqlalchemy.engine import make_url

    if not url:
        return url
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy parses (redis://, unix://): by hand
        parts = urlsplit(url)
        if parts.password is None:
            return url
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return parts._replace(netloc=netloc).geturl()


def _listed(value: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in value.split(",") if item.strip())


@dataclass(frozen=True)
class Limits:
    """What one connection, one player and one client address may use.

    Those a WebSocket client can run into are sent in ``hello.limits``
    (:meth:`as_json`); the HTTP ones are not. A rate or count of 0 is no limit.
    """

    max_frame_bytes: int = 16384
    rate_per_s: float = 50.0  # frames per connection, sustained
    burst: int = 100
    auth_timeout_s: float = 10.0
    max_watches: int = 32
    connections_per_player: int = 8  # open WebSocket connections
    connections_per_address: int = 64
    games_per_minute: int = 30  # new_game per player
    races_per_minute: int = 6  # race_open and ghost_race per player
    players_per_hour: int = 60  # POST /api/players per client address
    http_rate_per_s: float = 20.0  # HTTP requests and WebSocket handshakes per client address
    http_burst: int = 200

    def as_json(self) -> dict[str, float | int]:
        return {
            "max_frame_bytes": self.max_frame_bytes,
            "rate_per_s": self.rate_per_s,
            "burst": self.burst,
            "auth_timeout_s": self.auth_timeout_s,
            "max_watches": self.max_watches,
            "connections_per_player": self.connections_per_player,
            "connections_per_address": self.connections_per_address,
            "games_per_minute": self.games_per_minute,
            "races_per_minute": self.races_per_minute,
        }

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Limits:
        """Each field from ``SOLITAIRE_<FIELD>`` (``SOLITAIRE_RATE_PER_S``…), else its default."""
        values: dict[str, Any] = {}
        for spec in fields(cls):
            raw = env.get(f"SOLITAIRE_{spec.name.upper()}")
            if raw is not None:
                values[spec.name] = float(raw) if spec.type == "float" else int(raw)
        return cls(**values)


@dataclass(frozen=True)
class Screening:
    """When a ranked result is flagged for review, from the server's own timestamps (docs/competing.md).

    A result with at least ``min_moves`` moves is flagged when any of these holds:
    its median gap between actions is under ``fast_median_ms``; the gaps' standard
    deviation is under ``even_spread_ms`` (a metronome); at least
    ``under_floor_share`` of its gaps are under ``floor_ms`` (faster than a person
    moves a card); ``quick_run`` gaps in a row are under twice ``floor_ms``; or it
    has no long think (no gap of ``long_think`` times the median) and its 90th
    percentile gap is under ``flat_tail_ratio`` times the median (think time with
    no tail: drawn from a range, not thought). ``repeat_days``: how long a
    confirmed flag holds every later result of the player for review.
    ``enabled=False`` still records every signal but flags nothing.
    """

    enabled: bool = True
    min_moves: int = 30
    fast_median_ms: int = 250
    even_spread_ms: int = 20
    floor_ms: int = 150
    under_floor_share: float = 0.1
    quick_run: int = 10
    long_think: float = 2.5
    flat_tail_ratio: float = 2.0
    repeat_days: int = 30

    @classmethod
    def from_env(cls, env: dict[str, str]) -> Screening:
        """``SOLITAIRE_SCREENING`` (0 turns flagging off), ``SOLITAIRE_FLAG_<FIELD>`` for the rest."""
        base = cls()
        values: dict[str, Any] = {"enabled": env.get("SOLITAIRE_SCREENING", "1") != "0"}
        for name, default in asdict(base).items():
            raw = env.get(f"SOLITAIRE_FLAG_{name.upper()}")
            if name != "enabled" and raw is not None:
                values[name] = type(default)(raw)
        return cls(**values)


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to start."""

    database_url: str = field(default_factory=default_database_url)
    host: str = "127.0.0.1"
    port: int = 8000
    # Where browsers open the client, e.g. "https://solitaire.example"; empty: derived from host
    # and port (http://127.0.0.1:PORT, http://localhost:PORT, and http://HOST:PORT for a named
    # host). Its origin may open /ws and its host is served, whatever Host and Origin a request
    # claims (server.edge.security).
    public_url: str = ""
    allowed_origins: tuple[str, ...] = ()  # other sites' pages that may open /ws too
    allowed_hosts: tuple[str, ...] = ()  # Host names served besides the public URL's and loopback
    # Daily codes derive from this; empty (the default): from the secret the first instance
    # generated and stored in the database (server.features.dailies.service).
    secret: str = ""
    limits: Limits = field(default_factory=Limits)
    screening: Screening = field(default_factory=Screening)
    commit_interval_ms: float = 0.0  # how long the group-commit writer may wait to fill a batch
    migrate_on_start: bool = True
    # The WebSocket implementation: "buffered" (server.edge.ws_transport) measured the most
    # actions per second and the least memory per connection (docs/performance.md);
    # uvicorn's own ("websockets", "websockets-sansio") can be chosen instead.
    ws_impl: str = "buffered"
    # A request (its headers and body, or a WebSocket upgrade) not complete after this is closed.
    request_timeout_s: float = 10.0
    # Open TCP connections, all kinds; capped at start below the open-files limit (edge/http_transport.py).
    max_connections: int = 20_000
    # Open TCP connections from one client address, counted at accept; 0: a quarter of the
    # open-files limit (edge/http_transport.py; a trusted proxy is counted by forwarded address).
    max_connections_per_address: int = 0
    # On SIGTERM, how long /ready says "draining" before clients are told bye: the balancer must have
    # seen it by then, or reconnects land here again (two checks of deploy/haproxy.cfg's 1 s interval).
    drain_s: float = 2.0
    # Games held in memory (the most recently used; the rest are read from storage when next
    # used): a few KiB to a few tens of KiB each, with their undo history (docs/operations.md).
    live_games: int = 20_000
    # Redis (redis://host:6379/0): with it, on PostgreSQL, any number of instances serve the
    # same players (docs/operations.md); empty: one instance, as the embedded default.
    redis_url: str = ""
    redis_prefix: str = "solitaire"  # every Redis key and channel starts with it
    log_format: str = "text"  # or "json": one object a line, with connection and request ids
    # HOST:PORT of a listener serving /metrics alone, without a token (server.edge.prometheus);
    # empty: /metrics on the main port, to an operator's token only.
    metrics_listen: str = ""
    # PostgreSQL's connection pool (SQLite has none to size): connections kept open, and how many
    # more may open at a peak (closed again when returned). Every instance opens its own.
    db_pool_size: int = 10
    db_max_overflow: int = 10
    # Proxies whose X-Forwarded-For and X-Forwarded-Proto are trusted (uvicorn's
    # forwarded_allow_ips: addresses, networks, or *); empty: uvicorn's default, its
    # FORWARDED_ALLOW_IPS environment variable or else 127.0.0.1.
    forwarded_allow_ips: str = ""

    def __post_init__(self) -> None:
        if self.public_url:
            origin_of(self.public_url)  # refuse a bad URL at start, not at the first request
        if self.metrics_listen:
            listen_address(self.metrics_listen)
        if self.db_pool_size < 1 or self.db_max_overflow < 0:
            raise ValueError(
                f"the database pool needs a size of 1 or more and an overflow of 0 or more, not "
                f"{self.db_pool_size} and {self.db_max_overflow}"
            )

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Read ``SOLITAIRE_*`` variables; unset ones keep their defaults."""
        env = dict(os.environ if env is None else env)
        base = cls()
        database_url, redis_url, secret = (secret_setting(env, name) for name in SECRET_SETTINGS)
        limits = Limits.from_env(env)
        data_dir = Path(env.get("SOLITAIRE_DATA_DIR", str(DEFAULT_DATA_DIR)))
        return cls(
            database_url=database_url or default_database_url(data_dir),
            host=env.get("SOLITAIRE_HOST", base.host),
            port=int(env.get("SOLITAIRE_PORT", base.port)),
            public_url=env.get("SOLITAIRE_PUBLIC_URL", base.public_url).strip(),
            allowed_origins=_listed(env.get("SOLITAIRE_ALLOWED_ORIGINS", "")),
            allowed_hosts=_listed(env.get("SOLITAIRE_ALLOWED_HOSTS", "")),
            secret=base.secret if secret is None else secret,
            limits=limits,
            screening=Screening.from_env(env),
            commit_interval_ms=float(env.get("SOLITAIRE_COMMIT_INTERVAL_MS", base.commit_interval_ms)),
            migrate_on_start=env.get("SOLITAIRE_MIGRATE_ON_START", "1") != "0",
            ws_impl=env.get("SOLITAIRE_WS_IMPL", base.ws_impl),
            request_timeout_s=float(env.get("SOLITAIRE_REQUEST_TIMEOUT_S", base.request_timeout_s)),
            max_connections=int(env.get("SOLITAIRE_MAX_CONNECTIONS", base.max_connections)),
            max_connections_per_address=int(
                env.get("SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS", base.max_connections_per_address)
            ),
            drain_s=float(env.get("SOLITAIRE_DRAIN_S", base.drain_s)),
            live_games=int(env.get("SOLITAIRE_LIVE_GAMES", base.live_games)),
            redis_url=(redis_url or base.redis_url).strip(),
            redis_prefix=env.get("SOLITAIRE_REDIS_PREFIX", base.redis_prefix).strip() or base.redis_prefix,
            log_format=env.get("SOLITAIRE_LOG_FORMAT", base.log_format),
            metrics_listen=env.get("SOLITAIRE_METRICS_LISTEN", base.metrics_listen).strip(),
            db_pool_size=int(env.get("SOLITAIRE_DB_POOL_SIZE", base.db_pool_size)),
            db_max_overflow=int(env.get("SOLITAIRE_DB_MAX_OVERFLOW", base.db_max_overflow)),
            forwarded_allow_ips=env.get("SOLITAIRE_FORWARDED_ALLOW_IPS", base.forwarded_allow_ips).strip(),
        )
