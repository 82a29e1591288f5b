"""``solitaire watch``, ``verify`` and ``deal``: a game looked at without playing it."""

from __future__ import annotations

from client.cli.invocation import Cli, Subcommands, show
from client.core import SolitaireClient
from client.deals import deal
from client.game import GameHandle
from client.verify import describe, verify_game

QUIET_S = 30.0  # no push for this long: the connection is checked (a ping, reconnecting if dead)


async def watch(cli: Cli) -> int:
    """Follow a game until it ends; a dropped connection is resumed (the client reconnects and
    watches again), and the moves missed meanwhile are said as a catch-up to the current seq."""
    async with cli.client(anonymous=not cli.token) as client:
        game = await client.watch(cli.args.game_id)
        cli.say(f"watching {game.id} by {game.info.owner.name}")
        show(cli, game.state)
        seen, version, connects = game.state.seq, game.version, client.connects
        while not game.finished:
            try:
                version = await game.wait_change(version, timeout=QUIET_S)
            except TimeoutError:
                await client.ping()  # a silent connection is found dead here, and resumed
                continue
            if client.connects != connects:
                connects = client.connects
                cli.say(f"reconnected: caught up from #{seen} to #{game.state.seq}")
            seen = say_updates(cli, game, seen)
            show(cli, game.state)
        cli.say(f"finished: {game.info.result or game.state.status}")
    return 0


def say_updates(cli: Cli, game: GameHandle, seen: int) -> int:
    """Say every pushed move from seq ``seen`` on; returns the seq to say from next."""
    for update in [u for u in game.updates if u.seq >= seen]:
        cli.say(f"#{update.seq} {game.info.owner.name}: {update.action.to_text()}")
        seen = update.seq + 1
    return max(seen, game.state.seq)


async def verify(cli: Cli) -> int:
    client = SolitaireClient(cli.server)
    verdict = await verify_game(client.http, cli.args.game_id)
    cli.say(describe(verdict))
    return 0 if verdict.ok else 1


async def show_deal(cli: Cli) -> int:
    dealt = deal(cli.args.code)
    cli.say(dealt.text)
    return 0


def add_commands(commands: Subcommands) -> None:
    """``watch GAME_ID``, ``verify GAME_ID`` and ``deal CODE``."""
    commands.add("watch", "watch a game live", watch).add_argument("game_id")
    commands.add("verify", "replay a finished game and check its result", verify).add_argument("game_id")
    commands.add("deal", "print the deal a code stands for", show_deal).add_argument("code")
