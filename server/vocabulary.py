"""The server's own words: connection states, flag reasons and audit actions.

The protocol's words (error and close codes, player kinds, standings, race
states, the protocol version) are in :mod:`wire`, shared with the clients;
the game's (statuses, results, refusals) are the engine's, in
:mod:`engine.vocabulary`. These are the server's alone: a connection's state
never goes on the wire, and flag reasons and audit actions are shown only to
operators.
"""

from __future__ import annotations

from enum import StrEnum


class ConnectionState(StrEnum):
    """Where a WebSocket session stands; it only moves forward."""

    CONNECTED = "connected"  # hello sent, waiting for auth
    AUTHENTICATED = "authenticated"  # serving requests
    CLOSING = "closing"  # a close was decided; nothing more is read
    CLOSED = "closed"


class FlagReason(StrEnum):
    """Why a result was flagged (docs/competing.md gives the thresholds)."""

    FAST = "fast"  # median think time under the threshold over enough moves
    EVEN = "even"  # think times without variance: a metronome, not a person
    INHUMAN = "inhuman"  # too many gaps under what a person can do
    STREAK = "streak"  # a long run of quick moves in a row
    FLAT = "flat"  # think times without the long thinks of a person's play: drawn from a range
    SOLVER_LINE = "solver_line"  # exactly the solver's line, no undo (found after the finish)
    REPEAT = "repeat"  # the player had a flag confirmed recently: every result waits for a look


class AuditAction(StrEnum):
    """What an operator did, as the audit log writes it."""

    CONFIRM_FLAG = "confirm_flag"
    CLEAR_FLAG = "clear_flag"
    REMOVE_ENTRY = "remove_entry"
    BAN_PLAYER = "ban_player"
    RENAME_PLAYER = "rename_player"
    CREATE_TOKEN = "create_token"
    REVOKE_TOKEN = "revoke_token"
