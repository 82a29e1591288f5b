"""Table definitions. Times are integer milliseconds since the Unix epoch (UTC).

Integers rather than timestamps keep SQLite and PostgreSQL identical and make
the game clock (sums of capped gaps) exact. Migrations must match this file;
a test compares them on both databases.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Player(Base):
    """A player. Migration 0005: no two names share a key of ``names.model.name_keys`` (case
    folded, lookalikes folded); the keys are nullable only because SQLite cannot add a NOT NULL
    column in place: the server always sets them."""

    __tablename__ = "players"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str] = mapped_column(String(32))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    name_fold: Mapped[str | None] = mapped_column(String(128))
    name_skeleton: Mapped[str | None] = mapped_column(String(128))
    # Migration 0006: a bot says so when it is created and ranks on the bots' boards only;
    # a banned player's games stop counting and their entries are hidden.
    kind: Mapped[str] = mapped_column(String(8), server_default="human")
    banned_ms: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (
        Index("uq_players_name_fold", "name_fold", unique=True),
        Index("uq_players_name_skeleton", "name_skeleton", unique=True),
    )


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), index=True)
    code: Mapped[str] = mapped_column(String(24), index=True)
    status: Mapped[str] = mapped_column(String(12))
    result: Mapped[str | None] = mapped_column(String(12))
    score: Mapped[int] = mapped_column(Integer, default=0)
    moves: Mapped[int] = mapped_column(Integer, default=0)
    seq: Mapped[int] = mapped_column(Integer, default=0)
    progress: Mapped[int] = mapped_column(Integer, default=0)
    undos: Mapped[int] = mapped_column(Integer, default=0)
    elapsed_ms: Mapped[int] = mapped_column(BigInteger, default=0)
    fingerprint: Mapped[str] = mapped_column(String(16))
    created_ms: Mapped[int] = mapped_column(BigInteger)
    last_action_ms: Mapped[int | None] = mapped_column(BigInteger)
    finished_ms: Mapped[int | None] = mapped_column(BigInteger)
    daily_day: Mapped[str | None] = mapped_column(String(10))
    ranked: Mapped[bool] = mapped_column(Boolean, default=True)
    race_id: Mapped[str | None] = mapped_column(String(16), index=True)

    __table_args__ = (
        Index("ix_games_player_code", "player_id", "code"),
        # Migration 0002: one ranked attempt per player per daily code, enforced by the database.
        Index(
            "uq_games_daily_ranked",
            "player_id",
            "code",
            unique=True,
            sqlite_where=text("daily_day IS NOT NULL AND ranked"),
            postgresql_where=text("daily_day IS NOT NULL AND ranked"),
        ),
        # Migration 0002: the day-end sweep finds open ranked daily attempts without a scan.
        Index(
            "ix_games_open_daily",
            "daily_day",
            sqlite_where=text("daily_day IS NOT NULL AND ranked AND result IS NULL"),
            postgresql_where=text("daily_day IS NOT NULL AND ranked AND result IS NULL"),
        ),
        # Migration 0004: the live games list (open games, most recently active first).
        Index(
            "ix_games_live",
            "last_action_ms",
            sqlite_where=text("result IS NULL"),
            postgresql_where=text("result IS NULL"),
        ),
        # Migration 0007: a player's history, newest first, paged by (created_ms, id).
        Index("ix_games_player_created", "player_id", "created_ms", "id"),
    )


GAME_STATE_COLUMNS = (  # what each change of a live game writes to its row (the group writer's update)
    "status",
    "result",
    "score",
    "moves",
    "seq",
    "progress",
    "undos",
    "elapsed_ms",
    "fingerprint",
    "last_action_ms",
    "finished_ms",
)


class ActionRow(Base):
    """Every accepted action of a game, in order, undos included: the game's replay log."""

    __tablename__ = "actions"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    action: Mapped[str] = mapped_column(String(64))  # the engine's text form
    at_ms: Mapped[int] = mapped_column(BigInteger)


