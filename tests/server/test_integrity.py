"""Competition integrity over real WebSockets and HTTP, with an injected clock, on both databases.

A daily leaks nothing to a second player during its day (line, board, code,
through any route or message) and everything after it; its commitment
verifies; servers without a configured secret publish different dailies; a
scripted solver line is flagged and a paced replay of it is not; bots rank
apart; an operator's ban hides a player's entry and is audited.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from client.daily import verify_day
from engine import Action, Game, random_code
from engine.solver import solve
from server.config import Screening, Settings
from server.features.dailies.model import candidate
from server.rules.days import DAY_MS, day_of, day_start_ms
from tests.server.competing import daily_board, stored_daily_codes, whole_board
from tests.server.screening_corpus import ATTACKS, person
from tests.support import ONE_ADDRESS, Client, ManualClock, ahttp, new_player, running_server

ROOT = Path(__file__).resolve().parents[2]
START_MS = day_start_ms("2032-06-01") + 9 * 3_600_000  # 09:00 UTC
SECRET = "integrity-test-secret"


@pytest.fixture(scope="module")
def clock(database_url: str) -> ManualClock:
    return ManualClock(START_MS)


@pytest.fixture(scope="module")
def screened(database_url: str, clock: ManualClock) -> Iterator[str]:
    """A server with the default screening thresholds (the shared fixtures turn them off)."""
    settings = Settings(database_url=database_url, secret=SECRET, limits=ONE_ADDRESS, screening=Screening())
    with running_server(settings, clock) as base:
        yield base


def solver_line(code: str) -> list[Action]:
    answer = solve(code, 200_000)
    assert answer.result == "won" and answer.actions is not None, (code, answer.result)
    return answer.actions


def with_detour(line: list[Action]) -> list[Action]:
    """A person's line: the first move taken back and played again (not the solver's exact line)."""
    return [line[0], Action.from_json({"type": "undo"}), *line]


def human_gaps(count: int, seed: int) -> list[int]:
    """Gaps paced like a person of the screening corpus (a motor time plus a heavy-tailed think)."""
    return person(random.Random(seed), count)


def won_hh_code(min_moves: int = 30) -> tuple[str, list[Action]]:
    """A fresh Heart to Heart code the solver wins in at least ``min_moves`` moves."""
    rng = random.Random()
    for _ in range(200):
        code = str(random_code("HH", "N", rng.getrandbits(35)))
        answer = solve(code, 50_000)
        if answer.actions is not None and Game.replay(code, answer.actions).moves >= min_moves:
            return code, answer.actions
    pytest.fail("no Heart to Heart deal the solver wins within its budget")


async def paced_play(
    client: Client, clock: ManualClock, game_id: str, line: list[Action], gaps: list[int]
) -> dict[str, Any]:
    """Play a line, moving the server's clock by ``gaps[i]`` ms before action ``i``."""
    state: dict[str, Any] = {}
    for seq, (action, gap) in enumerate(zip(line, gaps, strict=True)):
        clock.advance(gap)
        reply = await client.act(game_id, seq, **action.to_json())
        assert reply["type"] == "result", reply
        state = reply["state"]
    return state


async def refused(client: Client, kind: str, **fields: Any) -> str:
    reply = await client.request(kind, **fields)
    assert reply["type"] == "error", reply
    return str(reply["code"])


async def get(url: str, token: str | None = None) -> tuple[int, Any]:
    return await ahttp("GET", url, token=token)


# -- sealed dailies ------------------------------------------------------------------------------


