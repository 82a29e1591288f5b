"""Supported protocol versions and request field rules (documented in docs/protocol.md).

Requests are validated here, before anything touches a game, so a malformed
message never reaches the engine or the database. The table they are checked
against is compiled at import from the published AsyncAPI document
(``server/schema/asyncapi.json``): the shapes are written once, there, and the
compiled table checks them several times faster than a general JSON Schema
validator would (``bench/protocol.py``; ``tests/server/test_protocol_schema.py``
checks the two agree).

Every string a request carries, at any depth, must be Unicode text: a lone
surrogate (``"\\ud800"`` is valid JSON but no character) is refused here,
naming its field, so nothing downstream (a database driver, the UTF-8 encoder
of a reply, a log line) ever meets one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from server.errors import ProtocolError
from wire import PROTOCOL_VERSION, ErrorCode

SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)


SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "asyncapi.json"
INT32 = (-(2**31), 2**31 - 1)  # integers outside are refused even where the schema sets no bound
_NAMES = {str: "a string", int: "an integer", dict: "an object", bool: "true or false"}
_JSON_TYPES = {"string": str, "integer": int, "object": dict, "boolean": bool}


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
    nullable: bool = False  # ``oneOf: [X, {"type": "null"}]``: null stands for "not given"


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text`` as ``U+D800``, or None for proper Unicode text."""
    if text.isascii():
        return None
    found = LONE_SURROGATE.search(text)
    return f"U+{ord(found.group()):04X}" if found else None


def surrogate_in(value: Any) -> str | None:
    """The first lone surrogate in any string or key of a JSON value, at any depth (no recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if (found := lone_surrogate(item)) is not None:
                return found
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def printable(text: str) -> str:
    """``text`` with any lone surrogate written as ``\\udXXX``: safe to name in a reply."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def not_text(label: str, name: str, code_point: str) -> ProtocolError:
    return ProtocolError(
        ErrorCode.BAD_MESSAGE,
        f"{label} must be Unicode text: it holds the lone surrogate {code_point}",
        field=printable(name),
    )


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
    branches = [_resolve(n, schemas) for n in node.get("oneOf", ())]
    others = [b for b in branches if b.get("type") != "null"]
    if len(branches) == 2 and len(others) == 1:  # X or null
        return replace(compile_field(others[0], required, schemas), nullable=True)
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
    """A schema pattern with JSON Schema's meaning: its ``$`` is the very end (Python's is ``\\Z``),
    and ``\\d`` or ``\\w`` are ASCII only, as in ECMA-262 (Python's take any script's digits)."""
    return re.compile(text[:-1] + r"\Z" if text.endswith("$") else text, re.ASCII)


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
DOCUMENT: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
REQUESTS: dict[str, dict[str, Field]] = compile_requests(DOCUMENT)


def schema_of(name: str) -> dict[str, Any]:
    """A named schema of the document (``GameCode``), as written there."""
    schema: dict[str, Any] = DOCUMENT["components"]["schemas"][name]
    return schema


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str | bytes) -> Any:
    """A frame or body as JSON, strictly: ``NaN`` and ``Infinity`` (which Python's parser takes)
    are refused like any other non-JSON. Raises ``ValueError``, or ``RecursionError`` past the
    parser's depth (about 1,000 levels; the callers answer both with ``bad_json``)."""
    return _DECODER.decode(text if isinstance(text, str) else text.decode("utf-8"))


# One decoder for every frame: json.loads with any option builds a new decoder per call.
_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def request_id(message: dict[str, Any]) -> Any:
    """The client's id if it is a valid one (Unicode text up to 64 characters, or an integer:
    ``1.0`` is the integer 1).

    An id that is not is never echoed: a reply carrying a lone surrogate could not be sent.
    """
    rid = message.get("id")
    if isinstance(rid, bool):
        return None
    if isinstance(rid, float) and rid.is_integer():  # JSON Schema's meaning, as for every field
        return int(rid)
    if isinstance(rid, int) or (isinstance(rid, str) and len(rid) <= 64 and lone_surrogate(rid) is None):
        return rid
    return None


