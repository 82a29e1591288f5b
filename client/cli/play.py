"""``solitaire play``: a game in the terminal, and the loop races play in too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.cli import prompt
from client.cli.format import describe_events
from client.cli.invocation import Cli, Subcommands, read_line, show
from client.core import SolitaireClient
from client.errors import IllegalActionError, SolitaireError
from client.game import GameHandle
from client.render import clock
from engine.vocabulary import Status


async def start_game(cli: Cli, client: SolitaireClient) -> GameHandle:
    args = cli.args
    if args.game_id:
        return await client.open_game(args.game_id)
    if args.code:
        return await client.new_game(args.code)
    game = (args.game or "").upper()
    if game not in ("HH", "SH"):
        raise SolitaireError("usage", "say which game: solitaire play HH, play SH, or --code CODE")
    if args.daily:
        family = "HH1-N" if game == "HH" else f"SH1-{(args.variant or 'C4').upper()}"
        return await client.new_game(daily=family)
    return await client.new_game(game=game, variant=args.variant.upper() if args.variant else None)


async def play(cli: Cli) -> int:
    cli.need_token()
    async with cli.client() as client:
        game = await start_game(cli, client)
        return await play_loop(cli, game)


async def play_loop(cli: Cli, game: GameHandle, between: Callable[[], None] | None = None) -> int:
    """Read commands until the game ends, the player quits or input ends."""
    cli.say(f"game {game.id}   (? for help, q to quit)")
    show(cli, game.state)
    while not game.finished:
        line = await read_line("> ", cli.out)
        if line is None:
            break
        try:
            parsed = prompt.parse(line, game.state.game)
        except prompt.CommandError as exc:
            cli.say(str(exc))
            continue
        if parsed == "quit":
            break
        await run_command(cli, game, parsed)
        if between is not None:
            between()
    return finish(cli, game)


async def run_command(cli: Cli, game: GameHandle, parsed: Any) -> None:
    if parsed == "help":
        cli.say(prompt.HELP[game.state.game])
        return
    if parsed == "board":
        show(cli, game.state)
        return
    try:
        if parsed == "resign":
            answer = await read_line("resign this game? y to confirm: ", cli.out)
            if (answer or "").strip().lower() not in ("y", "yes"):
                cli.say("not resigned")
                return
            await game.resign()
        else:
            result = await game.act(parsed)
            for line in describe_events(result.outcome.events, result.outcome.reason, cli.style):
                cli.say(line)
    except IllegalActionError as exc:
        cli.say(f"refused: {exc.message} ({exc.rule})")
        return
    show(cli, game.state)
    if game.state.status in (Status.STALEMATE, Status.STUCK):
        cli.say("No more possible moves: u to undo, r to resign, q to leave the game open")


def finish(cli: Cli, game: GameHandle) -> int:
    state = game.state
    if game.finished:
        cli.say(
            f"game over: {state.status}, score {state.score}, {state.moves} moves, {clock(state.elapsed_ms)}"
        )
    else:
        cli.say(f"the game stays open: solitaire play --game {game.id}")
    return 0


def add_commands(commands: Subcommands) -> None:
    """``play``: a new game (by game, variant, code or daily) or a reopened one."""
    p = commands.add("play", "play a game in the terminal", play)
    p.add_argument("game", nargs="?", help="HH or SH")
    p.add_argument("--variant", help="SH: C4 (default), C2 or C1")
    p.add_argument("--code", help="a game code such as SH1-C4-AAAAAJ2")
    p.add_argument("--daily", action="store_true", help="today's daily challenge")
    p.add_argument("--game", dest="game_id", help="reopen a game by id")