async def test_a_second_player_gets_nothing_of_a_daily_until_its_day_ends(
    screened: str, database_url: str, clock: ManualClock
) -> None:
    base, day = screened, day_of(clock.now)
    sealed_day = (await get(f"{base}/api/daily"))[1]
    assert sealed_day["sealed"] is True and "codes" not in sealed_day
    leader = await new_player(base, "Leader")
    rival = await new_player(base, "Rival")
    lead = await Client.connect(base, leader["token"])
    other = await Client.connect(base, rival["token"])
    started = await lead.request("new_game", daily="SH1-C4")
    game_id = started["game"]["id"]
    assert started["game"]["code"] is None and started["state"]["code"] is None
    assert (started["game"]["daily"], started["game"]["family"]) == (day, "SH1-C4")
    code = (await stored_daily_codes(database_url, day))["SH1-C4"]
    line = solver_line(code)
    line = with_detour(line)
    gaps = human_gaps(len(line), seed=1)

    half = len(line) // 2
    await paced_play(lead, clock, game_id, line[:half], gaps[:half])
    # while it is played: no watching, no board, no listing
    assert await refused(other, "watch", game_id=game_id) == "sealed"
    assert await refused(other, "open_game", game_id=game_id) == "sealed"
    for token in (None, rival["token"]):
        status, body = await get(f"{base}/api/games/{game_id}", token)
        assert status == 403 and body["error"]["code"] == "sealed", body
        assert body["error"]["opens_at"] == day_start_ms(day) + DAY_MS
    listed = (await get(f"{base}/api/games?limit=100"))[1]["games"]
    assert game_id not in {g["id"] for g in listed}
    status, mine = await get(f"{base}/api/games/{game_id}", leader["token"])  # the player sees their own
    assert status == 200 and mine["state"]["code"] is None and mine["game"]["code"] is None
    for state_seq, (action, gap) in enumerate(zip(line[half:], gaps[half:], strict=True), half):
        clock.advance(gap)
        reply = await lead.act(game_id, state_seq, **action.to_json())
        assert reply["type"] == "result" and reply["state"]["code"] is None, reply
    assert reply["state"]["status"] == "won"

    # finished, still during the day: no line, verification, solution or board by code
    for path in ("actions", "verify", "solution"):
        for token in (None, rival["token"]):
            status, body = await get(f"{base}/api/games/{game_id}/{path}", token)
            assert status == 403 and body["error"]["code"] == "sealed", (path, body)
    assert await refused(other, "solution", game_id=game_id) == "sealed"
    assert await refused(other, "open_game", game_id=game_id) == "sealed"
    status, own_log = await get(f"{base}/api/games/{game_id}/actions", leader["token"])
    assert status == 200 and own_log["code"] is None and len(own_log["actions"]) == len(line)
    status, body = await get(f"{base}/api/leaderboards/{code}")
    assert status == 403 and body["error"]["code"] == "sealed"
    assert await refused(other, "subscribe_leaderboard", code=code) == "sealed"
    assert await refused(other, "race_open", code=code) == "sealed"
    board = await daily_board(base, day, "SH1-C4")
    assert board["code"] is None and [e["game_id"] for e in board["entries"]] == [game_id]
    feed = await other.request("subscribe_leaderboard", day=day, family="sh1-c4")
    assert feed["type"] == "leaderboard" and feed["code"] is None and feed["entries"][0]["game_id"] == game_id
    seen = json.dumps([*other.pushed, feed, board, sealed_day, listed])
    assert code not in seen and code.rsplit("-", 1)[1] not in seen

    clock.advance(DAY_MS)  # the day is over: everything opens
    status, opened = await get(f"{base}/api/games/{game_id}/actions")
    assert status == 200 and opened["code"] == code
    assert [a["action"] for a in opened["actions"]] == [a.to_text() for a in line]  # the leader's line
    status, verified = await get(f"{base}/api/games/{game_id}/verify")
    assert status == 200 and verified["ok"] and verified["code"] == code
    status, solution = await get(f"{base}/api/games/{game_id}/solution", rival["token"])
    assert status == 200 and solution["winnable"] is True
    watched = await other.request("open_game", game_id=game_id)
    assert watched["type"] == "game" and watched["role"] == "spectator"
    status, by_code = await get(f"{base}/api/leaderboards/{code}")
    assert status == 200 and by_code["entries"][0]["game_id"] == game_id
    assert (await daily_board(base, day, "SH1-C4"))["code"] == code
    status, published = await get(f"{base}/api/daily/{day}")
    assert status == 200 and published["codes"]["SH1-C4"] == code
    checks = verify_day(published, earlier=sealed_day)  # the client library's check
    assert len(checks) == 4 and all(c.ok for c in checks), checks
    command = [sys.executable, "-m", "client.cli", "--server", base, "daily", day]  # and the CLI's
    shown = await asyncio.to_thread(
        subprocess.run, command, capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert shown.returncode == 0 and shown.stdout.count("verified against its commitment") == 4, shown
    tampered = json.loads(json.dumps(published))
    tampered["challenges"]["SH1-C4"]["code"] = str(random_code("SH", "C4", 5))
    assert not next(c for c in verify_day(tampered) if c.family == "SH1-C4").ok
    await lead.close()
    await other.close()


def server_log(records: list[logging.LogRecord]) -> str:
    return "\n".join(r.getMessage() for r in records)


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


async def test_servers_without_a_secret_generate_one_each_and_keep_published_days(
    database_url: str, tmp_path: Path
) -> None:
    clock = ManualClock(day_start_ms("2033-01-10") + 3_600_000)  # a day no other test uses
    day = day_of(clock.now)
    handler = Captured()
    logger = logging.getLogger("server.features.dailies.service")
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.INFO)
    elsewhere = f"sqlite+aiosqlite:///{tmp_path / 'other.db'}"
    try:
        with (
            running_server(Settings(database_url=database_url, limits=ONE_ADDRESS), clock) as one,
            running_server(Settings(database_url=elsewhere, limits=ONE_ADDRESS), clock) as two,
        ):
            first, second = [(await get(f"{b}/api/daily"))[1] for b in (one, two)]
        codes_one = await stored_daily_codes(database_url, day)
        codes_two = await stored_daily_codes(elsewhere, day)
        assert not set(codes_one.values()) & set(codes_two.values())
        assert all(first["challenges"][f] != second["challenges"][f] for f in first["challenges"])
        assert "generated" in server_log(handler.records) and "stored in the database" in server_log(
            handler.records
        )
        # a restart on the same database agrees with itself: the secret is stored, not made again
        clock.advance(DAY_MS)
        with running_server(Settings(database_url=database_url, limits=ONE_ADDRESS), clock) as again:
            assert (await get(f"{again}/api/daily/{day}"))[1]["codes"] == codes_one
            await get(f"{again}/api/daily")
        next_day = day_of(clock.now)
        restarted = await stored_daily_codes(database_url, next_day)
        # an explicit SOLITAIRE_SECRET wins, and changing it leaves published days as they were
        clock.advance(DAY_MS)
        explicit = Settings(database_url=database_url, secret="explicit-secret", limits=ONE_ADDRESS)
        with running_server(explicit, clock) as third:
            assert (await get(f"{third}/api/daily/{day}"))[1]["codes"] == codes_one
            assert (await get(f"{third}/api/daily/{next_day}"))[1]["codes"] == restarted
            await get(f"{third}/api/daily")
        newest = await stored_daily_codes(database_url, day_of(clock.now))
        chosen = {str(candidate("explicit-secret", day_of(clock.now), "HH1-N", n)) for n in range(30)}
        assert newest["HH1-N"] in chosen
        logged = server_log(handler.records)
        assert "SOLITAIRE_SECRET" in logged and "explicit-secret" not in logged
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


