"""Protocol version and request field rules (documented in docs/protocol.md).

Requests are validated here, before anything touches a game, so a malformed
message never reaches the engine or the database. The table they are checked
against is compiled at import from the published AsyncAPI document
(``server/schema/asyncapi.json``): the shapes are written once, there, and the
compiled table checks them several times faster than a general JSON Schema
validator would (``bench/protocol.py``; ``tests/server/test_protocol_schema.py``
checks the two agree).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.errors import ProtocolError
from server.vocabulary import ErrorCode

PROTOCOL_VERSION = 1
SUPPORTED_VERSIONS = (1,)


SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "asyncapi.json"
INT32 = (-(2**31), 2**31 - 1)  # integers outside are refused even where the schema sets no bound
_NAMES = {str: "a string", int: "an integer", dict: "an object"}
_JSON_TYPES = {"string": str, "integer": int, "object": dict}


@dataclass(frozen=True, slots=True)
class Field:
    """One request field, compiled from its JSON Schema: type, bounds, pattern, choices."""

    kinds: tuple[type, ...]
    required: bool
    min_len: int = 0
    max_len: int | None = None
    pattern: re.Pattern[str] | None = None
    minimum: int = INT32[0]
    maximum: int = INT32[1]
    choices: tuple[Any, ...] | None = None


def _resolve(node: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schemas[node["$ref"].rsplit("/", 1)[1]]
    return node


def compile_field(node: dict[str, Any], required: bool, schemas: dict[str, Any]) -> Field:
    """The subset of JSON Schema the requests use: type, length, pattern, range, enum.

    An object (an action) is checked as an object only: its inner shape is the
    engine's to judge (``Action.from_json``), with an error naming ``action``.
    """
    node = _resolve(node, schemas)
    if "oneOf" in node or ("enum" not in node and node.get("type") not in _JSON_TYPES):
        if all(_resolve(n, schemas).get("type") == "object" for n in node.get("oneOf", [])):
            return Field((dict,), required)
        raise ValueError(f"a request field the protocol cannot check: {node}")
    if "enum" in node:
        return Field((type(node["enum"][0]),), required, choices=tuple(node["enum"]))
    kind = _JSON_TYPES[node["type"]]
    pattern = _pattern(node["pattern"]) if "pattern" in node else None
    return Field(
        (kind,),
        required,
        min_len=node.get("minLength", 0),
        max_len=node.get("maxLength"),
        pattern=pattern,
        minimum=max(node.get("minimum", INT32[0]), INT32[0]),
        maximum=min(node.get("maximum", INT32[1]), INT32[1]),
    )


def _pattern(text: str) -> re.Pattern[str]:
    """A schema pattern with JSON Schema's meaning: its ``$`` is the very end (Python's is ``\\Z``)."""
    return re.compile(text[:-1] + r"\Z" if text.endswith("$") else text)


def compile_requests(document: dict[str, Any]) -> dict[str, dict[str, Field]]:
    """Every client message of the AsyncAPI document as a table: type -> field -> Field."""
    schemas = document["components"]["schemas"]
    messages = document["components"]["messages"]
    table: dict[str, dict[str, Field]] = {}
    for ref in document["channels"]["/ws"]["publish"]["message"]["oneOf"]:
        payload = messages[ref["$ref"].rsplit("/", 1)[1]]["payload"]
        required = set(payload.get("required", ()))
        kind = payload["properties"]["type"]["const"]
        table[kind] = {
            name: compile_field(node, name in required, schemas)
            for name, node in payload["properties"].items()
            if name not in ("type", "id")  # the id is checked on its own (request_id)
        }
    return table


# The message shapes are defined once, in the published schema; this is its compiled form.
REQUESTS: dict[str, dict[str, Field]] = compile_requests(json.loads(SCHEMA_PATH.read_text()))


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
    spec = REQUESTS[kind]
    fields: dict[str, Any] = {}
    for name, value in message.items():
        if name in ("type", "id"):
            continue
        field = spec.get(name)
        if field is None:
            raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{kind} has no field {name!r}", field=name)
        fields[name] = check(kind, name, field, value)
    for name, field in spec.items():
        if field.required and name not in fields:
            raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{kind} needs the field {name!r}", field=name)
    return kind, fields


def check(kind: str, name: str, field: Field, value: Any) -> Any:
    """One field's value against its compiled schema (JSON Schema's meanings: ``1.0`` is an integer)."""
    if isinstance(value, float) and int in field.kinds and value.is_integer():
        value = int(value)
    if not isinstance(value, field.kinds) or isinstance(value, bool):
        expected = " or ".join(_NAMES[k] for k in field.kinds)
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{kind}.{name} must be {expected}", field=name)
    if field.choices is not None and value not in field.choices:
        allowed = ", ".join(map(str, field.choices))
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{kind}.{name} must be one of {allowed}", field=name)
    if isinstance(value, str):
        _check_text(kind, name, field, value)
    elif isinstance(value, int) and not field.minimum <= value <= field.maximum:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"{kind}.{name} must be from {field.minimum} to {field.maximum}",
            field=name,
        )
    return value


def _check_text(kind: str, name: str, field: Field, value: str) -> None:
    if len(value) < field.min_len or (field.max_len is not None and len(value) > field.max_len):
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"{kind}.{name} must be {field.min_len} to {field.max_len} characters",
            field=name,
        )
    if field.pattern is not None and not field.pattern.search(value):
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, f"{kind}.{name} must match {field.pattern.pattern}", field=name
        )
