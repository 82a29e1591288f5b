"""The HTTP JSON API, on the standard library (urllib in a worker thread).

No extra dependency: a client needs HTTP only for a few calls (creating a
player, finished games, leaderboards), none of them on a hot path.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from client.errors import ConnectionLostError, SolitaireError, error_from
from client.models import (
    Account,
    Credentials,
    GameInfo,
    GameState,
    HistoryPage,
    LoggedIn,
    Player,
    PlayerStats,
    Replay,
    Session,
)

DEFAULT_SERVER = "http://127.0.0.1:8000"


def normalize_server(url: str) -> str:
    """``host:port`` or a ws:// URL also work; the result is an http(s) base without a slash."""
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    scheme, rest = url.split("://", 1)
    scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    return f"{scheme}://{rest.removesuffix('/ws')}"


def websocket_url(server: str) -> str:
    base = normalize_server(server)
    return base.replace("http", "ws", 1) + "/ws"


class HttpApi:
    """Blocking-free access to the HTTP API; errors become the same typed exceptions."""

    def __init__(self, server: str = DEFAULT_SERVER, token: str | None = None, timeout: float = 15.0):
        self.base = normalize_server(server)
        self.token = token
        self.timeout = timeout

    async def call(self, method: str, path: str, body: Any = None, auth: bool = False) -> Any:
        return await asyncio.to_thread(self._call, method, path, body, auth)

    def _call(self, method: str, path: str, body: Any, auth: bool) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json")
        if auth and self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise _http_error(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            raise ConnectionLostError(f"cannot reach {self.base}: {exc}") from None

    # -- players ---------------------------------------------------------------

    async def create_player(self, name: str | None = None, bot: bool = False) -> Credentials:
        """A new player; ``bot=True`` says it is a program: it then ranks on the bots' boards only."""
        fields: dict[str, Any] = {"name": name} if name else {}
        if bot:
            fields["bot"] = True
        body = await self.call("POST", "/api/players", fields)
        return Credentials(body["id"], body["name"], body["token"], bool(body.get("bot")))

    async def rename(self, name: str) -> Player:
        return Player.from_json(await self.call("PATCH", "/api/players/me", {"name": name}, auth=True))

    async def player(self, player_id: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("GET", f"/api/players/{quote(player_id)}")
        return result

    # -- accounts and sessions ---------------------------------------------------------

    async def create_account(self, username: str, password: str) -> Account:
        """Claim this guest player (its token) as an account; the token keeps working."""
        body = await self.call(
            "POST", "/api/accounts", {"username": username, "password": password}, auth=True
        )
        return Account(body["id"], body["name"], body["username"], None, None)

    async def account(self) -> Account:
        """Who this token is: the player, its account (username None for a guest) and session."""
        return Account.from_json(await self.call("GET", "/api/accounts/me", auth=True))

    async def log_in(self, username: str, password: str, label: str | None = None) -> LoggedIn:
        """A new session for the account's player; sets this client's token to it."""
        fields = {"username": username, "password": password, **({"label": label} if label else {})}
        done = LoggedIn.from_json(await self.call("POST", "/api/sessions", fields))
        self.token = done.token
        return done

    async def sessions(self) -> list[Session]:
        body = await self.call("GET", "/api/sessions", auth=True)
        return [Session.from_json(s) for s in body["sessions"]]

    async def log_out(self) -> int:
        """End this token's session (its sockets close too); returns how many ended (1)."""
        body = await self.call("DELETE", "/api/sessions/current", auth=True)
        return int(body["ended_sessions"])

    async def revoke_session(self, session_id: str) -> int:
        body = await self.call("DELETE", f"/api/sessions/{quote(session_id)}", auth=True)
        return int(body["ended_sessions"])

    async def change_password(self, password: str, new_password: str) -> int:
        """Returns how many other sessions ended (all of them)."""
        fields = {"password": password, "new_password": new_password}
        body = await self.call("POST", "/api/accounts/me/password", fields, auth=True)
        return int(body["ended_sessions"])

    # -- a player's home ---------------------------------------------------------------

    async def stats(self, player_id: str) -> PlayerStats:
        return PlayerStats.from_json(await self.call("GET", f"/api/players/{quote(player_id)}/stats"))

    async def history(
        self,
        player_id: str,
        *,
        limit: int = 20,
        cursor: str | None = None,
        game: str | None = None,
        variant: str | None = None,
        result: str | None = None,
        daily: bool = False,
    ) -> HistoryPage:
        """A page of a player's games, newest first (its own, with this client's token: all)."""
        query = {"limit": str(limit), "cursor": cursor, "game": game, "variant": variant, "result": result}
        if daily:
            query["daily"] = "true"
        text = urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        body = await self.call("GET", f"/api/players/{quote(player_id)}/games?{text}", auth=True)
        return HistoryPage.from_json(body)

    async def replay(self, game_id: str) -> Replay:
        """Every position of a finished game, computed by the server's engine."""
        return Replay.from_json(await self.call("GET", f"/api/games/{quote(game_id)}/replay", auth=True))

    # -- games -------------------------------------------------------------------

    async def game(self, game_id: str) -> tuple[GameInfo, GameState]:
        body = await self.call("GET", f"/api/games/{quote(game_id)}", auth=True)
        return GameInfo.from_json(body["game"]), GameState.from_json(body["state"])

    async def game_actions(self, game_id: str) -> dict[str, Any]:
        """A finished game's log: ``code``, ``actions`` (text form) and the ``final`` summary."""
        result: dict[str, Any] = await self.call("GET", f"/api/games/{quote(game_id)}/actions", auth=True)
        return result

    async def verify(self, game_id: str) -> dict[str, Any]:
        """The server's own replay check of a finished game (and of its leaderboard entry)."""
        result: dict[str, Any] = await self.call("GET", f"/api/games/{quote(game_id)}/verify", auth=True)
        return result

    async def solution(self, game_id: str) -> dict[str, Any]:
        """After a game: ``winnable`` and a solution's ``actions`` from the deal (409 while open)."""
        result: dict[str, Any] = await self.call("GET", f"/api/games/{quote(game_id)}/solution", auth=True)
        return result

    # -- competing -----------------------------------------------------------------

    async def daily(self, day: str | None = None) -> dict[str, Any]:
        """Today's (or ``day``'s, YYYY-MM-DD) ``challenges`` per family, with ``ends_at`` for the reset.

        Today's are sealed: each has only its ``commitment``; a past day's also
        have ``code`` and ``salt`` (check them with :func:`client.daily.verify_day`).
        """
        result: dict[str, Any] = await self.call("GET", "/api/daily" + (f"/{quote(day)}" if day else ""))
        return result

    async def leaderboard(self, code: str, limit: int = 50, cursor: str | None = None) -> dict[str, Any]:
        """A page of a code's board: ``entries`` and ``next_cursor`` for the next page."""
        query = {"limit": str(limit), **({"cursor": cursor} if cursor else {})}
        path = f"/api/leaderboards/{quote(code)}?{urllib.parse.urlencode(query)}"
        result: dict[str, Any] = await self.call("GET", path)
        return result

    async def daily_leaderboard(
        self, day: str, family: str, limit: int = 50, cursor: str | None = None, kind: str = "human"
    ) -> dict[str, Any]:
        """A daily challenge's board by day and family (the only way while its day lasts)."""
        query = {"limit": str(limit), "kind": kind, **({"cursor": cursor} if cursor else {})}
        path = f"/api/daily/{quote(day)}/{quote(family)}/leaderboard?{urllib.parse.urlencode(query)}"
        result: dict[str, Any] = await self.call("GET", path)
        return result

    async def daily_rank(self, day: str, family: str, player_id: str, radius: int = 5) -> dict[str, Any]:
        """A player's entry and ``rank`` on a daily challenge's board, by day and family."""
        board = f"/api/daily/{quote(day)}/{quote(family)}/leaderboard"
        result: dict[str, Any] = await self.call("GET", f"{board}/players/{quote(player_id)}?radius={radius}")
        return result

    async def rank(self, code: str, player_id: str, radius: int = 5) -> dict[str, Any]:
        """A player's entry and ``rank`` with ``radius`` entries either side."""
        path = f"/api/leaderboards/{quote(code)}/players/{quote(player_id)}?radius={radius}"
        result: dict[str, Any] = await self.call("GET", path)
        return result

    # -- the rest ----------------------------------------------------------------

    async def health(self) -> dict[str, Any]:
        result: dict[str, Any] = await self.call("GET", "/health")
        return result

    async def schema(self, name: str = "asyncapi.json") -> dict[str, Any]:
        result: dict[str, Any] = await self.call("GET", f"/api/schema/{quote(name)}")
        return result


def quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def _http_error(exc: urllib.error.HTTPError) -> SolitaireError:
    try:
        body = json.loads(exc.read() or b"null")
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return error_from(body["error"], exc.code)
    if isinstance(body, dict) and "status" in body:  # /health's 503 body
        return error_from({"code": "internal", "message": str(body)}, exc.code)
    return error_from({"code": "internal", "message": f"HTTP {exc.code} {exc.reason}"}, exc.code)
