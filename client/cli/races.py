"""``solitaire race``: open, join (and play) or watch a race."""

from __future__ import annotations

import asyncio

from client.cli.format import progress_of
from client.cli.invocation import Cli, Subcommands
from client.cli.play import play_loop
from client.competition import RaceHandle


async def race_open(cli: Cli) -> int:
    cli.need_token()
    async with cli.client() as client:
        args = cli.args
        game = None if args.code else args.game.upper()
        race = await client.race_open(args.code, game=game, variant=args.variant)
        cli.say(f"race {race.id} on {race.race['code']}: others join with `solitaire race join {race.id}`")
        if args.start_after is not None:
            await asyncio.sleep(args.start_after)
            await race.start(args.countdown)
            return await race_play(cli, race)
        return 0


async def race_join(cli: Cli) -> int:
    cli.need_token()
    async with cli.client() as client:
        race = await client.race_join(cli.args.race_id)
        cli.say(
            f"joined race {race.id} on {race.race['code']} ({len(race.racers)} racers); waiting for the start"
        )
        return await race_play(cli, race)


async def race_play(cli: Cli, race: RaceHandle) -> int:
    if race.game_id and race.game is None:
        race.game = await race.client.open_game(race.game_id)
    game = await race.wait_game()

    def standings() -> None:
        parts = [f"{r['player']['name']} {r['progress']}/{r['progress_total']}" for r in race.racers]
        cli.say("race: " + ", ".join(parts))

    return await play_loop(cli, game, standings)


async def race_watch(cli: Cli) -> int:
    async with cli.client(anonymous=not cli.token) as client:
        race = await client.race_watch(cli.args.race_id)
        version = race.version
        while True:
            cli.say(f"race {race.id} {race.race['code']}: {race.status}")
            for r in race.racers:
                place = f"#{r['place']}" if r.get("place") else "  "
                cli.say(f"  {place} {r['player']['name']:<20} {r['status']:<10} {progress_of(r)}")
            if race.status in ("finished", "cancelled"):
                return 0
            version = await race.wait_change(version)


def add_commands(commands: Subcommands) -> None:
    """``race open [GAME]``, ``race join RACE_ID`` and ``race watch RACE_ID``."""
    race = commands.nest("race", "open, join or watch a race")
    ro = race.add("open", "open a race", race_open)
    ro.add_argument("game", nargs="?", default="HH", help="HH or SH")
    ro.add_argument("--variant")
    ro.add_argument("--code")
    ro.add_argument("--start-after", type=float, help="start it after this many seconds and play")
    ro.add_argument("--countdown", type=int, default=3)
    race.add("join", "join a race and play it", race_join).add_argument("race_id")
    race.add("watch", "follow a race's standings", race_watch).add_argument("race_id")
