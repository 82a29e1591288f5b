"""The browser's facts module (``/js/facts.js``): served by a real server, each value equal to
its one source (the schemas read here as files, the engine, the enums, the models), and no
browser file writing any of them again."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import wire
from engine import verify
from engine.hearts import COVERED_BY, HEART_ROWS
from server.config import Settings
from server.edge import protocol
from server.features.accounts import model as accounts
from server.features.races import model as races
from server.rules import days as dailies
from tests.support import ONE_ADDRESS, running_server
from wire import CloseCode

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "server" / "static"
EXPORT = re.compile(r"^export const ([A-Z_]+) = frozen\((.*)\);$")


def document(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((ROOT / "server" / "schema" / name).read_text(encoding="utf-8"))
    return loaded


ASYNCAPI, OPENAPI = document("asyncapi.json"), document("openapi.json")
SCHEMAS = ASYNCAPI["components"]["schemas"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("facts") / "facts.db"
    settings = Settings(database_url=f"sqlite+aiosqlite:///{path}", secret="test-secret", limits=ONE_ADDRESS)
    with running_server(settings) as base:
        yield base


def get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as error:  # a 304 arrives as one
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def served(site: str) -> dict[str, Any]:
    """Every export of the served module, by name, as the JSON it was written as."""
    status, headers, body = get(f"{site}/js/facts.js")
    assert status == 200
    assert headers["content-type"] == "text/javascript; charset=utf-8"
    assert headers["x-content-type-options"] == "nosniff"  # so the type must be a script's
    values = {}
    for line in body.decode("utf-8").splitlines():
        if line.startswith("export"):
            match = EXPORT.match(line)
            assert match, line
            values[match[1]] = json.loads(match[2])
    return values


def message_field(kind: str, name: str) -> dict[str, Any]:
    messages = ASYNCAPI["components"]["messages"]
    (payload,) = (
        m["payload"] for m in messages.values() if m["payload"]["properties"]["type"].get("const") == kind
    )
    field: dict[str, Any] = payload["properties"][name]
    return field


def query_param(path: str, name: str) -> dict[str, Any]:
    (param,) = (p for p in OPENAPI["paths"][path]["get"]["parameters"] if p["name"] == name)
    schema: dict[str, Any] = param["schema"]
    return {"min": schema["minimum"], "max": schema["maximum"], "default": schema["default"]}


def test_every_served_value_is_its_source(site: str) -> None:
    countdown = message_field("race_start", "countdown_s")
    name = SCHEMAS["Player"]["properties"]["name"]
    label = OPENAPI["components"]["schemas"]["Login"]["properties"]["label"]
    assert served(site) == {
        "PROTOCOL": wire.PROTOCOL_VERSION,
        "CLOSE": {code.name: code.value for code in CloseCode},
        "GAME_CODE": SCHEMAS["GameCode"]["pattern"],
        "CODE_FAMILY": SCHEMAS["CodeFamily"]["pattern"],
        "DAY": SCHEMAS["DayDate"]["pattern"],
        "FAMILIES": list(dailies.FAMILIES),
        "PLAYER_NAME": {"min": name["minLength"], "max": name["maxLength"]},
        "USERNAME": {"min": accounts.USERNAME_MIN, "max": accounts.USERNAME_MAX},
        "PASSWORD": {"min": accounts.PASSWORD_MIN, "max": accounts.PASSWORD_MAX},
        "SESSION_LABEL": {"max": label["maxLength"]},
        "LEADERBOARD_LIMIT": query_param("/api/leaderboards/{code}", "limit"),
        "HISTORY_LIMIT": query_param("/api/players/{player_id}/games", "limit"),
        "COUNTDOWN_S": {
            "min": countdown["minimum"],
            "max": countdown["maximum"],
            "default": races.DEFAULT_COUNTDOWN_S,
        },
        "IDLE_GAP_CAP_MS": verify.IDLE_GAP_CAP_MS,
        "HEART_ROWS": [list(row) for row in HEART_ROWS],
    }


def test_the_module_is_revalidated_by_its_etag(site: str) -> None:
    status, headers, _ = get(f"{site}/js/facts.js")
    assert status == 200 and headers["cache-control"] == "no-cache"
    status, again, body = get(f"{site}/js/facts.js", **{"If-None-Match": headers["etag"]})
    assert (status, body, again["etag"]) == (304, b"", headers["etag"])


def test_the_facts_agree_with_each_other() -> None:
    """The families match the schema's family pattern, the countdown's default is within its
    bounds, and the heart's layout gives the engine's covering table (deal.md, HH-3)."""
    family = protocol.schema_of("CodeFamily")["pattern"]
    assert all(re.fullmatch(family.strip("^$"), f) for f in dailies.FAMILIES)
    field = protocol.REQUESTS["race_start"]["countdown_s"]
    assert field.minimum <= races.DEFAULT_COUNTDOWN_S <= field.maximum
    place = {(r, x): n for n, (r, x) in enumerate(((r, x) for r, xs in enumerate(HEART_ROWS) for x in xs), 1)}
    covered = {
        n: tuple(place[(r + 1, x + d)] for d in (-1, 1) if (r + 1, x + d) in place)
        for (r, x), n in place.items()
    }
    assert covered == COVERED_BY


# What the browser once wrote for itself: each is a fact of the module now, and only there.
COPIES = {
    "a seed's length": re.compile(r"\[A-Za-z2-7\]\{7\}|\[A-Z2-7\]\{7\}"),
    "a close code": re.compile(r"\b(" + "|".join(str(c.value) for c in CloseCode if c >= 4000) + r")\b"),
    "the protocol version": re.compile(r"PROTOCOL\s*=\s*\d"),
    "the heart's rows": re.compile(r"\[\s*1,\s*3,\s*7,\s*9\s*\]"),
    "a family": re.compile(r"[\"'](HH1-N|SH1-C[421])[\"']"),
    "the idle gap's cap": re.compile(r"\b60_?000\b"),
    "a length bound": re.compile(r"(maxlength|minlength|pattern)\s*[=:]\s*[\"']?\d", re.I),
}


@pytest.mark.parametrize("what", sorted(COPIES))
def test_no_browser_file_copies_a_fact(what: str) -> None:
    found = [
        f"{path.relative_to(STATIC)}:{n}: {line.strip()}"
        for path in [*STATIC.glob("js/*.js"), STATIC / "index.html"]
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if COPIES[what].search(line) and not line.lstrip().startswith("//")
    ]
    assert not found, f"{what} written again:\n" + "\n".join(found)
