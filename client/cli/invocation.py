"""One invocation of ``solitaire``: its arguments, configuration and output, and the parser's plumbing.

Every command group (:mod:`client.cli.players`, :mod:`client.cli.play`, ...)
adds its subcommands through a :class:`Subcommands`, which gives each the
common options and binds its handler to the parsed arguments; the handler gets
the :class:`Cli` of the invocation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Callable, Coroutine
from typing import IO, Any

from client.config import Config, config_path
from client.core import SolitaireClient
from client.errors import SolitaireError
from client.models import GameState
from client.render import Style, render

Handler = Callable[["Cli"], Coroutine[Any, Any, int]]


class Cli:
    """One invocation: parsed arguments, configuration, output style."""

    def __init__(self, args: argparse.Namespace, out: IO[str] = sys.stdout) -> None:
        self.args = args
        self.out = out
        self.config = Config.load(config_path(getattr(args, "config", None)))
        self.server = self.config.server(getattr(args, "server", None))
        self.style = Style(color=use_color(args, out), symbols=can_print("♠♥♦♣", out))
        self._trace_file: IO[str] | None = None

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    @property
    def token(self) -> str | None:
        account = self.config.account(self.server)
        return os.environ.get("SOLITAIRE_TOKEN") or (account or {}).get("token")

    def client(self, anonymous: bool = False) -> SolitaireClient:
        token = None if anonymous else self.token
        return SolitaireClient(self.server, token, trace=self._trace())

    def need_token(self) -> None:
        if not self.token:
            raise SolitaireError("no_player", f"no player for {self.server}: run `solitaire player create`")

    def _trace(self) -> Callable[[dict[str, Any]], None] | None:
        """--trace FILE: every received message as a JSON line (debugging, contract tests)."""
        path = getattr(self.args, "trace", None)
        if not path:
            return None
        if self._trace_file is None:
            self._trace_file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed in main)
        handle = self._trace_file

        def write(message: dict[str, Any]) -> None:
            handle.write(json.dumps(message) + "\n")
            handle.flush()

        return write

    def close(self) -> None:
        if self._trace_file is not None:
            self._trace_file.close()


def use_color(args: argparse.Namespace, out: IO[str]) -> bool:
    """Colour on a terminal unless --no-color or NO_COLOR (https://no-color.org); --color forces it."""
    if getattr(args, "color", None) is not None:
        return bool(args.color)
    return not os.environ.get("NO_COLOR") and out.isatty()


def can_print(text: str, out: IO[str]) -> bool:
    try:
        text.encode(getattr(out, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


async def read_line(prompt: str, out: IO[str]) -> str | None:
    """One line of input without blocking the event loop (the connection keeps living); None at EOF."""
    out.write(prompt)
    out.flush()
    line = await asyncio.to_thread(sys.stdin.readline)
    if line and not sys.stdin.isatty():  # piped input: show it, so the output reads as a session
        out.write(line if line.endswith("\n") else line + "\n")
    return line if line else None


def show(cli: Cli, state: GameState) -> None:
    cli.say(render(state, cli.style))


class Subcommands:
    """Where a group adds its commands: each parser shares the common options and names its handler."""

    def __init__(
        self, sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
    ) -> None:
        self._sub = sub
        self._common = common

    def add(self, name: str, help_text: str, run: Handler | None = None) -> argparse.ArgumentParser:
        """A subcommand; ``run`` handles it (left out for a command that only holds others)."""
        parser = self._sub.add_parser(name, parents=[self._common], help=help_text)
        if run is not None:
            parser.set_defaults(run=run)
        return parser

    def nest(self, name: str, help_text: str) -> Subcommands:
        """A command of commands (``player create``): its own subcommands, named ``action``."""
        parser = self.add(name, help_text)
        return Subcommands(parser.add_subparsers(dest="action", required=True), self._common)
