"""``solitaire``: play, watch, race, verify and look at leaderboards from a terminal.

Every command is a thin layer over the client library, so what works here
works the same for any program using :class:`client.SolitaireClient`.

One module per group of commands, each adding its subcommands to the parser
(``add_commands``) with their handlers: :mod:`~client.cli.players`,
:mod:`~client.cli.play`, :mod:`~client.cli.boards` (dailies, leaderboards),
:mod:`~client.cli.watching` (watch, verify, deal), :mod:`~client.cli.accounts`,
:mod:`~client.cli.home` (stats, history, replay) and :mod:`~client.cli.races`.
:mod:`~client.cli.program` composes them; :mod:`~client.cli.invocation` holds what
every handler gets (:class:`~client.cli.invocation.Cli`),
:mod:`~client.cli.format` the text helpers they share and
:mod:`~client.cli.prompt` what a player types while playing.
"""

from __future__ import annotations

from client.cli.program import build_parser, main

__all__ = ["build_parser", "main"]
