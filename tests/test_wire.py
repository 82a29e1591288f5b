"""wire: the protocol's vocabulary matches its published documents, and a client needs no server.

The enums are checked against ``server/schema/asyncapi.json`` and
``openapi.json`` (and the close codes against docs/protocol.md, where they are
listed), so a code added on one side only fails here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

import wire
from tests.contract import load
from wire import PROTOCOL_VERSION, CloseCode, ErrorCode, PlayerKind, RaceEvent, RaceStatus, Standing

ROOT = Path(__file__).resolve().parent.parent
ASYNCAPI = load("asyncapi.json")
OPENAPI = load("openapi.json")


def at(document: dict[str, Any], path: str) -> Any:
    """The node at a slash-separated path (list items by index)."""
    node: Any = document
    for part in path.split("/"):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def enum_values(document: dict[str, Any], path: str) -> set[Any]:
    return set(at(document, path)["enum"])


def values(enum: type[Enum]) -> set[Any]:
    return {member.value for member in enum}


def test_error_codes_are_the_schemas() -> None:
    assert values(ErrorCode) == enum_values(ASYNCAPI, "components/schemas/ErrorCode")
    assert all(type(code.http_status) is int and 400 <= code.http_status < 600 for code in ErrorCode)


def test_race_words_are_the_schemas() -> None:
    assert values(RaceStatus) == enum_values(ASYNCAPI, "components/schemas/Race/properties/status")
    event = "components/messages/race_update/payload/properties/event"
    assert values(RaceEvent) == enum_values(ASYNCAPI, event)


def test_standings_are_the_schemas() -> None:
    entry = "components/schemas/LeaderboardEntry/properties/standing"
    assert values(Standing) == enum_values(ASYNCAPI, entry)
    assert values(Standing) == enum_values(OPENAPI, "components/schemas/FlaggedResult/properties/standing")
    assert set(wire.LISTED_STANDINGS) <= set(Standing)


def test_player_kinds_are_the_schemas() -> None:
    assert values(PlayerKind) == enum_values(OPENAPI, "components/schemas/FlaggedResult/properties/kind")
    kinds = [
        set(parameter["schema"]["enum"])
        for item in OPENAPI["paths"].values()
        for operation in item.values()
        if isinstance(operation, dict)
        for parameter in operation.get("parameters", [])
        if parameter.get("name") == "kind"
    ]
    assert kinds and all(kind == values(PlayerKind) for kind in kinds), kinds


def test_close_codes_are_the_documented_ones() -> None:
    """The schemas do not list close codes; docs/protocol.md's "Close codes:" paragraph does."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    paragraph = text[text.index("Close codes:") :].split("\n\n")[0]
    assert {int(code) for code in re.findall(r"`(\d{4})`", paragraph)} == values(CloseCode)


def test_protocol_version_is_the_schemas() -> None:
    assert str(PROTOCOL_VERSION) == ASYNCAPI["info"]["version"]
    auth = at(ASYNCAPI, "components/messages/auth")
    assert auth["examples"][0]["payload"]["protocol"] == PROTOCOL_VERSION


@pytest.mark.parametrize("enum", [ErrorCode, RaceStatus, RaceEvent, PlayerKind, Standing], ids=str)
def test_members_are_their_wire_strings(enum: type[Enum]) -> None:
    for member in enum:
        assert json.dumps(member) == json.dumps(member.value)


BLOCK_SERVER = """
import importlib.abc
import sys


class NoServer(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "server" or name.startswith("server."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


sys.meta_path.insert(0, NoServer())
import client
import client.errors
import client.cli
from client.core import PROTOCOL_VERSION
error = client.errors.error_from({"code": "stale", "message": "seq is not the game's"})
assert isinstance(error, client.errors.StaleError), type(error)
assert error.code == "stale"
assert not [name for name in sys.modules if name == "server" or name.startswith("server.")]
try:
    import server
except ModuleNotFoundError:
    pass
else:
    raise AssertionError("the blocker let server in")
print("ok", PROTOCOL_VERSION)
"""


def test_the_client_imports_without_the_server() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCK_SERVER], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok", str(PROTOCOL_VERSION)]
