"""The WebSocket client: requests with ids, pushed messages, reconnect and resume.

One background task reads the socket and routes each message: a reply to
the request waiting on its id, an ``update`` or ``game`` push to the game's
handle, anything else to the listeners. When the connection drops, requests
that are safe to repeat wait while the client reconnects with backoff,
authenticates again, re-opens every game it holds, and then resend the same
message. An ``act`` keeps its seq, so the server either applies it (it never
arrived) or answers it as a duplicate (it did): nothing is applied twice.

A client does not wait for its next request to notice: when the socket
closes (the server was killed, stopped with ``bye``, or Redis came back and
every instance said ``bye``), a background task reconnects at once, with
exponential backoff and jitter (:func:`backoff_delays`, on an injected random
source and sleep), until it is connected again or closed. Re-opening a game
is its catch-up: the reply carries the game's state at its latest seq, so a
spectator's handle moves from the last seq it saw to the current one, and the
pushes that follow are the game's next moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.protocol import State as SocketState

from client.competition import GhostRaceHandle, LeaderboardFeed, RaceHandle, board_key
from client.errors import AuthError, ConnectionLostError, GameOverError, error_from
from client.game import ActionLike, GameHandle, to_action
from client.http import DEFAULT_SERVER, HttpApi, websocket_url
from client.models import Credentials, Player, Result
from wire import PROTOCOL_VERSION

log = logging.getLogger(__name__)
# Requests whose repetition is harmless, so they are resent after a reconnect.
RESENDABLE = frozenset(
    {
        "ping",
        "open_game",
        "act",
        "resign",
        "watch",
        "unwatch",
        "subscribe_leaderboard",
        "unsubscribe_leaderboard",
        "race_watch",
        "race_join",
        "ghost_watch",
    }
)
Listener = Callable[[dict[str, Any]], None]
FIRST_DELAY_S = 0.1  # the first retry's delay, before jitter; it doubles after each failure
MAX_DELAY_S = 5.0  # the longest delay between two attempts, before jitter


def backoff_delays(
    random_source: Callable[[], float] = random.random, first: float = FIRST_DELAY_S, cap: float = MAX_DELAY_S
) -> Iterator[float]:
    """Delays before each retry: doubling from ``first`` up to ``cap``, each scaled by a random
    factor in [0.5, 1.5) so that clients dropped together do not all come back at once."""
    delay = first
    while True:
        yield delay * (0.5 + random_source())
        delay = min(delay * 2, cap)


class _Dropped(Exception):
    """The connection a request was sent on went away before its reply came."""


class _Bucket:
    """Client-side pacing below the server's announced rate, so requests are never refused."""

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst, self.tokens, self.last = rate, burst, burst, time.monotonic()

    async def take(self) -> None:
        while True:
            now = time.monotonic()
            self.tokens = min(self.burst, self.tokens + (now - self.last) * self.rate)
            self.last = now
            if self.tokens >= 1:
                self.tokens -= 1
                return
            await asyncio.sleep((1 - self.tokens) / self.rate)


def board_fields(code: str | None, day: str | None, family: str | None) -> dict[str, Any]:
    """The request fields naming a board: a code, or a daily's day and family."""
    if code is not None:
        return {"code": code}
    if day is None or family is None:
        raise ValueError("give a code, or a daily challenge's day and family")
    return {"day": day, "family": family}