# -- cheat signals, bots, moderation --------------------------------------------------------------


async def stored_rows(database_url: str, sql: str) -> list[dict[str, Any]]:
    from sqlalchemy import text

    from server.storage.db import make_engine

    engine = make_engine(database_url)
    try:
        async with engine.connect() as conn:
            return [dict(r._mapping) for r in await conn.execute(text(sql))]
    finally:
        await engine.dispose()


def admin_cli(database_url: str, *args: str) -> Any:
    """``solitaire-server admin …`` as an operator runs it; its JSON output."""
    command = [sys.executable, "-m", "server.cli", "admin", "--database-url", database_url, *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr + done.stdout
    return json.loads(done.stdout)


async def admin(method: str, base: str, path: str, token: str | None, body: Any = None) -> tuple[int, Any]:
    return await ahttp(method, f"{base}/api/admin/{path}", body, token=token)


async def wait_signals(base: str, token: str, game_id: str, standing: str, timeout: float = 60) -> Any:
    """The signals of a result once the solver has compared it (off the action path)."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = await admin("GET", base, f"flagged?standing={standing}&limit=200", token)
        assert status == 200, body
        found = next((r for r in body["results"] if r["game_id"] == game_id), None)
        if found is not None and found["signals"]["analysed_at"] is not None:
            return found
        assert time.monotonic() < deadline, f"the solver never compared {game_id}: {found}"
        await asyncio.sleep(0.1)


async def play_as(
    base: str,
    clock: ManualClock,
    code: str,
    line: list[Action],
    gaps: list[int],
    name: str,
    bot: bool = False,
) -> tuple[dict[str, Any], str]:
    status, player = await ahttp("POST", f"{base}/api/players", {"name": name, "bot": bot})
    assert status == 201 and player["bot"] is bot, player
    client = await Client.connect(base, player["token"])
    game_id = (await client.request("new_game", code=code))["game"]["id"]
    state = await paced_play(client, clock, game_id, line, gaps)
    assert state["status"] == "won"
    await client.close()
    return dict(player), game_id


async def test_a_scripted_line_is_flagged_a_paced_one_is_not_and_operators_act(
    screened: str, database_url: str, clock: ManualClock
) -> None:
    base = screened
    code, line = won_hh_code()
    watcher = await Client.connect(base)
    await watcher.request("subscribe_leaderboard", code=code)

    scripted, scripted_game = await play_as(base, clock, code, line, [20] * len(line), "Scripted")
    detour = with_detour(line)
    paced, paced_game = await play_as(base, clock, code, detour, human_gaps(len(detour), seed=3), "Paced")
    robot, robot_game = await play_as(base, clock, code, line, [20] * len(line), "Robot", bot=True)

    # the flag exists before the result could show: the first push is the paced result's
    pushed = await watcher.next_push("leaderboard_update")
    assert pushed["entry"]["game_id"] == paced_game and pushed["entry"]["standing"] == "ok"
    board = await whole_board(base, code)
    assert [e["game_id"] for e in board] == [paced_game]  # the default view: people, unflagged
    status, marked = await get(f"{base}/api/leaderboards/{code}?include=flagged")
    assert status == 200
    assert {e["game_id"]: e["standing"] for e in marked["entries"]} == {
        paced_game: "ok",
        scripted_game: "flagged",
    }
    status, bots = await get(f"{base}/api/leaderboards/{code}?kind=bot")
    assert status == 200 and [e["game_id"] for e in bots["entries"]] == [robot_game]  # bots apart
    assert bots["entries"][0]["rank"] == 1 and bots["entries"][0]["standing"] == "ok"
    status, profile = await get(f"{base}/api/players/{robot['id']}")
    assert status == 200 and profile["bot"] is True and profile["banned"] is False

    # operators: a token made on the command line, stored hashed; nobody else gets in
    made = admin_cli(database_url, "--operator", "alice", "create-token", "alice")
    token = made["token"]
    assert token.startswith("sa_")
    stored = await stored_rows(database_url, "SELECT * FROM admin_tokens")
    assert [r["token_hash"] for r in stored if r["id"] == made["id"]] == [
        hashlib.sha256(token.encode()).hexdigest()
    ]
    assert token not in json.dumps(stored)  # only its hash is kept
    for wrong in (None, scripted["token"], "sa_not-a-token"):
        status, body = await admin("GET", base, "flagged", wrong)
        assert status == 401 and body["error"]["code"] == "bad_token", body
    flagged = await wait_signals(base, token, scripted_game, "flagged")
    signals = flagged["signals"]
    assert sorted(signals["reasons"]) == ["even", "fast", "flat", "inhuman", "streak"]
    assert signals["median_gap_ms"] == 20 and signals["min_gap_ms"] == 20 and signals["gap_spread_ms"] == 0
    assert signals["solver_line"] is True and signals["extra_moves"] == 0
    assert signals["solver_length"] == len(line) and signals["undos"] == 0
    assert signals["evidence"]["under_floor"] == 1.0 and signals["evidence"]["long_thinks"] == 0
    human = await wait_signals(base, token, paced_game, "ok")
    assert human["signals"]["reasons"] == [] and human["signals"]["solver_line"] is False
    assert human["signals"]["undos"] == 1 and human["signals"]["evidence"]["long_thinks"] > 0

    # review: a bad decision, an entry that was never flagged, then clearing the flag
    status, body = await admin("POST", base, f"results/{scripted_game}/approve", token, {"reason": "x"})
    assert status == 400 and body["error"]["code"] == "bad_message"
    status, body = await admin("POST", base, f"results/{paced_game}/confirm", token, {"reason": "x"})
    assert status == 409 and body["error"]["code"] == "conflict"
    status, body = await admin("POST", base, f"results/{scripted_game}/clear", token, {})
    assert status == 400 and body["error"]["field"] == "reason"
    status, cleared = await admin("POST", base, f"results/{scripted_game}/clear", token, {"reason": "asked"})
    assert status == 200 and cleared == {"game_id": scripted_game, "standing": "cleared", "listed": True}
    board = await whole_board(base, code)
    assert [e["game_id"] for e in board] == [scripted_game, paced_game]  # same moves, less time first

    # a ban: the player's entry disappears, their next games do not count, and it is audited
    status, banned = await admin(
        "POST", base, f"players/{paced['id']}/ban", token, {"reason": "shared account"}
    )
    assert status == 200 and banned["entries_hidden"] == 1
    assert [e["game_id"] for e in await whole_board(base, code)] == [scripted_game]
    assert [e["rank"] for e in await whole_board(base, code)] == [1]
    status, body = await get(f"{base}/api/leaderboards/{code}/players/{paced['id']}")
    assert status == 404
    again = await Client.connect(base, paced["token"])
    other_code = str(random_code("SH", "C4", random.Random().getrandbits(35)))
    later = await again.request("new_game", code=other_code)
    await again.request("resign", game_id=later["game"]["id"])
    await again.close()
    assert await whole_board(base, other_code) == []
    status, profile = await get(f"{base}/api/players/{paced['id']}")
    assert profile["banned"] is True

    status, renamed = await admin(
        "POST", base, f"players/{scripted['id']}/rename", token, {"name": "Quick Hands", "reason": "asked"}
    )
    assert status == 200 and renamed["name"] == "Quick Hands"
    assert (await get(f"{base}/api/players/{scripted['id']}"))[1]["name"] == "Quick Hands"

    status, audit = await admin("GET", base, "audit?limit=10", token)
    assert status == 200
    actions = [(e["action"], e["target"], e["admin"]["name"]) for e in audit["entries"]]
    assert actions[:3] == [
        ("rename_player", scripted["id"], "alice"),
        ("ban_player", paced["id"], "alice"),
        ("clear_flag", scripted_game, "alice"),
    ]
    ban = audit["entries"][1]
    assert ban["reason"] == "shared account" and ban["at"] == clock.now and "1 entries" in ban["details"]
    assert ("create_token", made["id"], "cli:alice") in [
        (e["action"], e["target"], e["admin"]["name"]) for e in audit["entries"]
    ]
    # the same log on the command line, and a ban from there too
    listed = admin_cli(database_url, "audit", "--limit", "5")
    assert listed["entries"][0]["action"] == "rename_player"
    admin_cli(database_url, "--operator", "bob", "ban", robot["id"], "--reason", "spam")
    status, bots = await get(f"{base}/api/leaderboards/{code}?kind=bot")
    assert bots["entries"] == []
    latest = (await admin("GET", base, "audit?limit=1", token))[1]["entries"][0]
    assert (latest["action"], latest["admin"]["name"], latest["reason"]) == ("ban_player", "cli:bob", "spam")
    await watcher.close()


async def test_a_bot_says_so_and_ranks_apart(screened: str, clock: ManualClock) -> None:
    code = str(random_code("SH", "C2", random.Random().getrandbits(35)))
    status, bot = await ahttp("POST", f"{screened}/api/players", {"name": "Beep", "bot": True})
    assert status == 201 and bot["bot"] is True
    client = await Client.connect(screened, bot["token"])
    game_id = (await client.request("new_game", code=code))["game"]["id"]
    await client.request("resign", game_id=game_id)
    await client.close()
    assert await whole_board(screened, code) == []
    status, bots = await get(f"{screened}/api/leaderboards/{code}?kind=bot")
    assert status == 200 and [e["game_id"] for e in bots["entries"]] == [game_id]
    status, body = await get(f"{screened}/api/leaderboards/{code}?kind=robot")
    assert status == 400 and body["error"]["field"] == "kind"


# Machine speed meets the message rate limit first; the 20 ms scripted line above is its case.
@pytest.mark.parametrize("attack", sorted(set(ATTACKS) - {"machine speed"}))
async def test_each_scripted_pacing_is_flagged_before_its_result_shows(
    screened: str, clock: ManualClock, attack: str
) -> None:
    """A line that is not the solver's (a detour in it), paced by each attack of the corpus."""
    code, line = won_hh_code()
    detour = with_detour(line)
    _, game_id = await play_as(
        screened, clock, code, detour, ATTACKS[attack](random.Random(7), len(detour)), f"Pacer {attack}"[:24]
    )
    assert await whole_board(screened, code) == []
    status, marked = await get(f"{screened}/api/leaderboards/{code}?include=flagged")
    assert status == 200 and [(e["game_id"], e["standing"]) for e in marked["entries"]] == [
        (game_id, "flagged")
    ]


async def test_the_solvers_exact_line_at_a_human_pace_is_held_for_review(
    screened: str, clock: ManualClock
) -> None:
    """Timing alone cannot tell it from a person; the solver's comparison takes it off the board."""
    code, line = won_hh_code()
    _, game_id = await play_as(screened, clock, code, line, human_gaps(len(line), seed=5), "Copier")
    deadline = time.monotonic() + 60
    while [e["game_id"] for e in await whole_board(screened, code)]:
        assert time.monotonic() < deadline, "the solver's comparison never held the result"
        await asyncio.sleep(0.1)
    status, marked = await get(f"{screened}/api/leaderboards/{code}?include=flagged")
    assert status == 200 and [(e["game_id"], e["standing"]) for e in marked["entries"]] == [
        (game_id, "flagged")
    ]
