"""Live games: the engine's validation, per-game serialization, the clock and durability.

Every action goes: lock the game -> check owner and ``seq`` -> engine ->
group-commit the action and the game row -> only then update memory and
answer. A game's lock is held across its commit, so two connections acting
on one game are serialized and no move is lost or applied twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from array import array
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from engine import Action, ActionFormatError, Game, GameCode, IllegalAction
from engine.game import Outcome
from engine.verify import IDLE_GAP_CAP_MS
from engine.vocabulary import DECLARED_RESULTS, FINAL_RESULTS, Result, Status
from server import metrics
from server.clock import Clock, wall_clock_ms
from server.core import topics
from server.core.cluster import ALONE, Elsewhere, Leases
from server.core.hub import Encoded, Hub, Subscriber, encode
from server.errors import ProtocolError
from server.rules.days import day_end_ms
from server.storage import queries
from server.storage.db import Database, Tx
from server.storage.faults import StorageInDoubt, StorageUnavailable
from server.storage.leases import StorageFenced
from server.storage.writer import Write
from wire import ErrorCode

T = TypeVar("T")

MAX_GAP_MS = 2**32 - 1  # a think-time gap is kept in 32 bits (49 days)
TAKE_ATTEMPTS = 6  # an action whose game another instance took meanwhile is retried this often
TAKE_BACKOFF_S = 0.005  # before a retry: a random wait up to this, doubled each time


class Moved(Exception):
    """Another instance took the game during this change: take it back and start over."""


@dataclass
class LiveGame:
    """A game held in memory, mirroring its committed rows exactly."""

    id: str
    owner_id: str
    owner_name: str
    game: Game
    created_ms: int
    result: Result | None = None
    finished_ms: int | None = None
    elapsed_ms: int = 0
    last_action_ms: int | None = None
    undos: int = 0
    daily_day: str | None = None
    ranked: bool = True
    race_id: str | None = None
    last_outcome: dict[str, Any] | None = None
    last_action: Action | None = None
    evicted: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    cached_fingerprint: str | None = None  # the caches are cleared whenever the game changes
    cached_state: Encoded | None = None
    cached_row: dict[str, Any] | None = None  # row_values(): never changed once made
    lost_seq: int | None = None  # the dead-end solver proved no win remains at this seq
    # Milliseconds between accepted actions, for the think-time signals (4 bytes each).
    gaps: array[int] = field(default_factory=lambda: array("I"))
    fence: int | None = None  # with several instances: the token this instance took the game with

    @property
    def status(self) -> Status:
        if self.result in DECLARED_RESULTS:
            return Status(self.result)
        status = self.game.status
        return Status.LOST if status == Status.PLAYING and self.lost_seq == self.game.seq else status

    @property
    def finished(self) -> bool:
        return self.result in FINAL_RESULTS

    def fingerprint(self) -> str:
        if self.cached_fingerprint is None:
            self.cached_fingerprint = self.game.fingerprint()
        return self.cached_fingerprint

    def state_json(self) -> Encoded:
        """The public state, serialized once per change for the result and every update."""
        if self.cached_state is None:
            self.cached_state = Encoded(encode(self.state()))
        return self.cached_state

    @property
    def clock_running(self) -> bool:
        """Whether a client should keep its clock counting up from ``elapsed_ms``."""
        return self.game.seq > 0 and not self.finished

    def invalidate(self) -> None:
        self.cached_fingerprint = self.cached_state = self.cached_row = None

    def draft(self) -> LiveGame:
        """A copy to change and commit; memory takes it (``adopt``) only once it is durable.

        A shallow copy of the fields, the lock shared (every field is replaced, never changed
        in place: see ``advance``), without running ``__init__`` on every action.
        """
        copy = object.__new__(LiveGame)
        copy.__dict__.update(self.__dict__)
        return copy

    def adopt(self, draft: LiveGame) -> None:
        lock = self.lock  # a draft shares it; kept as it is whatever the draft holds
        self.__dict__.update(draft.__dict__)
        self.lock = lock

    def brief_state(self) -> dict[str, Any]:
        """The information bar and fingerprint only, for clients that mirror the board themselves.

        Read from the game row's values, which the commit of the change made already."""
        row = self.row_values()
        return {
            "seq": row["seq"],
            "status": row["status"],
            "score": row["score"],
            "moves": row["moves"],
            "undo_depth": self.game.undo_depth,
            "progress": row["progress"],
            "elapsed_ms": row["elapsed_ms"],
            "clock_running": self.clock_running,
            "fingerprint": row["fingerprint"],
        }

    def day_over(self, now_ms: int) -> bool:
        """Whether this is a ranked daily attempt whose day has ended: no player may change it.

        Unranked games on a daily's code (a second try, or one started after the day) play on.
        """
        return self.ranked and self.daily_day is not None and now_ms >= day_end_ms(self.daily_day)

    @property
    def public_code(self) -> str | None:
        """The code as messages name it: a daily's game is named by day and family, never its code."""
        return None if self.daily_day is not None else str(self.game.code)

    def state(self) -> dict[str, Any]:
        """The public state: what the owner and every spectator see."""
        view = self.game.view(self.fingerprint())
        view["code"] = self.public_code
        view["status"] = self.status
        view["elapsed_ms"] = self.elapsed_ms
        view["clock_running"] = self.clock_running
        return view

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "code": self.public_code,
            "family": self.game.code.family,
            "owner": {"id": self.owner_id, "name": self.owner_name},
            "created_at": self.created_ms,
            "finished_at": self.finished_ms,
            "result": self.result,
            "daily": self.daily_day,
            "ranked": self.ranked,
            "race_id": self.race_id,
        }

    def row_values(self) -> dict[str, Any]:
        """The game row's mutable columns, for the group writer (made once per change: the
        result's brief state reads them too). The dict is shared: never change it."""
        if self.cached_row is None:
            self.cached_row = self._row_values()
        return self.cached_row

    def _row_values(self) -> dict[str, Any]:
        g = self.game
        return {
            "id": self.id,
            "status": self.status,
            "result": self.result,
            "score": g.score,
            "moves": g.moves,
            "seq": g.seq,
            "progress": g.progress,
            "undos": self.undos,
            "elapsed_ms": self.elapsed_ms,
            "fingerprint": self.fingerprint(),
            "last_action_ms": self.last_action_ms,
            "finished_ms": self.finished_ms,
        }

    def advance(self, outcome: Outcome, now_ms: int) -> None:
        """Take an accepted outcome into memory (after it was committed)."""
        if self.last_action_ms is not None:
            gap = max(0, now_ms - self.last_action_ms)
            self.elapsed_ms += min(gap, IDLE_GAP_CAP_MS)
            # A new array, not an append: a draft shares its fields with the adopted game.
            self.gaps = self.gaps + array("I", (min(gap, MAX_GAP_MS),))
        self.last_action_ms = now_ms
        self.game = outcome.game
        self.invalidate()
        self.last_action = outcome.action
        self.last_outcome = outcome_json(outcome)
        if outcome.action.kind == "undo":
            self.undos += 1
        if outcome.game.status == Status.WON:
            self.result = Result.WON
            self.finished_ms = now_ms


