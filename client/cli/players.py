"""``solitaire player``: create the player this device plays as, show it, rename it."""

from __future__ import annotations

from client.cli.invocation import Cli, Subcommands
from client.core import SolitaireClient
from client.http import HttpApi


async def player_create(cli: Cli) -> int:
    credentials = await SolitaireClient.create_player(cli.server, cli.args.name, bot=cli.args.bot)
    cli.config.set_account(cli.server, credentials.id, credentials.name, credentials.token)
    cli.config.save()
    kind = " (a bot: it ranks on the bots' boards)" if credentials.bot else ""
    cli.say(f"created player {credentials.name} ({credentials.id}) on {cli.server}{kind}")
    cli.say(f"token saved in {cli.config.path}")
    return 0


async def player_show(cli: Cli) -> int:
    account = cli.config.account(cli.server)
    if account is None:
        cli.say(f"no player for {cli.server}: run `solitaire player create --name NAME`")
        return 1
    cli.say(f"{account['name']} ({account['id']}) on {cli.server}")
    return 0


async def player_rename(cli: Cli) -> int:
    cli.need_token()
    player = await HttpApi(cli.server, cli.token).rename(cli.args.name)
    account = cli.config.account(cli.server) or {}
    cli.config.set_account(cli.server, player.id, player.name, account.get("token", cli.token or ""))
    cli.config.save()
    cli.say(f"renamed to {player.name}")
    return 0


def add_commands(commands: Subcommands) -> None:
    """``player create``, ``player show`` and ``player rename``."""
    player = commands.nest("player", "create or show your player")
    create = player.add("create", "create a player and keep its token", player_create)
    create.add_argument("--name")
    create.add_argument(
        "--bot", action="store_true", help="a program plays as this player: it ranks on the bots' boards only"
    )
    player.add("show", "show the saved player", player_show)
    player.add("rename", "rename your player", player_rename).add_argument("name")