class DailyChallenge(Base):
    __tablename__ = "daily_challenges"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    family: Mapped[str] = mapped_column(String(8), primary_key=True)  # HH1-N, SH1-C4 ...
    code: Mapped[str] = mapped_column(String(24), unique=True)
    solution_length: Mapped[int | None] = mapped_column(Integer)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    # Migration 0006: the random salt of the day's commitment, published with the code.
    salt: Mapped[str | None] = mapped_column(String(32))


class LeaderboardEntry(Base):
    """One entry per player per code: the best counted attempt."""

    __tablename__ = "leaderboard_entries"

    code: Mapped[str] = mapped_column(String(24), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    game_id: Mapped[str] = mapped_column(String(16))
    won: Mapped[bool] = mapped_column(Boolean)
    progress: Mapped[int] = mapped_column(Integer)
    moves: Mapped[int] = mapped_column(Integer)
    elapsed_ms: Mapped[int] = mapped_column(BigInteger)
    score: Mapped[int] = mapped_column(Integer)
    undos: Mapped[int] = mapped_column(Integer)
    result: Mapped[str] = mapped_column(String(12))
    finished_ms: Mapped[int] = mapped_column(BigInteger)
    sort_key: Mapped[int] = mapped_column(BigInteger)  # one ascending key for the ranking order
    # Migration 0006: whose board (people or bots), the review standing (ok, flagged, cleared,
    # confirmed, removed) and whether the entry is in the default view (an unreviewed flag, a
    # confirmed one, a removed entry and a banned player's are not); only listed entries are
    # counted in leaderboard_counts, so ranks are those of the default view.
    kind: Mapped[str] = mapped_column(String(8), server_default="human")
    standing: Mapped[str] = mapped_column(String(12), server_default="ok")
    listed: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))

    __table_args__ = (Index("ix_leaderboard_board", "code", "kind", "listed", "sort_key", "player_id"),)


class LeaderboardCount(Base):
    """Migration 0003: how many entries of a code fall in each bucket of ``sort_key`` prefixes.

    Three levels (``sort_key`` shifted right by 56, 36 and 16 bits: won and
    progress; then moves; then time in 65.5 s steps) make a rank a sum over a
    few hundred bucket rows plus a count of the few entries in the player's
    own smallest bucket, instead of a count over every better entry.
    """

    __tablename__ = "leaderboard_counts"

    code: Mapped[str] = mapped_column(String(24), primary_key=True)
    level: Mapped[int] = mapped_column(Integer, primary_key=True)
    bucket: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    # Migration 0012: the top level's counts are spread over ``SHARDS`` rows per bucket (any
    # shard takes any change: only their sum means anything), so results do not queue on them.
    shard: Mapped[int] = mapped_column(Integer, primary_key=True, server_default="0")
    entries: Mapped[int] = mapped_column(Integer)


class Race(Base):
    __tablename__ = "races"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    code: Mapped[str] = mapped_column(String(24))
    owner_id: Mapped[str] = mapped_column(ForeignKey("players.id"))
    status: Mapped[str] = mapped_column(String(12))  # open, countdown, running, finished
    created_ms: Mapped[int] = mapped_column(BigInteger)
    starts_ms: Mapped[int | None] = mapped_column(BigInteger)


