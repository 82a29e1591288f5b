"""Helpers for the competition tests: finding lines of play, playing them, checking boards.

Games cannot be set up over the wire, so the tests search the engine locally
for a line of play (a win, a stalemate) on some code and then play that line
over a real WebSocket like any client would.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from engine import Action, Game, random_code
from engine.verify import verify_log
from server.config import Settings
from tests.support import ONE_ADDRESS, UNSCREENED, Client, ManualClock, ahttp, running_server

Line = list[Action]


def search(
    code: str, goal: str | Callable[[Game], bool], budget: int = 20_000, shuffle: int | None = None
) -> Line | None:
    """Depth-first search for actions reaching status ``goal``, or a state the predicate likes."""
    reached = goal if callable(goal) else (lambda game: game.status == goal)
    start = Game.new(code)
    seen: set[str] = set()
    stack: list[tuple[Game, Line]] = [(start, [])]
    while stack and len(seen) < budget:
        game, path = stack.pop()
        key = json.dumps(game.rules.snapshot(game.state), sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        if path and reached(game):
            return path
        if game.status == "won":
            continue
        actions = game.rules.legal_actions(game.state)
        if shuffle is not None:
            random.Random(shuffle + len(seen)).shuffle(actions)
        else:
            actions.sort(key=lambda a: a.kind == "pair")  # pairs are tried first
        stack.extend((game.apply(a).game, [*path, a]) for a in actions)
    return None


_WIN_CACHE: dict[str, tuple[str, Line]] = {}


def winnable_hh() -> tuple[str, Line]:
    """A Heart to Heart code and a winning line, found by search (many deals are winnable)."""
    if "hh" not in _WIN_CACHE:
        for i in range(200):
            code = str(random_code("HH", "N", i * 7919 + 13))
            line = search(code, "won")
            if line is not None:
                _WIN_CACHE["hh"] = (code, line)
                break
        else:
            pytest.fail("no winnable Heart to Heart deal found within the search budget")
    return _WIN_CACHE["hh"]


def random_line(code: str, seed: int, length: int) -> Line:
    """Up to ``length`` legal actions chosen at random (stops early at a won game)."""
    rng = random.Random(seed)
    game, line = Game.new(code), []
    for _ in range(length):
        actions = game.legal_actions()
        if not actions or game.status == "won":
            break
        action = rng.choice(actions)
        line.append(action)
        game = game.apply(action).game
    return line


def line_with_progress(code: str, length: int = 40) -> Line | None:
    """A line that makes progress above zero (random first, then a search); None if none exists."""
    for seed in range(50):
        line = random_line(code, seed, length)
        if Game.replay(code, line).progress > 0:
            return line
    return search(code, lambda game: game.progress > 0, budget=5000)


async def play(client: Client, game_id: str, line: Line, start_seq: int = 0) -> dict[str, Any]:
    """Play a line over the wire; returns the last state (every action must be accepted)."""
    state: dict[str, Any] = {}
    for seq, action in enumerate(line, start_seq):
        reply = await client.act(game_id, seq, **action.to_json())
        assert reply["type"] == "result", reply
        state = reply["state"]
    return state


async def verify_entry(base: str, entry: dict[str, Any]) -> None:
    """An entry must verify on the server and with the engine's verifier run here, on the public log."""
    status, body = await ahttp("GET", f"{base}/api/games/{entry['game_id']}/verify")
    assert status == 200 and body["ok"], body
    assert body["leaderboard"] is not None and body["leaderboard"]["ok"], body
    status, log = await ahttp("GET", f"{base}/api/games/{entry['game_id']}/actions")
    assert status == 200, log
    local = verify_log(log)
    assert local.ok, local
    assert local.replayed is not None
    assert local.replayed["moves"] == entry["moves"]
    assert local.replayed["score"] == entry["score"]
    assert local.replayed["progress"] == entry["progress"]
    assert (local.replayed["result"] == "won") == entry["won"]


async def whole_board(base: str, code: str, limit: int = 100) -> list[dict[str, Any]]:
    """Every entry of a board, read page by page through the cursor."""
    entries: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        url = f"{base}/api/leaderboards/{code}?limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        status, page = await ahttp("GET", url)
        assert status == 200, page
        entries.extend(page["entries"])
        cursor = page["next_cursor"]
        if cursor is None:
            return entries


def independent_ranking(entries: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The issue's order, computed from the shown fields (not from the server's sort key)."""

    def key(e: dict[str, Any]) -> tuple[Any, ...]:
        if e["won"]:
            return (0, 0, e["moves"], e["elapsed_ms"])
        return (1, -e["progress"], e["moves"], e["elapsed_ms"])

    return sorted(key(e) for e in entries)


def competition_ranks(entries: list[dict[str, Any]]) -> list[int]:
    """Competition ranks ("1224") of entries already in order, from the shown fields."""
    keys = [independent_ranking([e])[0] for e in entries]
    return [1 + sum(1 for other in keys if other < k) for k in keys]


async def stored_daily_codes(database_url: str, day: str) -> dict[str, str]:
    """A day's codes as the server stored them: while sealed, only the database knows them."""
    from sqlalchemy import text

    from server.storage.db import make_engine

    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text("SELECT family, code FROM daily_challenges WHERE day = :day"), {"day": day}
            )
            return {str(r.family): str(r.code) for r in rows}
    finally:
        await engine.dispose()


async def daily_board(base: str, day: str, family: str, **query: str) -> dict[str, Any]:
    """A daily challenge's board by day and family (the way while its day lasts)."""
    extra = "&".join(f"{k}={v}" for k, v in query.items())
    status, page = await ahttp("GET", f"{base}/api/daily/{day}/{family}/leaderboard?limit=100&{extra}")
    assert status == 200, page
    return dict(page)


@contextmanager
def clocked_server(database_url: str, clock: ManualClock, secret: str = "test-secret") -> Iterator[str]:
    settings = Settings(database_url=database_url, secret=secret, limits=ONE_ADDRESS, screening=UNSCREENED)
    with running_server(settings, clock=clock) as base:
        yield base
