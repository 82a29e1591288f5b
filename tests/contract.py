"""The protocol contract: the published schemas against what the server really sends.

Every message a test client receives lands in ``tests.support.RECEIVED``. At
the end of the session :func:`pytest_sessionfinish` (imported by
``tests/conftest.py``) validates all of them against ``asyncapi.json`` and,
when the whole suite ran, checks that every documented message type was
exercised: each server message received, each request sent (requests are
recorded from the client library's ``trace_sent``). A violation fails the run, whichever test caused it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7, DRAFT202012

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "server" / "schema"
BASE = "https://solitaire.invalid/api/schema/"  # where the two documents resolve each other
MAX_REPORTED = 20
SENT: list[dict[str, Any]] = []  # requests the client library sent during the session (by type)


def load(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return document


@cache
def registry() -> Registry:
    """Both documents under their served URLs, so openapi.json's refs into asyncapi.json resolve."""
    asyncapi = Resource.from_contents(load("asyncapi.json"), default_specification=DRAFT7)
    openapi = Resource.from_contents(load("openapi.json"), default_specification=DRAFT202012)
    return Registry().with_resources([(BASE + "asyncapi.json", asyncapi), (BASE + "openapi.json", openapi)])


def message_components(direction: str) -> dict[str, str]:
    """``type`` -> component name for one direction: ``publish`` (client → server) or
    ``subscribe``. A reply may share its request's type (``solution``), so the two
    directions are looked up separately."""
    document = load("asyncapi.json")
    refs = document["channels"]["/ws"][direction]["message"]["oneOf"]
    found = {}
    for ref in refs:
        name = ref["$ref"].rsplit("/", 1)[1]
        kind = document["components"]["messages"][name]["payload"]["properties"]["type"]["const"]
        found[kind] = name
    return found


def message_names(direction: str) -> list[str]:
    """The message types of one direction."""
    return list(message_components(direction))


@cache
def message_validator(kind: str) -> Draft7Validator:
    """A validator for the payload of one server message type."""
    name = message_components("subscribe")[kind]
    ref = {"$ref": f"{BASE}asyncapi.json#/components/messages/{name}/payload"}
    return Draft7Validator(ref, registry=registry())


def openapi_validator(pointer: str) -> Draft202012Validator:
    """A validator for any schema inside openapi.json, named by JSON pointer."""
    return Draft202012Validator({"$ref": f"{BASE}openapi.json#{pointer}"}, registry=registry())


def server_message_types() -> set[str]:
    return set(message_names("subscribe"))


def problems_in(messages: Iterable[dict[str, Any]]) -> list[str]:
    """Every schema violation among received messages, one line each."""
    known = server_message_types()
    found: list[str] = []
    for message in messages:
        kind = message.get("type") if isinstance(message, dict) else None
        if kind not in known:
            found.append(f"undocumented message type {kind!r}: {_short(message)}")
            continue
        for error in message_validator(str(kind)).iter_errors(message):
            path = "/".join(str(p) for p in error.absolute_path)
            found.append(f"{kind} at /{path}: {error.message[:200]} in {_short(message)}")
    return found


def _short(message: Any) -> str:
    text = json.dumps(message, separators=(",", ":"))
    return text if len(text) < 300 else text[:300] + "…"


def _whole_suite(session: pytest.Session) -> bool:
    """True when the run covered all of tests/ (not a chosen file, test or keyword)."""
    config = session.config
    if config.option.keyword or getattr(config.option, "deselect", None):
        return False
    tests_dir = Path(__file__).resolve().parent
    chosen = {(config.invocation_params.dir / arg).resolve() for arg in config.args}
    return bool(chosen) and chosen <= {tests_dir, tests_dir.parent}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when the server sent anything its published schema does not allow."""
    from tests.support import RECEIVED

    report: list[str] = problems_in(RECEIVED)
    if _whole_suite(session) and session.testscollected:
        seen = {m.get("type") for m in RECEIVED}
        unseen = sorted(server_message_types() - seen)
        report += [f"documented message type {t!r} was never received during the suite" for t in unseen]
        unsent = sorted(set(message_names("publish")) - {m.get("type") for m in SENT})
        report += [f"documented request type {t!r} was never sent during the suite" for t in unsent]
    if not report:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    lines = [f"protocol contract: {len(report)} problem(s) in {len(RECEIVED)} received messages"]
    lines += report[:MAX_REPORTED]
    if reporter is not None:
        reporter.write_sep("=", "protocol contract failed", red=True)
        for line in lines:
            reporter.write_line(line)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
