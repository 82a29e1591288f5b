"""The results log over HTTP: the key, the heads, inclusion and consistency proofs, the leaves.

Every route is public; what a leaf holds (a daily's code) waits for its day to
end (``service.check_open``), while heads and hashes are served at any time.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from server.edge.inputs import int_param
from server.edge.openapi import route
from server.errors import ProtocolError
from server.features.results_log.service import ResultsLog, head_json
from server.rules.days import parse_day
from wire import ErrorCode

MAX_INDEX = 2**53 - 1  # what a JSON number carries exactly: far past any log's size


def required_int(request: Request, name: str, low: int) -> int:
    """A whole-number query parameter that must be given."""
    if name not in request.query_params:
        raise ProtocolError(ErrorCode.BAD_MESSAGE, f"{name} is required", field=name)
    return int_param(request, name, 0, low, MAX_INDEX)


class ResultsLogApi:
    def __init__(self, results_log: ResultsLog) -> None:
        self.log = results_log

    def routes(self) -> list[BaseRoute]:
        return [
            route("/api/log/key", self.get_key),
            route("/api/log/latest", self.get_latest),
            route("/api/log/heads/{day}", self.get_head),
            route("/api/log/consistency", self.get_consistency),
            route("/api/log/leaves", self.get_leaves),
            route("/api/games/{game_id}/inclusion", self.get_inclusion),
        ]

    async def get_key(self, request: Request) -> Response:
        """The public key every tree head is signed with (raw Ed25519, hex)."""
        return JSONResponse({"algorithm": "ed25519", "public_key": await self.log.public_key()})

    async def get_head(self, request: Request) -> Response:
        """A day's signed tree head, once the day has ended and its attempts are final."""
        signed = await self.log.head(parse_day(request.path_params["day"]))
        if signed is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no tree head is signed for that day (yet)")
        return JSONResponse(head_json(signed))

    async def get_latest(self, request: Request) -> Response:
        """The newest signed tree head."""
        signed = await self.log.latest()
        if signed is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, "no tree head is signed yet")
        return JSONResponse(head_json(signed))

    async def get_inclusion(self, request: Request) -> Response:
        """A daily game's leaf and audit path against its day's head."""
        found = await self.log.inclusion(request.path_params["game_id"])
        return JSONResponse(
            {
                "leaf": found.leaf,
                "leaf_index": found.leaf_index,
                "tree_size": found.head.head.tree_size,
                "root_hash": found.head.head.root_hash,
                "audit_path": found.audit_path,
            }
        )

    async def get_consistency(self, request: Request) -> Response:
        """The consistency proof between two tree sizes (RFC 9162 2.1.4)."""
        first, second = required_int(request, "first", 1), required_int(request, "second", 1)
        proof = await self.log.consistency(first, second)
        return JSONResponse({"first": first, "second": second, "proof": proof})

    async def get_leaves(self, request: Request) -> Response:
        """Leaves start to end inclusive, as RFC 9162's get-entries: at most 1,000 a call."""
        start, end = required_int(request, "start", 0), required_int(request, "end", 0)
        return JSONResponse({"leaves": await self.log.leaves(start, end)})