def validate(message: Any) -> tuple[str, dict[str, Any]]:
    """The request type and its checked fields, or a ProtocolError naming the problem."""
    if not isinstance(message, dict):
        raise ProtocolError(ErrorCode.BAD_JSON, "a message must be a JSON object")
    kind = message.get("type")
    if not isinstance(kind, str):  # never repr'd: a list nested 900 deep would overflow the stack
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, "a message's type must be a string naming a request")
    if kind not in REQUESTS:
        raise ProtocolError(ErrorCode.UNKNOWN_TYPE, f"unknown message type {_brief(kind)}")
    if "id" in message and request_id(message) is None:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, "id must be an integer or a text of ≤ 64 characters", field="id"
        )
    return kind, check_fields(kind, REQUESTS[kind], message, skip=("type", "id"))


def check_fields(
    kind: str, spec: dict[str, Field], values: dict[str, Any], skip: tuple[str, ...] = ()
) -> dict[str, Any]:
    """An object's fields against their compiled schemas: none unknown, none required missing."""
    fields: dict[str, Any] = {}
    for name, value in values.items():
        if name in skip:
            continue
        field = spec.get(name)
        if field is None:
            where = f"{kind} has" if kind else "there is"
            raise ProtocolError(
                ErrorCode.BAD_MESSAGE, f"{where} no field {_brief(name)}", field=printable(name)
            )
        fields[name] = check(kind, name, field, value)
    for name, field in spec.items():
        if field.required and name not in fields:
            where = kind or "the body"
            raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{where} needs the field {name!r}", field=name)
    return fields


def _brief(text: str) -> str:
    """A client's text quoted in a refusal: escaped (``repr``), and cut short."""
    return repr(text) if len(text) <= 40 else repr(text[:40]) + "…"


def check(kind: str, name: str, field: Field, value: Any) -> Any:
    """One field's value against its compiled schema (JSON Schema's meanings: ``1.0`` is an integer).

    ``kind`` names the message in refusals (``act.seq must be…``); empty, the field alone is named.
    """
    if value is None and field.nullable:
        return None
    kind_of = type(value)  # the exact type: bool is not taken for int, nor int for bool
    if kind_of is float and int in field.kinds and value.is_integer():
        value, kind_of = int(value), int
    if kind_of not in field.kinds and not (kind_of is not bool and isinstance(value, field.kinds)):
        expected = " or ".join(_NAMES[k] for k in field.kinds)
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{_label(kind, name)} must be {expected}", field=name)
    if field.choices is not None and value not in field.choices:
        allowed = ", ".join(map(str, field.choices))
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, f"{_label(kind, name)} must be one of {allowed}", field=name
        )
    if isinstance(value, str):
        _check_text(kind, name, field, value)
    elif isinstance(value, dict):
        if (found := surrogate_in(value)) is not None:
            raise not_text(_label(kind, name), name, found)
    elif kind_of is not bool and isinstance(value, int) and not field.minimum <= value <= field.maximum:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"{_label(kind, name)} must be from {field.minimum} to {field.maximum}",
            field=name,
        )
    return value


def _label(kind: str, name: str) -> str:
    """How a refusal names a field: ``act.seq``, or the field alone without a message type.
    Built only for a refusal: on every accepted field it was a string formatted for nothing."""
    return f"{kind}.{name}" if kind else name


def _check_text(kind: str, name: str, field: Field, value: str) -> None:
    if not value.isascii() and (found := lone_surrogate(value)) is not None:
        raise not_text(_label(kind, name), name, found)
    if len(value) < field.min_len or (field.max_len is not None and len(value) > field.max_len):
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE,
            f"{_label(kind, name)} must be {field.min_len} to {field.max_len} characters",
            field=name,
        )
    if field.pattern is not None and not field.pattern.search(value):
        pattern = _shown(field.pattern)
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{_label(kind, name)} must match {pattern}", field=name)


def _shown(pattern: re.Pattern[str]) -> str:
    """A compiled pattern as the schema writes it (``$``, not Python's ``\\Z``)."""
    text = pattern.pattern
    return text[:-2] + "$" if text.endswith("\\Z") else text