def refuse_after_day(live: LiveGame, now_ms: int) -> None:
    """``day_over`` for a player's change of a ranked daily attempt once its day has ended,
    whether or not the sweeper has expired it yet: the day ends at the action, not at the sweep."""
    if live.day_over(now_ms):
        raise ProtocolError(
            ErrorCode.DAY_OVER,
            f"the daily of {live.daily_day} is over: its board is final",
        )


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    return {
        "points": outcome.points,
        "is_move": outcome.is_move,
        "events": list(outcome.events),
        "reason": outcome.reason,
    }


def update_message(live: LiveGame, seq: int, action: Action, outcome: dict[str, Any]) -> dict[str, Any]:
    """The ``update`` push of the action at ``seq`` (the game's state after it)."""
    return {
        "type": "update",
        "game_id": live.id,
        "seq": seq,
        "action": action.to_json(),
        "outcome": outcome,
        "state": live.state_json(),
    }


def finished_message(live: LiveGame) -> dict[str, Any]:
    """The ``finished`` push of a game that ended."""
    return {"type": "finished", "game": live.info(), "state": live.state_json()}


FinishHook = Callable[[LiveGame, Tx], Awaitable[None]]


class Writes(Protocol):
    """What the service needs of the group writer (``storage.writer.GroupWriter``), and no more,
    so that its own tests hand it a writer they hold and fail at will."""

    async def submit(self, write: Write) -> None:
        """Return once the write is committed; raise ``StorageUnavailable`` (nothing stored),
        ``StorageInDoubt`` (perhaps stored) or ``StorageFenced`` (another instance owns the game)."""


