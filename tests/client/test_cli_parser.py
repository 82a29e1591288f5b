"""The ``solitaire`` parser is composed from its command groups: every command bound to its handler."""

from __future__ import annotations

import argparse
import ast
import asyncio
import inspect
import io
from collections.abc import Iterator
from pathlib import Path

from client.cli import build_parser, program
from client.cli.invocation import Cli, Subcommands
from tests import sources

CLI_DIR = Path(program.__file__).resolve().parent
COMMANDS = [
    "player create", "player show", "player rename", "play", "daily", "leaderboard",
    "watch", "verify", "deal", "account create", "account show", "account password",
    "account revoke", "login", "logout", "stats", "history", "replay",
    "race open", "race join", "race watch", "log verify", "log audit",
]  # fmt: skip


Leaf = tuple[str, argparse.ArgumentParser]


def leaves(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[Leaf]:
    """Every runnable command, as its words and its parser, in --help order."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix.strip(), parser
        return
    for name, child in subs[0].choices.items():
        yield from leaves(child, f"{prefix} {name}")


def test_every_command_is_bound_to_a_coroutine() -> None:
    found = list(leaves(build_parser()))
    assert [name for name, _ in found] == COMMANDS
    for name, parser in found:
        handler = parser.get_default("run")
        assert inspect.iscoroutinefunction(handler), name
        assert handler.__module__.startswith("client.cli."), (name, handler.__module__)


def test_each_group_adds_its_own_commands() -> None:
    for group in program.GROUPS:
        parser, common = argparse.ArgumentParser(), argparse.ArgumentParser(add_help=False)
        group.add_commands(Subcommands(parser.add_subparsers(dest="command"), common))
        names = [name for name, _ in leaves(parser)]
        assert names and all(name in COMMANDS for name in names), (group.__name__, names)
        assert {p.get_default("run").__module__ for _, p in leaves(parser)} == {group.__name__}


def test_no_group_registers_on_import() -> None:
    """Handlers are bound where the parser is built, not by decorators filling a table at import."""
    for path in sorted(CLI_DIR.glob("*.py")):
        for node in sources.tree(path).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert not node.decorator_list, f"{path.name}: {node.name} is decorated"


def test_a_parsed_command_runs_its_handler(tmp_path: Path) -> None:
    args = build_parser().parse_args(["--config", str(tmp_path / "config.json"), "deal", "HH1-N-AAAAAAA"])
    out = io.StringIO()
    assert asyncio.run(args.run(Cli(args, out))) == 0
    assert out.getvalue().startswith("HH1-N-AAAAAAA  8H JH 9H")