class RaceEntry(Base):
    __tablename__ = "race_entries"

    race_id: Mapped[str] = mapped_column(ForeignKey("races.id"), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    game_id: Mapped[str | None] = mapped_column(String(16))
    joined_ms: Mapped[int] = mapped_column(BigInteger)


class ServerSecret(Base):
    """Migration 0006: the secret daily codes derive from, generated on first start and shared
    by every instance on the database (``SOLITAIRE_SECRET`` overrides it)."""

    __tablename__ = "server_secrets"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class ResultSignal(Base):
    """Migration 0006: what the server measured of a ranked result: think time from its own
    timestamps at finish, the solver's comparison later (``analysed_ms`` set)."""

    __tablename__ = "result_signals"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    code: Mapped[str] = mapped_column(String(24))
    player_id: Mapped[str] = mapped_column(String(16), index=True)
    finished_ms: Mapped[int] = mapped_column(BigInteger)
    actions: Mapped[int] = mapped_column(Integer)
    moves: Mapped[int] = mapped_column(Integer)
    median_gap_ms: Mapped[int] = mapped_column(Integer)
    min_gap_ms: Mapped[int] = mapped_column(Integer)
    gap_spread_ms: Mapped[int] = mapped_column(Integer)  # standard deviation of the gaps
    undos: Mapped[int] = mapped_column(Integer)
    reasons: Mapped[str] = mapped_column(String(128))  # the thresholds crossed, comma-separated
    solver_length: Mapped[int | None] = mapped_column(Integer)
    extra_moves: Mapped[int | None] = mapped_column(Integer)
    solver_line: Mapped[bool | None] = mapped_column(Boolean)
    analysed_ms: Mapped[int | None] = mapped_column(BigInteger)
    # Migration 0009: every figure the thresholds read, as JSON (features.screening.model.TimeSignals)
    evidence: Mapped[str | None] = mapped_column(Text)


class AdminToken(Base):
    """Migration 0006: an operator's token, stored as SHA-256 like players' tokens.

    Migration 0011: it may expire (``expires_ms``) and be revoked (``revoked_ms``); either
    way it is refused from then on, and the row stays for the audit log's sake."""

    __tablename__ = "admin_tokens"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    name: Mapped[str] = mapped_column(String(32))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_ms: Mapped[int] = mapped_column(BigInteger)
    expires_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    revoked_ms: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class AuditEntry(Base):
    """Migration 0006: every operator action: who, what, on what, when and why."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at_ms: Mapped[int] = mapped_column(BigInteger, index=True)
    admin_id: Mapped[str] = mapped_column(String(16))
    admin_name: Mapped[str] = mapped_column(String(32))
    action: Mapped[str] = mapped_column(String(24))
    target: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(String(500))
    details: Mapped[str] = mapped_column(String(500))


class GameLease(Base):
    """Migration 0008: which instance owns a live game, and its fencing token.

    Only written with several instances (``--redis-url``): taking a game adds
    one to ``token`` (waiting for the row lock of any commit still running for
    the old owner), and every commit for the game checks, in its own
    transaction and under that lock, that the token is still the one it took.
    """

    __tablename__ = "game_leases"

    game_id: Mapped[str] = mapped_column(ForeignKey("games.id"), primary_key=True)
    token: Mapped[int] = mapped_column(BigInteger)
    holder: Mapped[str] = mapped_column(String(64))


class Account(Base):
    """Migration 0007: a player claimed with a username and a password (argon2id, never in clear).

    Usernames are unique by the same two keys as names (``names.model.name_keys``)."""

    __tablename__ = "accounts"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    username: Mapped[str] = mapped_column(String(32))
    username_fold: Mapped[str] = mapped_column(String(128))
    username_skeleton: Mapped[str] = mapped_column(String(128))
    password_hash: Mapped[str] = mapped_column(String(256))
    created_ms: Mapped[int] = mapped_column(BigInteger)
    password_changed_ms: Mapped[int] = mapped_column(BigInteger)

    __table_args__ = (
        Index("uq_accounts_username_fold", "username_fold", unique=True),
        Index("uq_accounts_username_skeleton", "username_skeleton", unique=True),
    )


class PlayerSession(Base):
    """Migration 0007: one logged-in device of a player; the token is stored only as its hash."""

    __tablename__ = "player_sessions"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(64))
    created_ms: Mapped[int] = mapped_column(BigInteger)


class PlayerStats(Base):
    """Migration 0007: a player's running totals on one variant (``HH1-N``, ``SH1-C4`` …),
    changed in the transaction that finishes each game, so reading them scans nothing."""

    __tablename__ = "player_stats"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    family: Mapped[str] = mapped_column(String(8), primary_key=True)
    played: Mapped[int] = mapped_column(Integer)
    won: Mapped[int] = mapped_column(Integer)
    current_streak: Mapped[int] = mapped_column(Integer)
    best_streak: Mapped[int] = mapped_column(Integer)
    best_moves: Mapped[int | None] = mapped_column(Integer)
    won_moves: Mapped[int] = mapped_column(BigInteger)  # sum over wins, for the average
    best_time_ms: Mapped[int | None] = mapped_column(BigInteger)
    won_time_ms: Mapped[int] = mapped_column(BigInteger)  # sum over wins, for the average
    last_finished_ms: Mapped[int] = mapped_column(BigInteger)


class PlayerDailyStats(Base):
    """Migration 0007: a player's daily totals: days played, streaks, ranks once days ended.

    ``percentiles`` counts the player's fixed daily percentiles 0..100 (a JSON
    list of 101 counts): the median is read from it without a scan."""

    __tablename__ = "player_daily_stats"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    days_played: Mapped[int] = mapped_column(Integer)
    last_day: Mapped[str] = mapped_column(String(10))
    current_streak: Mapped[int] = mapped_column(Integer)
    best_streak: Mapped[int] = mapped_column(Integer)
    best_rank: Mapped[int | None] = mapped_column(Integer)
    ranked: Mapped[int] = mapped_column(Integer)  # attempts whose rank is fixed
    percentiles: Mapped[str] = mapped_column(String(1024))


class PlayerDaily(Base):
    """Migration 0007: one finished ranked daily attempt; its rank and percentile are fixed
    once its day has ended (the board no longer changes), at the next read of the stats."""

    __tablename__ = "player_dailies"

    player_id: Mapped[str] = mapped_column(ForeignKey("players.id"), primary_key=True)
    code: Mapped[str] = mapped_column(String(24), primary_key=True)
    day: Mapped[str] = mapped_column(String(10))
    game_id: Mapped[str] = mapped_column(String(16))
    rank: Mapped[int | None] = mapped_column(Integer)
    entries: Mapped[int | None] = mapped_column(Integer)
    percentile: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (
        Index("ix_player_dailies_day", "player_id", "day"),
        # the dailies still waiting for their rank: found without reading the ranked ones
        Index(
            "ix_player_dailies_unranked",
            "player_id",
            "day",
            sqlite_where=text("rank IS NULL"),
            postgresql_where=text("rank IS NULL"),
        ),
    )


class LogHead(Base):
    """Migration 0010: the results log's one head row; every append takes it (``UPDATE …
    RETURNING``), so appends are serialized by the database, on any number of instances."""

    __tablename__ = "log_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    size: Mapped[int] = mapped_column(BigInteger)


class LogLeaf(Base):
    """Migration 0010: one leaf of the results log, its bytes as text (UTF-8 JSON)."""

    __tablename__ = "log_leaves"

    idx: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    kind: Mapped[str] = mapped_column(String(12))
    day: Mapped[str] = mapped_column(String(10))  # the daily's day: the leaf is sealed until it ends
    game_id: Mapped[str | None] = mapped_column(String(16), unique=True)  # a result's game
    leaf: Mapped[str] = mapped_column(Text)
    appended_ms: Mapped[int] = mapped_column(BigInteger)


class LogNode(Base):
    """Migration 0010: the hash of a perfect subtree of the log, written when its last leaf is:
    leaves ``[idx * 2**level, (idx + 1) * 2**level)``; level 0 holds the leaf hashes."""

    __tablename__ = "log_nodes"

    level: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    idx: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32))


class LogTreeHead(Base):
    """Migration 0010: a day's signed tree head (Ed25519 over its four fields' canonical JSON)."""

    __tablename__ = "log_tree_heads"

    day: Mapped[str] = mapped_column(String(10), primary_key=True)
    tree_size: Mapped[int] = mapped_column(BigInteger)
    root_hash: Mapped[str] = mapped_column(String(64))
    timestamp_ms: Mapped[int] = mapped_column(BigInteger)
    signature: Mapped[str] = mapped_column(String(128))
