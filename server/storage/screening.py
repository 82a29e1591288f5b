"""Queries of the cheat signals: one row per ranked result, the solver's part added later."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, func, select, update

from server.storage.db import Tx
from server.storage.dialect import upsert
from server.storage.models import ActionRow, GameRow, LeaderboardEntry, Player, ResultSignal
from wire import Standing

S = ResultSignal.__table__
T = LeaderboardEntry.__table__
P = Player.__table__
A = ActionRow.__table__
G = GameRow.__table__


async def player_kind(tx: Tx, player_id: str) -> tuple[str, bool]:
    """(kind, banned) of a player."""
    row = (await tx.execute(select(P.c.kind, P.c.banned_ms).where(P.c.id == player_id))).one()
    return str(row.kind), row.banned_ms is not None


async def insert_signals(tx: Tx, values: dict[str, Any]) -> None:
    """The signals of a ranked result, taken at its finish (one row per game)."""
    await tx.execute(upsert(tx, S).values(**values).on_conflict_do_nothing())


async def confirmed_since(tx: Tx, player_id: str, since_ms: int) -> int:
    """How many of a player's entries an operator confirmed as flagged, of results since ``since_ms``."""
    mine = (T.c.player_id == player_id) & (T.c.standing == Standing.CONFIRMED) & (T.c.finished_ms >= since_ms)
    return int((await tx.execute(select(func.count()).select_from(T).where(mine))).scalar_one())


async def add_reason(tx: Tx, game_id: str, reasons: str) -> None:
    """A result's reasons as they now stand (the solver's flag comes after the finish)."""
    await tx.execute(update(ResultSignal).where(S.c.game_id == game_id).values(reasons=reasons))


async def record_analysis(tx: Tx, game_id: str, values: dict[str, Any]) -> None:
    """The solver's comparison, added after the finish."""
    await tx.execute(update(ResultSignal).where(S.c.game_id == game_id).values(**values))


async def action_texts(tx: Tx, game_id: str) -> list[str]:
    query = select(A.c.action).where(A.c.game_id == game_id).order_by(A.c.seq)
    return [str(a) for a in (await tx.execute(query)).scalars()]


async def unanalysed(tx: Tx, limit: int) -> list[tuple[str, str]]:
    """(game id, code) of results the solver has not compared yet (after a restart)."""
    query = select(S.c.game_id, S.c.code).where(S.c.analysed_ms.is_(None)).limit(limit)
    return [(str(r.game_id), str(r.code)) for r in await tx.execute(query)]


async def signals_of(tx: Tx, game_id: str) -> Row[Any] | None:
    return (await tx.execute(select(S).where(S.c.game_id == game_id))).first()


async def entries_in(tx: Tx, standing: str, limit: int) -> Sequence[Row[Any]]:
    """Entries of one standing with their signals and player, oldest result first."""
    query = (
        select(
            T,
            P.c.name,
            G.c.daily_day,
            *[c.label(f"s_{c.name}") for c in S.c if c.name not in ("game_id", "code")],
        )
        .join(P, P.c.id == T.c.player_id)
        .outerjoin(G, G.c.id == T.c.game_id)
        .outerjoin(S, S.c.game_id == T.c.game_id)
        .where(T.c.standing == standing)
        .order_by(T.c.finished_ms, T.c.code, T.c.player_id)
        .limit(limit)
    )
    return (await tx.execute(query)).all()