class SolitaireClient:
    """An async client for one player (or an anonymous spectator) on one server.

    Use it as ``async with SolitaireClient(server, token) as client:``. Every
    method raises a :class:`~client.errors.SolitaireError` subclass for an
    error answer, and :class:`~client.errors.ConnectionLostError` when the
    connection cannot be resumed.
    """

    def __init__(
        self,
        server: str = DEFAULT_SERVER,
        token: str | None = None,
        *,
        reconnect: bool = True,
        retries: int = 6,
        timeout: float = 15.0,
        trace: Listener | None = None,
        trace_sent: Listener | None = None,
        protocol: int = PROTOCOL_VERSION,
        random_source: Callable[[], float] = random.random,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.http = HttpApi(server, token, timeout)
        self.server = self.http.base
        self.token = token
        self.reconnect = reconnect
        self.retries = retries
        self.timeout = timeout
        self.protocol = protocol
        self.trace = trace  # sees every message received, replies included
        self.trace_sent = trace_sent  # sees every message sent
        self.hello: dict[str, Any] = {}
        self.player: Player | None = None
        self.connects = 0  # successful connections so far; > 1 means it reconnected
        self.bye_reason: str | None = None
        self.games: dict[str, GameHandle] = {}
        self.leaderboards: dict[str, LeaderboardFeed] = {}
        self.races: dict[str, RaceHandle] = {}
        self.ghosts: dict[str, GhostRaceHandle] = {}
        self.pushes: list[Listener] = []  # called with every pushed message
        self._ws: ClientConnection | None = None
        self._pending: dict[Any, tuple[ClientConnection, asyncio.Future[dict[str, Any]]]] = {}
        self._ids = itertools.count(1)
        self._connecting = asyncio.Lock()
        self._bucket = _Bucket(40, 50)
        self._readers: set[asyncio.Task[None]] = set()
        self._closed = False
        self.random_source = random_source  # the backoff's jitter (injected by tests)
        self.sleep = sleep  # the backoff's waits (injected by tests)
        self._reviver: asyncio.Task[None] | None = None  # reconnecting after a drop

    # -- life cycle ------------------------------------------------------------------

    async def __aenter__(self) -> SolitaireClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> Player | None:
        """Connect and authenticate (anonymous without a token); returns the player."""
        await self._connection()
        return self.player

    async def close(self) -> None:
        self._closed = True
        if self._reviver is not None:
            self._reviver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reviver
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.close()
        for task in list(self._readers):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def connected(self) -> bool:
        return self._ws is not None and self._ws.state is SocketState.OPEN

    @staticmethod
    async def create_player(
        server: str = DEFAULT_SERVER, name: str | None = None, bot: bool = False
    ) -> Credentials:
        """A new player over HTTP; the token is the player's identity, shown only once.

        A program says so with ``bot=True``: it ranks on the bots' boards, never among people.
        """
        return await HttpApi(server).create_player(name, bot)

    # -- requests ---------------------------------------------------------------------

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return its reply; an ``error`` reply is raised as its class."""
        message = {"type": kind, "id": next(self._ids), **fields}
        drops = 0
        while True:
            ws = await self._connection()
            try:
                reply = await self._exchange(ws, message)
            except _Dropped:
                drops += 1
                if self._closed or not self.reconnect or kind not in RESENDABLE or drops > self.retries:
                    raise ConnectionLostError(f"the connection dropped during {kind}") from None
                continue
            if reply.get("type") == "error":
                raise error_from(reply)
            return reply

    async def ping(self) -> float:
        """Round-trip time in seconds."""
        start = time.monotonic()
        await self.request("ping")
        return time.monotonic() - start

    async def new_game(
        self,
        code: str | None = None,
        *,
        game: str | None = None,
        variant: str | None = None,
        daily: str | None = None,
    ) -> GameHandle:
        """Start a game from a code, a game and variant (random deal) or a daily family (``SH1-C2``)."""
        fields = {"code": code, "game": game, "variant": variant, "daily": daily}
        reply = await self.request("new_game", **{k: v for k, v in fields.items() if v is not None})
        return self._track(reply)

    async def open_game(self, game_id: str) -> GameHandle:
        """Reopen a game by id: full control for its owner, the spectator view for anyone else."""
        return self._track(await self.request("open_game", game_id=game_id))

    async def watch(self, game_id: str) -> GameHandle:
        """Spectate a game; its handle then follows every accepted action."""
        return self._track(await self.request("watch", game_id=game_id))

    async def unwatch(self, game_id: str) -> None:
        self.games.pop(game_id, None)
        await self.request("unwatch", game_id=game_id)

    async def act(self, game_id: str, seq: int, action: ActionLike) -> Result:
        """One action with an explicit seq (handles track the seq for you)."""
        payload = to_action(action).to_json()
        reply = await self.request("act", game_id=game_id, seq=seq, action=payload)
        result = Result.from_json(reply)
        handle = self.games.get(game_id)
        if handle is not None:
            handle.last_result = result
            handle._set_state(result.state)
        return result

    async def resign(self, game_id: str) -> GameHandle:
        """Resign; repeating it (say, after a reconnect) is harmless."""
        try:
            return self._track(await self.request("resign", game_id=game_id))
        except GameOverError:
            handle = await self.open_game(game_id)
            if handle.info.result != "resigned":
                raise
            return handle

    async def solution(self, game_id: str) -> dict[str, Any]:
        """After a game (never during one, HH-25): was the deal winnable, and a solution."""
        return await self.request("solution", game_id=game_id)

    async def hint(self, game_id: str) -> dict[str, Any]:
        """During your own Seahaven game: the next move of a winning line from its position
        (``result`` won, with ``action`` in the act form), or ``impossible``/``unknown``;
        ``hint_refused`` for a ranked daily, a race and Heart to Heart (HH-25)."""
        return await self.request("hint", game_id=game_id)

    # -- leaderboards, dailies and races ------------------------------------------------

    async def subscribe_leaderboard(
        self,
        code: str | None = None,
        limit: int | None = None,
        *,
        day: str | None = None,
        family: str | None = None,
    ) -> LeaderboardFeed:
        """A board's top entries now, then a pushed ``leaderboard_update`` for every change.

        A code's board, or a daily challenge's by ``day`` and ``family`` (the only
        way while its day lasts: its code is sealed).
        """
        fields = board_fields(code, day, family)
        if limit is not None:
            fields["limit"] = limit
        reply = await self.request("subscribe_leaderboard", **fields)
        key = board_key(reply)
        feed = self.leaderboards.get(key)
        if feed is None:
            feed = self.leaderboards[key] = LeaderboardFeed(reply)
        else:
            feed.take_snapshot(reply)
        return feed

    async def unsubscribe_leaderboard(
        self, code: str | None = None, *, day: str | None = None, family: str | None = None
    ) -> None:
        reply = await self.request("unsubscribe_leaderboard", **board_fields(code, day, family))
        self.leaderboards.pop(board_key(reply), None)

    async def daily(self, day: str | None = None) -> dict[str, Any]:
        """Today's (or a past day's) codes per family, over HTTP."""
        return await self.http.daily(day)

    async def new_daily(self, family: str) -> GameHandle:
        """Start today's challenge of a family (``HH1-N``, ``SH1-C4``, ``SH1-C2``, ``SH1-C1``)."""
        return await self.new_game(daily=family)

    async def race_open(
        self, code: str | None = None, *, game: str | None = None, variant: str | None = None
    ) -> RaceHandle:
        """Open a race on a code (or a random deal of a game and variant); others join by its id."""
        fields = {"code": code, "game": game, "variant": variant}
        reply = await self.request("race_open", **{k: v for k, v in fields.items() if v is not None})
        return self._track_race(reply)

    async def race_join(self, race_id: str) -> RaceHandle:
        """Join a race (or come back to it after a reconnect)."""
        return self._track_race(await self.request("race_join", race_id=race_id))

    async def race_watch(self, race_id: str) -> RaceHandle:
        return self._track_race(await self.request("race_watch", race_id=race_id))

    async def race_start(self, race_id: str, countdown_s: int | None = None) -> RaceHandle:
        """Start a race you opened, after ``countdown_s`` seconds."""
        fields = {} if countdown_s is None else {"countdown_s": countdown_s}
        return self._track_race(await self.request("race_start", race_id=race_id, **fields))

    async def race_leave(self, race_id: str) -> None:
        """Stop following a race; a racer leaves it (or resigns, once it runs)."""
        await self.request("race_leave", race_id=race_id)
        self.races.pop(race_id, None)

    async def ghost_race(self, game_id: str) -> GhostRaceHandle:
        """Race the replay of a finished game: a new game on its deal, and the ghost's progress."""
        reply = await self.request("ghost_race", game_id=game_id)
        handle = GhostRaceHandle(self._track({**reply, "role": "owner"}), reply)
        self.ghosts[handle.id] = handle
        return handle

    def adopt_game(self, message: dict[str, Any]) -> GameHandle:
        """Hold a game this player was given (a race's ``race_started``) like one it opened."""
        return self._track({"game": message["game"], "state": message["state"], "role": "owner"})

    def _track_race(self, reply: dict[str, Any]) -> RaceHandle:
        race_id = reply["race"]["id"]
        handle = self.races.get(race_id)
        if handle is None:
            handle = self.races[race_id] = RaceHandle(self, reply)
        else:
            handle.take_reply(reply)
        return handle

    def _track(self, reply: dict[str, Any]) -> GameHandle:
        game_id = reply["game"]["id"]
        handle = self.games.get(game_id)
        if handle is None:
            handle = self.games[game_id] = GameHandle(self, reply)
        else:
            handle.take_game(reply, reply["role"])
        return handle

    # -- the connection ------------------------------------------------------------------

    async def _connection(self) -> ClientConnection:
        """The open connection, reconnecting (with backoff) and resuming when needed."""
        if self.connected and self._ws is not None:
            return self._ws
        if self._closed:
            raise ConnectionLostError("the client is closed")
        async with self._connecting:
            if self.connected and self._ws is not None:
                return self._ws
            return await self._reconnect()

    async def _reconnect(self, delays: Iterator[float] | None = None) -> ClientConnection:
        delays = delays or backoff_delays(self.random_source)
        problem = "not tried"
        for attempt in range(self.retries + 1):
            if attempt:
                await self.sleep(next(delays))
            try:
                return await self._open()
            except AuthError:
                raise
            except (OSError, TimeoutError, ConnectionClosed, InvalidHandshake, _Dropped) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if self._closed or (self.connects and not self.reconnect):
                break
        raise ConnectionLostError(f"cannot connect to {self.server}: {problem}")

    def _revive_soon(self) -> None:
        """Reconnect in the background after a drop, unless closed or already under way."""
        if self._closed or not self.reconnect or not self.connects:
            return
        if self._reviver is None or self._reviver.done():
            self._reviver = asyncio.get_running_loop().create_task(self._revive())

    async def _revive(self) -> None:
        """Connect again (and so resume every game and subscription) until connected or closed:
        each round is :meth:`_reconnect`'s attempts, and the backoff goes on across rounds."""
        delays = backoff_delays(self.random_source)
        while not self._closed and not self.connected:
            try:
                async with self._connecting:
                    if self.connected or self._closed:
                        return
                    await self._reconnect(delays)
                return
            except AuthError as exc:  # the token is no longer good: nothing to come back to
                log.warning("not reconnecting: %s", exc)
                return
            except ConnectionLostError as exc:
                log.info("still reconnecting: %s", exc)
                await self.sleep(next(delays))

    async def _open(self) -> ClientConnection:
        try:
            ws = await websockets.connect(
                websocket_url(self.server), compression=None, max_size=2**22, open_timeout=self.timeout
            )
        except InvalidURI as exc:
            raise ConnectionLostError(str(exc)) from None
        try:
            await self._handshake(ws)
            reader = asyncio.get_running_loop().create_task(self._read(ws))
            self._readers.add(reader)
            reader.add_done_callback(self._readers.discard)
            self._ws = ws
            await self._resume(ws)
        except BaseException:
            self._ws = None
            await ws.close()
            raise
        self.connects += 1
        return ws

    async def _handshake(self, ws: ClientConnection) -> None:
        """hello, then auth; an error answer raises AuthError (the server closes the socket)."""
        self.hello = await self._receive(ws)
        limits = self.hello.get("limits", {})
        rate = float(limits.get("rate_per_s", 50))
        self._bucket = _Bucket(rate * 0.8, max(1.0, float(limits.get("burst", 100)) / 2))
        auth: dict[str, Any] = {"type": "auth", "id": next(self._ids), "protocol": self.protocol}
        if self.token:
            auth["token"] = self.token
        await self._send(ws, auth)
        welcome = await self._receive(ws)
        if welcome.get("type") == "error":
            raise error_from(welcome)
        player = welcome.get("player")
        self.player = Player.from_json(player) if player else None

    async def _receive(self, ws: ClientConnection) -> dict[str, Any]:
        raw = await asyncio.wait_for(ws.recv(), self.timeout)
        message: dict[str, Any] = json.loads(raw)
        if self.trace is not None:
            self.trace(message)
        return message

    async def _resume(self, ws: ClientConnection) -> None:
        """Re-open every held game on a new connection, which also renews its subscription."""
        for game_id, handle in list(self.games.items()):
            kind = "open_game" if handle.is_owner else "watch"
            reply = await self._exchange(ws, {"type": kind, "id": next(self._ids), "game_id": game_id})
            if reply.get("type") == "game":
                handle.take_game(reply, reply["role"])
            else:
                log.warning("could not resume %s: %s", game_id, reply.get("message"))
                self.games.pop(game_id, None)
        await self._resubscribe(ws)

    async def _resubscribe(self, ws: ClientConnection) -> None:
        """Follow the same leaderboards, races and ghost races again on a new connection."""
        for feed in list(self.leaderboards.values()):
            fields = board_fields(feed.code, feed.day, feed.family)
            reply = await self._exchange(
                ws, {"type": "subscribe_leaderboard", "id": next(self._ids), **fields}
            )
            if reply.get("type") == "leaderboard":
                feed.take_snapshot(reply)
        for race_id, race in list(self.races.items()):
            kind = "race_watch" if race.role == "spectator" else "race_join"
            reply = await self._exchange(ws, {"type": kind, "id": next(self._ids), "race_id": race_id})
            if reply.get("type") == "race":
                race.take_reply(reply)
        for race_id, ghost in list(self.ghosts.items()):
            if ghost.winner is not None:
                continue
            watch = {"type": "ghost_watch", "id": next(self._ids), "race_id": race_id}
            reply = await self._exchange(ws, watch)
            if reply.get("type") == "ghost_watch":
                ghost.take_push({"type": "ghost_progress", "racer": reply["ghost"]})
            else:  # finished meanwhile, or the server restarted: the game goes on alone
                self.ghosts.pop(race_id, None)

    async def _exchange(self, ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
        """Send on this connection and wait for the reply with the same id."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        rid = message["id"]
        self._pending[rid] = (ws, future)
        try:
            await self._bucket.take()
            try:
                await self._send(ws, message)
                return await asyncio.wait_for(future, self.timeout)
            except ConnectionClosed:
                raise _Dropped() from None
            except TimeoutError:  # a silent connection: treat it as dropped and start over
                await ws.close()
                raise _Dropped() from None
        finally:
            self._pending.pop(rid, None)

    async def _send(self, ws: ClientConnection, message: dict[str, Any]) -> None:
        await ws.send(json.dumps(message))
        if self.trace_sent is not None:
            self.trace_sent(message)

    async def _read(self, ws: ClientConnection) -> None:
        try:
            async for raw in ws:
                message = json.loads(raw)
                if self.trace is not None:
                    self.trace(message)
                self._dispatch(ws, message)
        except ConnectionClosed:
            pass
        finally:
            dropped = self._ws is ws
            if dropped:
                self._ws = None
            for owner, future in list(self._pending.values()):
                if owner is ws and not future.done():
                    future.set_exception(_Dropped())
            if dropped:
                self._revive_soon()

    def _dispatch(self, ws: ClientConnection, message: dict[str, Any]) -> None:
        entry = self._pending.get(message.get("id"))
        if entry is not None and entry[0] is ws and not entry[1].done():
            entry[1].set_result(message)
            return
        kind = message.get("type")
        handle = self.games.get(str(message.get("game_id") or message.get("game", {}).get("id")))
        if kind == "update" and handle is not None:
            handle.take_update(message)
        elif kind in ("game", "finished", "status") and handle is not None:
            handle.take_game(message)
        elif kind == "leaderboard_update" and board_key(message) in self.leaderboards:
            self.leaderboards[board_key(message)].take_update(message)
        elif kind in ("race_update", "race_progress", "race_started"):
            race = self.races.get(str(message.get("race_id") or message.get("race", {}).get("id")))
            if race is not None:
                race.take_push(message)
        elif kind in ("ghost_progress", "ghost_finished") and message.get("race_id") in self.ghosts:
            self.ghosts[message["race_id"]].take_push(message)
        elif kind == "bye":
            self.bye_reason = message.get("reason")
        elif kind == "error" and message.get("code") == "rate_limited":
            self._refuse_oldest(ws, message)
        for listener in list(self.pushes):
            listener(message)

    def _refuse_oldest(self, ws: ClientConnection, message: dict[str, Any]) -> None:
        """An id-less rate_limited error answers the oldest request still waiting."""
        waiting = [(rid, f) for rid, (owner, f) in self._pending.items() if owner is ws and not f.done()]
        if waiting:
            min(waiting, key=lambda item: int(item[0]))[1].set_result(message)
