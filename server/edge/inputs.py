"""A request's JSON body and whole-number query parameters, checked before a handler uses them.

The body is checked against the fields its route documents (the operation
:func:`server.edge.openapi.route` found), with the WebSocket's field checks.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request

from server.edge.protocol import check_fields, not_text, parse_json, printable, surrogate_in
from server.errors import ProtocolError
from wire import ErrorCode

MAX_BODY_BYTES = 4096
WHOLE_NUMBER = re.compile(r"-?[0-9]{1,10}\Z", re.ASCII)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (no body at all = {}) checked against the route's documented
    body: ``bad_json`` when it is not a JSON object (whitespace alone is no JSON text either),
    ``bad_message`` naming a field that is unknown, missing, of the wrong type or length, or not
    Unicode text (a lone surrogate)."""
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"the body is larger than {MAX_BODY_BYTES} bytes")
    body: Any = {}
    if raw:
        try:
            body = parse_json(raw)
        except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested past the parser
            raise ProtocolError(ErrorCode.BAD_JSON, "the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ProtocolError(ErrorCode.BAD_JSON, "the body must be a JSON object")
    operation = getattr(request.state, "operation", None)
    if operation is not None and operation.body is not None:
        return check_fields("", operation.body, body)
    for name, value in body.items():  # no documented body: still, every string must be text
        if (found := surrogate_in([name, value])) is not None:
            raise not_text(printable(name), name, found)
    return body


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """A whole-number query parameter within [low, high], or ``bad_message`` naming it.

    Only ASCII digits count: ``str.isdigit`` takes ``²`` and ``١`` too, which ``int`` refuses."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if WHOLE_NUMBER.match(raw) is None or not low <= int(raw) <= high:
        raise ProtocolError(
            ErrorCode.BAD_MESSAGE, f"{name} must be a whole number from {low} to {high}", field=name
        )
    return int(raw)
