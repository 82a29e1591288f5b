"""``solitaire log verify GAME_ID`` and ``log audit``: the server's results log, checked here.

Heads an audit verified are remembered in the configuration file, per server:
a later audit fails if the server ever shows another head for one of those days.
"""

from __future__ import annotations

from typing import Any

from client.cli.invocation import Cli, Subcommands
from client.http import HttpApi
from client.results_log import audit as audit_log
from client.results_log import verify_game

SEEN_KEY = "log_heads"  # config: server -> day -> the head an audit verified


async def verify(cli: Cli) -> int:
    verdict = await verify_game(HttpApi(cli.server), cli.args.game_id)
    leaf, head = verdict.leaf, verdict.head
    cli.say(f"game {verdict.game_id}: leaf {verdict.leaf_index} of the results log")
    cli.say(
        f"  {leaf.get('day')} {leaf.get('family')} {leaf.get('result')}: "
        f"score {leaf.get('score')}, {leaf.get('moves')} moves, {leaf.get('time_ms')} ms"
    )
    cli.say(f"  head of {head.get('day')}: {head.get('tree_size')} leaves, root {head.get('root_hash')}")
    cli.say(f"  inclusion proof: {'verified' if verdict.included else 'FAILS'}")
    cli.say(f"  head signature: {'verified' if verdict.signed else 'FAILS'}")
    for problem in verdict.problems:
        cli.say(f"  problem: {problem}")
    return 0 if verdict.ok else 1


def seen_heads(cli: Cli) -> dict[str, Any]:
    by_server = cli.config.data.setdefault(SEEN_KEY, {})
    found: dict[str, Any] = by_server.setdefault(cli.server, {})
    return found


async def audit(cli: Cli) -> int:
    seen = seen_heads(cli)
    report = await audit_log(HttpApi(cli.server), seen, cli.say)
    cli.say(f"public key {report.public_key}")
    if report.heads:
        first, last = report.heads[0], report.heads[-1]
        cli.say(f"heads {first['day']} to {last['day']}, {last['tree_size']} leaves in the newest")
    cli.say(f"signatures and consistency of {len(report.heads)} heads checked")
    cli.say(
        f"{report.leaves_checked} published leaves hashed: {report.heads_covered} of "
        f"{len(report.heads)} heads covered (the rest wait for leaves of days not yet over)"
    )
    for problem in report.problems:
        cli.say(f"PROBLEM: {problem}")
    if report.ok:
        for head in report.heads:
            seen[str(head["day"])] = head
        cli.config.save()
        cli.say("audit passed")
        return 0
    cli.say("AUDIT FAILED")
    return 1


def add_commands(commands: Subcommands) -> None:
    """``log verify GAME_ID`` and ``log audit``."""
    group = commands.nest("log", "check the server's signed results log")
    group.add(
        "verify", "check a daily game's inclusion proof and its day's signed head", verify
    ).add_argument("game_id")
    group.add("audit", "check every head's signature, their consistency and the published leaves", audit)
