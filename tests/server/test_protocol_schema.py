"""The request validator is the published schema, compiled: the two accept exactly the same messages.

Generated messages (right and wrong types, bounds, patterns, unknown fields)
go through both :func:`server.edge.protocol.validate` and a general JSON
Schema validator over ``asyncapi.json``. An action's inner shape is the
engine's to judge (``Action.from_json``, tested in tests/engine), so here an
action is any object on both sides.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, ValidationError, validators

from server.edge.protocol import REQUESTS, SCHEMA_PATH, validate
from server.errors import ProtocolError

DOCUMENT = json.loads(SCHEMA_PATH.read_text())


def ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    """JSON Schema's ``pattern`` (ECMA-262: ``$`` is the end), where jsonschema uses Python's
    ``re.search`` (``$`` also before a final newline)."""
    if isinstance(instance, str) and not re.search(pattern.removesuffix("$") + r"\Z", instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


EcmaValidator = validators.extend(Draft7Validator, {"pattern": ecma_pattern})


@cache
def schema_validator(kind: str) -> Any:
    document = copy.deepcopy(DOCUMENT)
    document["components"]["schemas"]["Action"] = {"type": "object"}
    messages = document["components"]["messages"]
    name = next(n for n, m in messages.items() if m["payload"]["properties"]["type"].get("const") == kind)
    schema = {"$ref": f"#/components/messages/{name}/payload", "components": document["components"]}
    return EcmaValidator(schema)


def accepted(message: dict[str, Any]) -> bool:
    try:
        validate(message)
    except ProtocolError:
        return False
    return True


FIELD_NAMES = sorted({name for fields in REQUESTS.values() for name in fields} | {"id", "extra"})
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.sampled_from([0, 1, 60, 61, 100, 101, 2**31 - 1, 2**31, -1, 1.0, 2.5, float(2**31)]),
    st.text(max_size=40),
    st.sampled_from(["g_abc123", "r_f918c15baa6c", "g_ABC", "g_abc\n", "HH", "SH", "hh", "full", "brief"]),
    st.sampled_from(["x" * 32, "x" * 33, "x" * 64, "x" * 65, "x" * 129, "SH1-C4-AAAAAJ2"]),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.lists(st.integers(), max_size=2),
)


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(REQUESTS)))
    names = REQUESTS[kind]
    message: dict[str, Any] = {"type": kind}
    for name in names:  # mostly the message's own fields, often well formed
        if draw(st.booleans()):
            message[name] = draw(VALUES)
    for name in draw(st.lists(st.sampled_from(FIELD_NAMES), max_size=2)):
        message[name] = draw(VALUES)
    return message


@settings(max_examples=3000, deadline=None)
@given(messages())
def test_the_validator_and_the_schema_agree(message: dict[str, Any]) -> None:
    by_schema = schema_validator(message["type"]).is_valid(message)
    assert accepted(message) == by_schema, message


def test_every_request_example_of_the_schema_is_accepted() -> None:
    for ref in DOCUMENT["channels"]["/ws"]["publish"]["message"]["oneOf"]:
        message = DOCUMENT["components"]["messages"][ref["$ref"].rsplit("/", 1)[1]]
        for example in message.get("examples", []):
            assert accepted(example["payload"]), example
