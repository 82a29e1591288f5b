"""Protocol version and request field rules (documented in docs/protocol.md).

Requests are validated here, by table, before anything touches a game; a
malformed message therefore can never reach the engine or the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.errors import ProtocolError
from server.vocabulary import ErrorCode

PROTOCOL_VERSION = 1
SUPPORTED_VERSIONS = (1,)


@dataclass(frozen=True)
class Field:
    """One request field: its JSON type, whether it is required, its maximum length."""

    kind: type | tuple[type, ...]
    required: bool = True
    max_len: int = 64


_ID = Field(str)
_CODE = Field(str, max_len=32)
REQUESTS: dict[str, dict[str, Field]] = {
    "auth": {"token": Field(str, False, 128), "protocol": Field(int, False)},
    "ping": {},
    "new_game": {
        "code": Field(str, False, 32),
        "game": Field(str, False, 4),
        "variant": Field(str, False, 4),
        "daily": Field(str, False, 16),
    },
    "open_game": {"game_id": _ID},
    "act": {"game_id": _ID, "seq": Field(int), "action": Field(dict), "reply": Field(str, False, 8)},
    "resign": {"game_id": _ID},
    "watch": {"game_id": _ID},
    "unwatch": {"game_id": _ID},
    "subscribe_leaderboard": {"code": _CODE, "limit": Field(int, False)},
    "unsubscribe_leaderboard": {"code": _CODE},
    "race_open": {
        "code": Field(str, False, 32),
        "game": Field(str, False, 4),
        "variant": Field(str, False, 4),
    },
    "race_join": {"race_id": _ID},
    "race_watch": {"race_id": _ID},
    "race_start": {"race_id": _ID, "countdown_s": Field(int, False)},
    "race_leave": {"race_id": _ID},
    "solution": {"game_id": _ID},
}


def request_id(message: dict[str, Any]) -> Any:
    """The client's id if it is a valid one (string up to 64 characters, or integer)."""
    rid = message.get("id")
    if isinstance(rid, bool):
        return None
    if isinstance(rid, int) or (isinstance(rid, str) and len(rid) <= 64):
        return rid
    return None


def validate(message: Any) -> tuple[str, dict[str, Any]]:
    """The request type and its checked fields, or a ProtocolError naming the problem."""
    if not isinstance(message, dict):
        raise ProtocolError(ErrorCode.BAD_JSON, "a message must be a JSON object")
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in REQUESTS:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind!r}")
    if "id" in message and request_id(message) is None:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, "id must be an integer or a string of ≤ 64 characters", field="id"
        )
    fields: dict[str, Any] = {}
    for name, spec in REQUESTS[kind].items():
        if name not in message:
            if spec.required:
                raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{kind} needs the field {name!r}", field=name)
            continue
        fields[name] = _check(kind, name, spec, message[name])
    return kind, fields


def _check(kind: str, name: str, spec: Field, value: Any) -> Any:
    wrong_type = not isinstance(value, spec.kind) or isinstance(value, bool)
    if wrong_type:
        expected = spec.kind.__name__ if isinstance(spec.kind, type) else "value"
        names = {"str": "a string", "int": "an integer", "dict": "an object"}
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, f"{kind}.{name} must be {names.get(expected, expected)}", field=name
        )
    if isinstance(value, str) and not 0 < len(value) <= spec.max_len:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, f"{kind}.{name} must be 1 to {spec.max_len} characters", field=name
        )
    if isinstance(value, int) and not -(2**31) <= value < 2**31:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{kind}.{name} is out of range", field=name)
    return value
