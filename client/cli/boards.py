"""``solitaire daily`` and ``leaderboard``: the day's challenges, checked, and the boards they rank on."""

from __future__ import annotations

from typing import Any

from client.cli.format import table
from client.cli.invocation import Cli, Subcommands
from client.core import SolitaireClient
from client.daily import verify_day
from client.errors import SolitaireError
from client.http import HttpApi
from client.render import clock


async def daily(cli: Cli) -> int:
    body = await SolitaireClient(cli.server).http.daily(cli.args.day)
    cli.say(f"daily challenges for {body['day']}" + (" (today, sealed)" if body.get("sealed") else ""))
    if body.get("sealed"):  # only the commitments: the codes are published when the day ends
        for family, challenge in body["challenges"].items():
            cli.say(f"  {family:8} commitment {challenge['commitment']}")
    else:
        for checked in verify_day(body):
            verdict = "verified against its commitment" if checked.ok else f"NOT VERIFIED: {checked.reason}"
            cli.say(f"  {checked.family:8} {checked.code}  {verdict}")
    if body.get("today"):
        left = max(0, body["ends_at"] - body["now"]) // 60000
        cli.say(
            f"next challenges in {left // 60} h {left % 60:02d} min;  play one: solitaire play SH --daily"
        )
        return 0
    return 0 if all(c.ok for c in verify_day(body)) else 1


async def leaderboard(cli: Cli) -> int:
    """A code's board; without a code, each of today's daily challenges' boards."""
    http = SolitaireClient(cli.server).http
    if cli.args.code:
        return await show_board(cli, http, cli.args.code, cli.args.day, cli.args.limit)
    today = await http.daily()
    for family in today["challenges"]:
        await show_board(cli, http, family, today["day"], cli.args.limit)
    return 0


async def show_board(cli: Cli, http: HttpApi, code: str, day: str | None, limit: int) -> int:
    """One board: a code's, or a family's daily (SH1-C2) of ``day`` (default today), by day and family."""
    target = code.strip().upper()
    daily = target.count("-") == 1
    if daily:
        day = day or (await http.daily())["day"]
        body = await http.daily_leaderboard(day, target, limit)
        cli.say(f"{target} daily of {day}" + (f" ({body['code']})" if body["code"] else "") + ":")
    else:
        body = await http.leaderboard(target, limit)
        cli.say(f"leaderboard {body['code']}")
    print_entries(cli, body["entries"])
    account = cli.config.account(cli.server)
    if account is not None:
        try:
            if daily:
                mine = await http.daily_rank(body["day"], target, account["id"], 2)
            else:
                mine = await http.rank(body["code"], account["id"], 2)
        except SolitaireError:
            return 0
        cli.say(f"your rank: {mine['rank']}")
        print_entries(cli, mine["entries"])
    return 0


BOARD_COLUMNS = ("rank", "player", "result", "moves", "time", "score")


def print_entries(cli: Cli, entries: list[dict[str, Any]]) -> None:
    if not entries:
        cli.say("  (no entries yet)")
        return
    rows = [
        (
            f"{e['rank']}.",
            e["player"]["name"],
            "won" if e["won"] else f"{e['result']} {e['progress']}",
            str(e["moves"]),
            clock(e["elapsed_ms"]),
            str(e["score"]),
        )
        for e in entries
    ]
    for line in table(BOARD_COLUMNS, rows, left=3):
        cli.say("  " + line)


def add_commands(commands: Subcommands) -> None:
    """``daily [DAY]`` and ``leaderboard [CODE]``."""
    commands.add("daily", "show the daily challenges", daily).add_argument(
        "day", nargs="?", help="YYYY-MM-DD (default today)"
    )
    about = "show a code's leaderboard, or a family's daily (default: today's dailies)"
    lb = commands.add("leaderboard", about, leaderboard)
    lb.add_argument("code", nargs="?", help="a code, or a family (SH1-C2) for its daily challenge")
    lb.add_argument("--day", help="with a family: that day's daily (YYYY-MM-DD, default today)")
    lb.add_argument("--limit", type=int, default=10)
