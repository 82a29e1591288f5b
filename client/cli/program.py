"""The ``solitaire`` parser, composed from the command groups, and the entry point.

Each group module adds its own subcommands (:func:`add_commands`), binding
each to its handler; the parser lists the groups here, explicitly, in the
order ``--help`` shows them. Nothing registers itself on import.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from client.cli import accounts, boards, home, log, play, players, races, watching
from client.cli.invocation import Cli, Subcommands
from client.errors import SolitaireError

DESCRIPTION = (
    "Play, watch, race, replay and verify games, log in to your account and look at "
    "statistics, histories and leaderboards, from a terminal."
)

GROUPS = (players, play, boards, watching, accounts, home, races, log)  # the order --help lists them in


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--server", default=argparse.SUPPRESS, help="server URL (default http://127.0.0.1:8000)"
    )
    common.add_argument("--config", default=argparse.SUPPRESS, help="config file (env SOLITAIRE_CONFIG)")
    common.add_argument("--color", dest="color", action="store_true", default=argparse.SUPPRESS)
    common.add_argument("--no-color", dest="color", action="store_false", default=argparse.SUPPRESS)
    common.add_argument("--trace", default=argparse.SUPPRESS, help="append every received message to FILE")
    parser = argparse.ArgumentParser(prog="solitaire", parents=[common], description=DESCRIPTION)
    commands = Subcommands(parser.add_subparsers(dest="command", required=True), common)
    for group in GROUPS:
        group.add_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cli = Cli(args)
    try:
        result: int = asyncio.run(args.run(cli))
        return result
    except SolitaireError as exc:
        sys.stderr.write(f"solitaire: {exc.message} ({exc.code})\n")
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        cli.close()