class GameService:
    """Creates, loads, caches and plays games; the only writer of game state.

    With ``leases`` (several instances) memory holds only the games this
    instance owns: a write takes the game first if it is not held here
    (:meth:`locked`), reads of other games load a snapshot that is not kept
    (:meth:`get`), and a commit refused by the fence forgets the game and is
    tried again on a fresh copy, where it may turn out a ``duplicate``. The hub
    is told which games are held here (:meth:`Hub.hold`, :meth:`Hub.release`).
    """

    def __init__(
        self,
        db: Database,
        writer: Writes,
        hub: Hub,
        clock: Clock = wall_clock_ms,
        cache_size: int = 20_000,
        leases: Leases | None = None,
        elsewhere: Elsewhere = ALONE,
    ) -> None:
        self.db = db
        self.leases = leases
        self.elsewhere = elsewhere  # what the other instances hear of the games held here
        self.writer = writer
        self.hub = hub
        self.clock = clock
        self.cache_size = cache_size
        self.finish_hooks: list[FinishHook] = []
        self.listeners: list[Callable[[LiveGame], None]] = []
        self._cache: OrderedDict[str, LiveGame] = OrderedDict()
        self._loading: dict[str, asyncio.Future[LiveGame | None]] = {}

    # -- creation and loading ------------------------------------------------

    async def create(
        self,
        owner_id: str,
        owner_name: str,
        code: GameCode,
        *,
        daily_day: str | None = None,
        ranked: bool = True,
        race_id: str | None = None,
    ) -> LiveGame:
        """A new game, committed before it is returned."""
        now = self.clock()
        live = LiveGame(
            id=queries.new_id("g"),
            owner_id=owner_id,
            owner_name=owner_name,
            game=Game.new(code),
            created_ms=now,
            daily_day=daily_day,
            ranked=ranked,
            race_id=race_id,
        )
        values = {
            **live.row_values(),
            "player_id": owner_id,
            "code": str(code),
            "created_ms": now,
            "daily_day": daily_day,
            "ranked": ranked,
            "race_id": race_id,
        }
        if daily_day is None:  # plain games share the group commit
            await self._durable(None, Write(None, None, new_game=values))
        else:  # a daily attempt may hit the one-ranked-attempt index: its caller handles that alone
            async with self.db.transaction() as tx:
                await queries.insert_game(tx, values)
        if self.leases is not None:
            live.fence = await self.leases.take(live.id)
        self._remember(live)
        return live

    async def get(self, game_id: str) -> LiveGame | None:
        """The live game, loading and replaying it from storage when not in memory."""
        live = self._cache.get(game_id)
        if live is not None:
            self._cache.move_to_end(game_id)
            return live
        if self.leases is not None:  # another instance may own it: a snapshot, not kept
            return await self._load(game_id)
        return await self._fetch(game_id, take=False)

    async def _fetch(self, game_id: str, take: bool) -> LiveGame | None:
        """Load a game once however many ask at the same time; ``take`` it for this instance first."""
        pending = self._loading.get(game_id)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[LiveGame | None] = asyncio.get_running_loop().create_future()
        self._loading[game_id] = future
        try:
            live = await self._take_and_load(game_id) if take else await self._load(game_id)
            if live is not None:
                self._remember(live)
                self._notify(live)  # listeners see a reloaded game too (a dead end is found again)
            future.set_result(live)
            return live
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            del self._loading[game_id]

    async def require(self, game_id: str) -> LiveGame:
        live = await self.get(game_id)
        if live is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        return live

    async def _take_and_load(self, game_id: str) -> LiveGame | None:
        """Take the game (its previous owner's commits are all in) and only then read it."""
        assert self.leases is not None
        try:
            token = await self.leases.take(game_id)
        except LookupError:
            return None
        live = await self._load(game_id)
        if live is not None:
            live.fence = token
        return live

    async def take_here(self, game_id: str) -> LiveGame:
        """The game held by this instance (taken first with several instances), or ``not_found``."""
        if self.leases is None:
            return await self.require(game_id)
        live = self._cache.get(game_id)
        if live is not None:
            self._cache.move_to_end(game_id)
            return live
        live = await self._fetch(game_id, take=True)
        if live is None:
            raise ProtocolError(ErrorCode.NOT_FOUND, f"no game {game_id!r}")
        return live

    def forget_all(self) -> None:
        """Drop every game held here: after a break in the link to the other instances, any of
        them may have been taken elsewhere unannounced (each is taken again at its next write)."""
        for live in list(self._cache.values()):
            self.forget(live)

    def moved(self, game_id: str) -> None:
        """Another instance took the game: drop this copy (its next write would be fenced anyway)."""
        live = self._cache.get(game_id)
        if live is not None:
            self.forget(live)

    async def _load(self, game_id: str) -> LiveGame | None:
        async with self.db.read() as tx:
            row = await queries.game_row(tx, game_id)
            if row is None:
                return None
            owner = await queries.player_by_id(tx, row.player_id)
            actions = await queries.game_actions(tx, game_id)
        live = LiveGame(
            id=row.id,
            owner_id=row.player_id,
            owner_name=owner.name if owner else "?",
            game=Game.new(row.code),
            created_ms=row.created_ms,
            daily_day=row.daily_day,
            ranked=row.ranked,
            race_id=row.race_id,
        )
        for action_row in actions:
            outcome = live.game.apply(Action.from_text(action_row.action))
            live.advance(outcome, action_row.at_ms)
        live.result = None if row.result is None else Result(row.result)
        live.finished_ms = row.finished_ms
        live.invalidate()
        return live

    def _remember(self, live: LiveGame) -> None:
        self._cache[live.id] = live
        self._cache.move_to_end(live.id)
        self.elsewhere.hold(topics.game(live.id))  # its pushes start here (with leases: it was taken first)
        if len(self._cache) <= self.cache_size:
            metrics.LIVE_GAMES.set(len(self._cache))
            return
        for game_id, candidate in list(self._cache.items())[: len(self._cache) - self.cache_size]:
            if not candidate.lock.locked() and candidate is not live:
                candidate.evicted = True
                del self._cache[game_id]
                self.elsewhere.release(topics.game(game_id))
        metrics.LIVE_GAMES.set(len(self._cache))

    async def locked(self, game_id: str) -> LiveGame:
        """The game with its lock acquired (caller releases): retries if it was evicted."""
        while True:
            live = await (self.require(game_id) if self.leases is None else self.take_here(game_id))
            await live.lock.acquire()
            if not live.evicted:
                return live
            live.lock.release()

    # -- playing ---------------------------------------------------------------

    async def act(
        self,
        game_id: str,
        player_id: str,
        seq: int,
        raw: dict[str, Any],
        origin: Subscriber | None = None,
        *,
        brief: bool = False,
    ) -> dict[str, Any]:
        """Validate and apply one action; returns the ``result`` message body.

        ``origin`` (the acting connection) gets the result, not an extra update.
        """
        try:
            action = Action.from_json(raw)
        except ActionFormatError as exc:
            raise ProtocolError(ErrorCode.BAD_MESSAGE, str(exc), field="action") from None
        return await self._until_held(lambda: self._act_once(game_id, player_id, seq, action, origin, brief))

    async def _until_held(self, once: Callable[[], Awaitable[T]]) -> T:
        """Run ``once`` again while another instance takes the game from under it (several
        instances only): the game is taken back and read again, so a repeated action is answered
        as a ``duplicate`` or ``stale``. Each retry waits a random pause first, so two instances
        taking turns settle instead of fencing each other."""
        for attempt in range(TAKE_ATTEMPTS):
            if attempt:
                await asyncio.sleep(random.uniform(0, TAKE_BACKOFF_S * 2 ** (attempt - 1)))
            with contextlib.suppress(Moved):
                return await once()
        raise ProtocolError(ErrorCode.UNAVAILABLE, "the game is busy on another instance; try again")

    async def _act_once(
        self, game_id: str, player_id: str, seq: int, action: Action, origin: Subscriber | None, brief: bool
    ) -> dict[str, Any]:
        live = await self.locked(game_id)
        try:
            return await self._act_locked(live, player_id, seq, action, origin, brief)
        finally:
            live.lock.release()

    async def _act_locked(
        self, live: LiveGame, player_id: str, seq: int, action: Action, origin: Subscriber | None, brief: bool
    ) -> dict[str, Any]:
        if live.owner_id != player_id:
            raise ProtocolError(ErrorCode.FORBIDDEN, "only the game's owner can act in it")
        current = live.game.seq
        if seq == current - 1 and action == live.last_action and live.last_outcome is not None:
            return self._result(live, current - 1, action, live.last_outcome, True, brief)
        refuse_after_day(live, self.clock())
        if seq != current:
            raise ProtocolError(
                ErrorCode.STALE, f"expected seq {current}, got {seq}", state=live.state(), seq=current
            )
        if live.finished:
            raise ProtocolError(ErrorCode.GAME_OVER, f"the game is over ({live.result})")
        try:
            outcome = live.game.apply(action)
        except IllegalAction as exc:
            raise ProtocolError(
                ErrorCode.ILLEGAL_ACTION, exc.reason, rule=exc.code, params=dict(exc.params)
            ) from None
        await self._commit(live, outcome, origin)
        return self._result(live, seq, action, live.last_outcome or {}, False, brief)

    async def _commit(self, live: LiveGame, outcome: Outcome, origin: Subscriber | None) -> None:
        """Make the outcome durable, then take it into memory and tell watchers."""
        now = max(self.clock(), live.last_action_ms or 0)
        candidate = live.draft()
        candidate.advance(outcome, now)
        action_row = {
            "game_id": live.id,
            "seq": outcome.game.seq - 1,
            "action": outcome.action.to_text(),
            "at_ms": now,
        }
        extras = self._finish_extras(candidate) if candidate.result == Result.WON else []
        await self._durable(live, Write(action_row, candidate.row_values(), extras, fence=live.fence))
        metrics.ACTIONS.inc()
        live.adopt(candidate)
        self._publish(live, outcome.game.seq - 1, outcome.action, live.last_outcome or {}, origin)
        self._notify(live)
        if live.finished:  # won: nothing more will be pushed for it
            self.hub.close(topics.game(live.id))

    async def _durable(self, live: LiveGame | None, write: Write) -> None:
        """Commit one change of a live game; memory is the caller's to change, after this returns.

        When the database is unavailable nothing was stored and memory stays as
        it is; when the commit's fate is unknown the game is forgotten, so the
        next request reads it again from storage: memory never differs from it.
        """
        try:
            await self.writer.submit(write)
        except StorageFenced:
            metrics.FENCED.inc()
            if live is not None:
                self.forget(live)
            raise Moved from None
        except StorageInDoubt:
            if live is not None:
                self.forget(live)
            raise ProtocolError(
                ErrorCode.UNAVAILABLE,
                "the database did not answer; open the game again to see whether the action was stored",
            ) from None
        except StorageUnavailable:
            raise ProtocolError(
                ErrorCode.UNAVAILABLE, "the database cannot be written now; nothing was changed"
            ) from None

    def forget(self, live: LiveGame) -> None:
        """Drop a game from memory: its next use loads it from storage."""
        live.evicted = True
        if self._cache.get(live.id) is live:
            del self._cache[live.id]
            self.elsewhere.release(topics.game(live.id))
            metrics.LIVE_GAMES.set(len(self._cache))

    def _finish_extras(self, live: LiveGame) -> list[Any]:
        return [lambda conn, hook=hook: hook(live, conn) for hook in self.finish_hooks]

    async def end(
        self, game_id: str, player_id: str | None, result: Result, origin: Subscriber | None = None
    ) -> LiveGame:
        """Resign (by the owner) or expire a game; counted through the finish hooks.

        Subscribers other than ``origin`` (the resigning connection) get a ``finished`` push.
        """
        return await self._until_held(lambda: self._end_once(game_id, player_id, result, origin))

    async def _end_once(
        self, game_id: str, player_id: str | None, result: Result, origin: Subscriber | None
    ) -> LiveGame:
        live = await self.locked(game_id)
        try:
            if player_id is not None and live.owner_id != player_id:
                raise ProtocolError(ErrorCode.FORBIDDEN, "only the game's owner can end it")
            if player_id is not None:  # the sweeper's expiry (no player) is what a day's end does
                refuse_after_day(live, self.clock())
            if live.finished:
                raise ProtocolError(ErrorCode.GAME_OVER, f"the game is over ({live.result})")
            candidate = live.draft()
            candidate.result, candidate.finished_ms = result, self.clock()
            candidate.invalidate()
            extras = self._finish_extras(candidate)
            await self._durable(live, Write(None, candidate.row_values(), extras, fence=live.fence))
            live.adopt(candidate)
        finally:
            live.lock.release()
        self.hub.publish(topics.game(live.id), finished_message(live), skip=origin)
        self._notify(live)
        self.hub.close(topics.game(live.id))  # nothing more will be pushed for it
        return live

    async def mark_lost(self, game_id: str, seq: int) -> bool:
        """Record that no win remains from position ``seq`` (the dead-end solver's proof).

        Goes the one way every change goes (draft, commit, adopt), and only if
        the game is still at that position and open; returns whether it did.
        Subscribers get a ``status`` push shaped like ``finished``.
        """
        live = self._cache.get(game_id)
        if live is None:
            return False
        async with live.lock:
            if live.evicted or live.finished or live.game.seq != seq or live.lost_seq == seq:
                return False
            candidate = live.draft()
            candidate.lost_seq = seq
            candidate.invalidate()
            try:
                await self._durable(live, Write(None, candidate.row_values(), fence=live.fence))
            except Moved:
                return False  # the new owner's own solver looks at it again
            live.adopt(candidate)
        self.hub.publish(
            topics.game(live.id), {"type": "status", "game": live.info(), "state": live.state_json()}
        )
        self._notify(live)
        return True

    def _result(
        self,
        live: LiveGame,
        seq: int,
        action: Action,
        outcome: dict[str, Any],
        duplicate: bool,
        brief: bool = False,
    ) -> dict[str, Any]:
        """The ``result`` message; ``brief`` replaces the board with the information bar only."""
        return {
            "type": "result",
            "game_id": live.id,
            "seq": seq,
            "action": action.to_json(),
            "duplicate": duplicate,
            "outcome": outcome,
            "state": live.brief_state() if brief else live.state_json(),
        }

    def _publish(
        self, live: LiveGame, seq: int, action: Action, outcome: dict[str, Any], origin: Subscriber | None
    ) -> None:
        topic = topics.game(live.id)
        if self.hub.has_subscribers(topic, besides=origin):  # else the state is never serialized
            self.hub.publish(topic, update_message(live, seq, action, outcome), skip=origin)

    def followed_elsewhere(self, topic: str) -> None:
        """Another instance now follows a topic: if it is the topic of a game held here, send
        that instance the game's last update, or its end, again. Its subscriber read the game
        before the subscription held, and an action that fell between the two, the last one of
        the game perhaps, would otherwise reach it only with the next one, or never."""
        game_id = topics.game_of(topic)
        live = self._cache.get(game_id) if game_id is not None else None
        if live is None or live.evicted:
            return
        if live.finished:
            self.elsewhere.resend(topic, finished_message(live))
            self.hub.close(topic)
        elif live.last_action is not None and live.last_outcome is not None:
            last = update_message(live, live.game.seq - 1, live.last_action, live.last_outcome)
            self.elsewhere.resend(topic, last)

    def _notify(self, live: LiveGame) -> None:
        for listener in self.listeners:
            listener(live)
