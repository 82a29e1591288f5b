"""Server settings, from environment variables overridden by command-line flags.

One frozen object is built at start and handed to the app, so nothing below
reads the environment on its own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DATA_DIR = Path("data")


def default_database_url(data_dir: Path = DEFAULT_DATA_DIR) -> str:
    """The embedded default: a SQLite file inside the data folder."""
    return f"sqlite+aiosqlite:///{(data_dir / 'solitaire.db').resolve()}"


@dataclass(frozen=True)
class Limits:
    """Per-connection limits; sent to clients in ``hello.limits``."""

    max_frame_bytes: int = 16384
    rate_per_s: float = 50.0
    burst: int = 100
    auth_timeout_s: float = 10.0
    max_watches: int = 32

    def as_json(self) -> dict[str, float | int]:
        return {
            "max_frame_bytes": self.max_frame_bytes,
            "rate_per_s": self.rate_per_s,
            "burst": self.burst,
            "auth_timeout_s": self.auth_timeout_s,
            "max_watches": self.max_watches,
        }


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to start."""

    database_url: str = field(default_factory=default_database_url)
    host: str = "127.0.0.1"
    port: int = 8000
    allowed_origins: tuple[str, ...] = ()  # empty: the server's own origin only
    secret: str = "dev-secret-change-me"
    limits: Limits = field(default_factory=Limits)
    commit_interval_ms: float = 0.0  # how long the group-commit writer may wait to fill a batch
    migrate_on_start: bool = True
    # The WebSocket implementation: "buffered" (server.ws_transport) measured the most
    # actions per second and the least memory per connection (docs/performance.md);
    # uvicorn's own ("websockets", "websockets-sansio") can be chosen instead.
    ws_impl: str = "buffered"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Read ``SOLITAIRE_*`` variables; unset ones keep their defaults."""
        env = dict(os.environ if env is None else env)
        base = cls()
        limits = Limits(
            max_frame_bytes=int(env.get("SOLITAIRE_MAX_FRAME_BYTES", base.limits.max_frame_bytes)),
            rate_per_s=float(env.get("SOLITAIRE_RATE_PER_S", base.limits.rate_per_s)),
            burst=int(env.get("SOLITAIRE_BURST", base.limits.burst)),
            auth_timeout_s=float(env.get("SOLITAIRE_AUTH_TIMEOUT_S", base.limits.auth_timeout_s)),
            max_watches=int(env.get("SOLITAIRE_MAX_WATCHES", base.limits.max_watches)),
        )
        origins = env.get("SOLITAIRE_ALLOWED_ORIGINS", "")
        data_dir = Path(env.get("SOLITAIRE_DATA_DIR", str(DEFAULT_DATA_DIR)))
        return cls(
            database_url=env.get("SOLITAIRE_DATABASE_URL") or default_database_url(data_dir),
            host=env.get("SOLITAIRE_HOST", base.host),
            port=int(env.get("SOLITAIRE_PORT", base.port)),
            allowed_origins=tuple(o.strip() for o in origins.split(",") if o.strip()),
            secret=env.get("SOLITAIRE_SECRET", base.secret),
            limits=limits,
            commit_interval_ms=float(env.get("SOLITAIRE_COMMIT_INTERVAL_MS", base.commit_interval_ms)),
            migrate_on_start=env.get("SOLITAIRE_MIGRATE_ON_START", "1") != "0",
            ws_impl=env.get("SOLITAIRE_WS_IMPL", base.ws_impl),
        )
