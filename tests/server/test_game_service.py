"""GameService, the one writer of game state, without sockets, databases or sleeping.

The service is built with a writer the test holds and fails at will (``Writes``), the real
in-memory hub (recording what the service tells it), a database with nothing behind it (reading a
game from storage raises) and a clock the test moves. Each change must go draft -> commit ->
adopt: these tests look at memory, the writes, the pushes and the hooks between those steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import pytest

from engine import Action, Game, IllegalAction, Refusal, Result, Status, parse_code
from engine.codes import make_code
from engine.solver import solve
from engine.verify import IDLE_GAP_CAP_MS
from server.core import topics
from server.core.games import GameService, LiveGame
from server.core.hub import Hub
from server.errors import ProtocolError
from server.rules.days import day_end_ms, day_of
from server.storage.db import Database, Tx
from server.storage.faults import StorageInDoubt, StorageUnavailable
from server.storage.writer import Write
from tests.support import ManualClock
from wire import ErrorCode

CODE = str(make_code("SH", "C4", 0))
WIN: list[Action] = solve(CODE).actions or []  # the solver wins this deal in a few dozen nodes
START_MS = 1_900_000_000_000
OWNER, OTHER = "p_owner", "p_other"
DEADLINE_S = 1.0
TICKS = 200  # how many turns of the event loop a condition may take to come true
TRANSACTION = cast(Tx, object())  # what a finish hook gets for the commit's connection
T = TypeVar("T")


class Unbound(RuntimeError):
    """A unit of work opened where no database is behind the service."""


class NoDatabase(Database):
    """The service's database, with nothing behind it: opening a unit of work raises."""

    def __init__(self) -> None:
        pass  # no engine

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        raise Unbound("no database behind this service")
        yield cast(Tx, None)

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[Tx]:
        raise Unbound("no database behind this service")
        yield cast(Tx, None)


class FakeWriter:
    """The group writer as the service sees it: ``submit`` returns once the write is committed.

    Like the real one, the extras (finish hooks) run inside the commit, and a commit either
    returns or raises the storage error the real writer settles it with. ``hold(game_id)``
    keeps that game's commits waiting on an event the test sets.
    """

    def __init__(self, journal: list[str]) -> None:
        self.journal = journal
        self.committed: list[Write] = []
        self.waiting = 0
        self.failure: StorageUnavailable | None = None
        self._gates: dict[str, asyncio.Event] = {}

    def hold(self, game_id: str) -> asyncio.Event:
        gate = self._gates[game_id] = asyncio.Event()
        return gate

    async def submit(self, write: Write) -> None:
        self.waiting += 1
        try:
            gate = self._gates.get(game_id_of(write))
            if gate is not None:
                await asyncio.wait_for(gate.wait(), DEADLINE_S)
            if self.failure is not None:
                raise self.failure
            for extra in write.extras:
                await extra(TRANSACTION)
            self.committed.append(write)
            self.journal.append(f"commit {label(write)}")
        finally:
            self.waiting -= 1


def game_id_of(write: Write) -> str:
    row = write.game or write.new_game
    assert row is not None
    return str(row["id"])


def label(write: Write) -> str:
    if write.new_game is not None:
        return "new"
    return f"action {write.action['seq']}" if write.action is not None else "row"


class RecordingHub(Hub):
    """The real in-memory hub, and the other instances' side (``Elsewhere``): remembering what the
    service told them about holding and resending."""

    def __init__(self, journal: list[str]) -> None:
        super().__init__()
        self.journal = journal
        self.held: list[str] = []
        self.released: list[str] = []
        self.resent: list[tuple[str, dict[str, Any]]] = []

    def hold(self, topic: str) -> None:
        self.held.append(topic)
        self.journal.append(f"hold {topic}")

    def release(self, topic: str) -> None:
        self.released.append(topic)

    def resend(self, topic: str, message: dict[str, Any]) -> None:
        self.resent.append((topic, message))


@dataclass(eq=False)
class Watcher:
    """A subscriber (a spectator's or the player's connection) that writes its pushes to the journal."""

    name: str
    journal: list[str]
    frames: list[dict[str, Any]] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)

    def push(self, frame: str) -> None:
        message = json.loads(frame)
        self.frames.append(message)
        self.journal.append(f"push {self.name} {message['type']} {message.get('seq')}")

    def follow_own(self, topic: str) -> None:
        raise AssertionError("the service never forwards topics")

    def topic_closed(self, topic: str) -> None:
        self.closed.append(topic)


@dataclass
class FixedLeases:
    """Ownership as several instances see it, answered at once: every game is taken with one token."""

    token: int
    taken: list[str] = field(default_factory=list)

    async def take(self, game_id: str) -> int:
        self.taken.append(game_id)
        return self.token


@dataclass
class Rig:
    service: GameService
    writer: FakeWriter
    hub: RecordingHub
    clock: ManualClock
    journal: list[str]
    finishes: list[tuple[LiveGame, Tx]]
    seen: list[tuple[int, int]]  # (seq, commits so far) each time a listener ran

    async def new_game(self) -> LiveGame:
        return await self.service.create(OWNER, "Ada", parse_code(CODE))

    async def act(self, live: LiveGame, seq: int, action: Action, **options: Any) -> dict[str, Any]:
        return await self.service.act(live.id, OWNER, seq, action.to_json(), **options)

    async def play(self, live: LiveGame, line: list[Action], start: int = 0) -> None:
        for seq, action in enumerate(line, start):
            await self.act(live, seq, action)

    def watch(self, live: LiveGame, name: str) -> Watcher:
        watcher = Watcher(name, self.journal)
        self.hub.subscribe(topics.game(live.id), watcher)
        return watcher


def make_rig(cache_size: int = 100, leases: FixedLeases | None = None) -> Rig:
    journal: list[str] = []
    writer, hub, clock = FakeWriter(journal), RecordingHub(journal), ManualClock(START_MS)
    service = GameService(
        NoDatabase(), writer, hub, clock, cache_size=cache_size, leases=leases, elsewhere=hub
    )
    rig = Rig(service, writer, hub, clock, journal, [], [])

    async def on_finish(live: LiveGame, conn: Tx) -> None:
        rig.finishes.append((live, conn))

    service.finish_hooks.append(on_finish)
    service.listeners.append(lambda live: rig.seen.append((live.game.seq, len(writer.committed))))
    return rig


@pytest.fixture
def rig() -> Rig:
    return make_rig()


async def until(condition: Callable[[], bool]) -> None:
    """Let the other tasks run until ``condition`` holds (a bounded number of loop turns, no sleep)."""
    for _ in range(TICKS):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never came true")


async def settled(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, DEADLINE_S)


def status_of(live: LiveGame) -> Status:
    """The status now (a property read through a call, so that no earlier check narrows it)."""
    return live.status


async def refused(awaitable: Awaitable[Any], code: ErrorCode) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        await settled(awaitable)
    assert caught.value.code is code, caught.value.message
    return caught.value


# -- draft, commit, adopt --------------------------------------------------------------------------


async def test_an_action_is_adopted_and_answered_only_once_its_commit_returns(rig: Rig) -> None:
    live = await rig.new_game()
    spectator = rig.watch(live, "spectator")
    gate = rig.writer.hold(live.id)
    task = asyncio.create_task(rig.act(live, 0, WIN[0]))
    await until(lambda: rig.writer.waiting == 1)
    assert live.game.seq == 0 and live.last_action is None and live.last_action_ms is None
    assert not task.done() and spectator.frames == [] and rig.seen == []

    gate.set()
    result = await settled(task)
    assert live.game.seq == 1 and live.last_action == WIN[0]
    assert result["seq"] == 0 and result["duplicate"] is False and result["state"] == live.state_json()
    write = rig.writer.committed[-1]
    assert write.action == {"game_id": live.id, "seq": 0, "action": WIN[0].to_text(), "at_ms": START_MS}
    assert write.game == live.row_values() and write.extras == []
    assert rig.seen == [(1, 2)]  # the listener saw the adopted game, after its commit (and the create)


async def test_a_commit_the_database_refuses_changes_nothing_and_answers_unavailable(rig: Rig) -> None:
    live = await rig.new_game()
    await rig.act(live, 0, WIN[0])
    spectator = rig.watch(live, "spectator")
    before, rows, seen = live.state_json(), live.row_values(), list(rig.seen)

    rig.writer.failure = StorageUnavailable("the database is locked")
    error = await refused(rig.act(live, 1, WIN[1]), ErrorCode.UNAVAILABLE)
    assert "nothing was changed" in error.message
    assert live.game.seq == 1 and live.state_json() == before and live.row_values() == rows
    assert spectator.frames == [] and rig.seen == seen
    assert not live.evicted and rig.hub.released == []  # still held: memory equals the database

    rig.writer.failure = None
    assert (await rig.act(live, 1, WIN[1]))["seq"] == 1 and live.game.seq == 2


async def test_a_commit_in_doubt_forgets_the_game_so_it_is_read_again_from_storage(rig: Rig) -> None:
    live = await rig.new_game()
    rig.writer.failure = StorageInDoubt("no answer")
    error = await refused(rig.act(live, 0, WIN[0]), ErrorCode.UNAVAILABLE)
    assert "open the game again" in error.message
    assert live.game.seq == 0 and live.evicted and rig.hub.released == [topics.game(live.id)]
    with pytest.raises(Unbound):  # memory no longer answers: storage is asked
        await rig.service.get(live.id)


async def test_a_new_game_is_committed_before_it_is_held(rig: Rig) -> None:
    rig.writer.failure = StorageUnavailable("away")
    await refused(rig.new_game(), ErrorCode.UNAVAILABLE)
    assert rig.hub.held == [] and rig.writer.committed == []

    rig.writer.failure = None
    rig.clock.advance(1234)
    live = await rig.new_game()
    [write] = rig.writer.committed
    assert write.new_game is not None and write.new_game["id"] == live.id
    assert write.new_game["created_ms"] == live.created_ms == START_MS + 1234
    assert write.new_game["code"] == CODE and write.new_game["player_id"] == OWNER
    assert rig.journal == ["commit new", f"hold {topics.game(live.id)}"]
    assert await rig.service.get(live.id) is live


# -- refusals ---------------------------------------------------------------------------------------


async def test_a_stale_seq_is_refused_with_the_current_state_and_stores_nothing(rig: Rig) -> None:
    live = await rig.new_game()
    error = await refused(rig.act(live, 3, WIN[0]), ErrorCode.STALE)
    assert error.extra["seq"] == 0 and error.extra["state"] == live.state()
    await rig.act(live, 0, WIN[0])
    error = await refused(rig.act(live, 0, WIN[1]), ErrorCode.STALE)  # the last seq, another action
    assert error.extra["seq"] == 1
    assert [label(w) for w in rig.writer.committed] == ["new", "action 0"]


async def test_the_repeat_of_the_last_action_is_a_duplicate_answered_from_memory(rig: Rig) -> None:
    live = await rig.new_game()
    spectator = rig.watch(live, "spectator")
    first = await rig.act(live, 0, WIN[0])
    again = await rig.act(live, 0, WIN[0])
    assert again["duplicate"] is True and again["seq"] == 0 and again["outcome"] == first["outcome"]
    assert live.game.seq == 1 and len(rig.writer.committed) == 2 and len(spectator.frames) == 1


async def test_an_illegal_action_is_refused_with_the_engines_rule_and_params(rig: Rig) -> None:
    live = await rig.new_game()
    bad = Action.from_json({"type": "move", "from": "col:1", "to": "found:H", "count": 1})
    with pytest.raises(IllegalAction) as engine_says:
        Game.new(CODE).apply(bad)
    error = await refused(rig.act(live, 0, bad), ErrorCode.ILLEGAL_ACTION)
    assert error.extra == {"rule": engine_says.value.code, "params": dict(engine_says.value.params)}
    assert error.message == engine_says.value.reason and engine_says.value.params
    error = await refused(rig.act(live, 0, Action("undo")), ErrorCode.ILLEGAL_ACTION)
    assert error.extra["rule"] is Refusal.NOTHING_TO_UNDO
    assert live.game.seq == 0 and len(rig.writer.committed) == 1


async def test_a_malformed_action_or_another_players_is_refused_before_the_rules(rig: Rig) -> None:
    live = await rig.new_game()
    error = await refused(rig.service.act(live.id, OWNER, 0, {"type": "fly"}), ErrorCode.BAD_MESSAGE)
    assert error.extra == {"field": "action"}
    await refused(rig.service.act(live.id, OTHER, 0, WIN[0].to_json()), ErrorCode.FORBIDDEN)
    await refused(rig.service.end(live.id, OTHER, Result.RESIGNED), ErrorCode.FORBIDDEN)
    assert live.game.seq == 0 and not live.finished and len(rig.writer.committed) == 1


async def test_a_ranked_daily_is_closed_to_its_player_from_the_millisecond_its_day_ends(rig: Rig) -> None:
    """The day ends at the action, with no sweep in sight: 1 ms before midnight a move counts,
    at midnight and after every change is ``day_over`` and nothing is written; the sweeper's
    expiry still ends the attempt, and an unranked game on the code plays on."""
    day = day_of(START_MS)
    live, practice = await rig.new_game(), await rig.new_game()
    live.daily_day = day  # a ranked attempt on that day's daily, as the service holds one
    practice.daily_day, practice.ranked = day, False
    rig.clock.now = day_end_ms(day) - 1
    await rig.act(live, 0, WIN[0])
    for now in (day_end_ms(day), day_end_ms(day) + 1):
        rig.clock.now = now
        await refused(rig.act(live, 1, WIN[1]), ErrorCode.DAY_OVER)
        await refused(rig.act(live, 1, Action("undo")), ErrorCode.DAY_OVER)
        await refused(rig.act(live, 7, WIN[1]), ErrorCode.DAY_OVER)  # whatever the seq
        await refused(rig.service.end(live.id, OWNER, Result.RESIGNED), ErrorCode.DAY_OVER)
    assert (await rig.act(live, 0, WIN[0]))["duplicate"] is True  # what counted, answered again
    assert live.game.seq == 1 and not live.finished and len(rig.writer.committed) == 3
    await refused(rig.service.act(live.id, OTHER, 1, WIN[1].to_json()), ErrorCode.FORBIDDEN)

    await settled(rig.service.end(live.id, None, Result.EXPIRED))  # the sweeper tidies
    assert live.result is Result.EXPIRED and len(rig.finishes) == 1
    await refused(rig.act(live, 1, WIN[1]), ErrorCode.DAY_OVER)  # the same answer once swept
    await rig.act(practice, 0, WIN[0])
    assert practice.game.seq == 1


# -- undo, resignation, a win, expiry ----------------------------------------------------------------


async def test_undo_goes_back_one_move_and_counts_as_an_action(rig: Rig) -> None:
    live = await rig.new_game()
    await rig.act(live, 0, WIN[0])
    result = await rig.act(live, 1, Action("undo"))
    assert live.game.seq == 2 and live.undos == 1 and live.game.undo_depth == 0
    assert live.game.state == Game.new(CODE).state
    assert result["action"] == {"type": "undo"} and result["outcome"]["is_move"] is True
    write = rig.writer.committed[-1]
    assert write.action is not None and write.action["action"] == "undo" and write.action["seq"] == 1
    assert write.game is not None and write.game["undos"] == 1 and write.game["seq"] == 2


async def test_resigning_commits_then_pushes_finished_and_runs_the_finish_hooks_once(rig: Rig) -> None:
    live = await rig.new_game()
    await rig.act(live, 0, WIN[0])
    spectator, player = rig.watch(live, "spectator"), rig.watch(live, "player")
    rig.clock.advance(9_000)
    gate = rig.writer.hold(live.id)
    task = asyncio.create_task(rig.service.end(live.id, OWNER, Result.RESIGNED, origin=player))
    await until(lambda: rig.writer.waiting == 1)
    assert live.result is None and not live.finished and spectator.frames == []
    assert len(rig.finishes) == 0  # the hooks run inside the commit, and it has not run yet

    gate.set()
    assert await settled(task) is live
    assert live.result is Result.RESIGNED and live.status is Status.RESIGNED
    assert live.finished_ms == START_MS + 9_000 and not live.clock_running
    [(finished, conn)] = rig.finishes
    assert conn is TRANSACTION and finished.result is Result.RESIGNED and finished.id == live.id
    assert rig.writer.committed[-1].game == live.row_values() and rig.writer.committed[-1].action is None
    assert [f["type"] for f in spectator.frames] == ["finished"] and player.frames == []
    assert spectator.frames[0]["game"]["result"] == "resigned"
    assert spectator.closed == player.closed == [topics.game(live.id)]
    assert rig.hub.subscriber_count(topics.game(live.id)) == 0

    await refused(rig.act(live, 1, WIN[1]), ErrorCode.GAME_OVER)
    await refused(rig.service.end(live.id, OWNER, Result.RESIGNED), ErrorCode.GAME_OVER)
    assert len(rig.finishes) == 1 and rig.seen[-1] == (1, 3)


async def test_a_win_runs_the_finish_hooks_once_in_its_last_commit_and_closes_the_topic(rig: Rig) -> None:
    live = await rig.new_game()
    spectator = rig.watch(live, "spectator")
    await rig.play(live, WIN)
    assert live.result is Result.WON and live.finished and live.finished_ms == START_MS
    assert [len(w.extras) for w in rig.writer.committed] == [0] * len(WIN) + [1]
    [(finished, conn)] = rig.finishes
    assert finished.result is Result.WON and finished.game.seq == len(WIN) and conn is TRANSACTION
    assert spectator.frames[-1]["seq"] == len(WIN) - 1 and spectator.closed == [topics.game(live.id)]
    assert rig.journal[-2:] == [f"commit action {len(WIN) - 1}", f"push spectator update {len(WIN) - 1}"]

    await refused(rig.act(live, len(WIN), WIN[0]), ErrorCode.GAME_OVER)
    await refused(rig.service.end(live.id, None, Result.EXPIRED), ErrorCode.GAME_OVER)
    assert len(rig.finishes) == 1 and live.result is Result.WON


async def test_think_time_follows_the_injected_clock_capped_and_never_backwards(rig: Rig) -> None:
    live = await rig.new_game()
    rig.clock.advance(3_000)
    await rig.act(live, 0, WIN[0])  # the first action starts the game's clock
    assert live.elapsed_ms == 0 and live.last_action_ms == START_MS + 3_000 and live.clock_running
    rig.clock.advance(5_000)
    await rig.act(live, 1, WIN[1])
    rig.clock.advance(10 * 60_000)  # an idle stretch counts up to the cap only
    await rig.act(live, 2, WIN[2])
    assert live.elapsed_ms == 5_000 + IDLE_GAP_CAP_MS and list(live.gaps) == [5_000, 600_000]
    rig.clock.advance(-2_000)  # a clock stepped back never makes a negative gap
    await rig.act(live, 3, WIN[3])
    assert live.elapsed_ms == 5_000 + IDLE_GAP_CAP_MS and list(live.gaps) == [5_000, 600_000, 0]
    at = [w.action["at_ms"] for w in rig.writer.committed if w.action is not None]
    assert at == [START_MS + 3_000, START_MS + 8_000, START_MS + 608_000, START_MS + 608_000]


async def test_expiry_stamps_the_clocks_time_and_counts_through_the_hooks(rig: Rig) -> None:
    live = await rig.new_game()
    await rig.act(live, 0, WIN[0])
    spectator = rig.watch(live, "spectator")
    rig.clock.advance(86_400_000)
    await settled(rig.service.end(live.id, None, Result.EXPIRED))
    assert live.status is Status.EXPIRED and live.finished_ms == START_MS + 86_400_000
    assert rig.writer.committed[-1].game is not None
    assert rig.writer.committed[-1].game["finished_ms"] == START_MS + 86_400_000
    assert len(rig.finishes) == 1 and [f["type"] for f in spectator.frames] == ["finished"]


# -- pushes and serialization ---------------------------------------------------------------------


async def test_pushes_follow_their_commits_in_order_with_their_seq_and_skip_the_actor(rig: Rig) -> None:
    live = await rig.new_game()
    spectator, player = rig.watch(live, "spectator"), rig.watch(live, "player")
    del rig.journal[:]
    for seq in range(3):
        await rig.service.act(live.id, OWNER, seq, WIN[seq].to_json(), origin=player)
    assert rig.journal == [
        entry for seq in range(3) for entry in (f"commit action {seq}", f"push spectator update {seq}")
    ]
    assert player.frames == []
    last = spectator.frames[-1]
    assert last["game_id"] == live.id and last["action"] == json.loads(json.dumps(WIN[2].to_json()))
    assert last["state"] == json.loads(live.state_json()) and last["state"]["seq"] == 3


async def test_a_brief_result_carries_the_information_bar_and_nothing_is_encoded_unwatched(
    rig: Rig,
) -> None:
    live = await rig.new_game()
    result = await rig.act(live, 0, WIN[0], brief=True)
    assert result["state"] == live.brief_state() and result["state"]["seq"] == 1
    assert live.cached_state is None  # no watcher: the board was never serialized


async def test_two_actions_on_one_game_are_serialized_across_the_commit(rig: Rig) -> None:
    live = await rig.new_game()
    gate = rig.writer.hold(live.id)
    first = asyncio.create_task(rig.act(live, 0, WIN[0]))
    second = asyncio.create_task(rig.act(live, 1, WIN[1]))  # sent before the first was answered
    await until(lambda: rig.writer.waiting == 1)
    for _ in range(20):  # however long the first commit takes, the second does not reach the writer
        await asyncio.sleep(0)
    assert rig.writer.waiting == 1 and not second.done()
    gate.set()
    assert (await settled(first))["seq"] == 0 and (await settled(second))["seq"] == 1
    actions = [w.action for w in rig.writer.committed if w.action is not None]
    assert [a["seq"] for a in actions] == [0, 1] and live.game.seq == 2


async def test_the_same_seq_twice_at_once_is_one_commit_then_a_duplicate_or_stale(rig: Rig) -> None:
    live = await rig.new_game()
    gate = rig.writer.hold(live.id)
    tasks = [asyncio.create_task(rig.act(live, 0, action)) for action in (WIN[0], WIN[0], WIN[1])]
    await until(lambda: rig.writer.waiting == 1)
    gate.set()
    answers = await settled(asyncio.gather(*tasks, return_exceptions=True))
    assert [a["duplicate"] for a in answers[:2] if isinstance(a, dict)] == [False, True]
    assert isinstance(answers[2], ProtocolError) and answers[2].code is ErrorCode.STALE
    assert [label(w) for w in rig.writer.committed] == ["new", "action 0"]


async def test_a_held_commit_of_one_game_does_not_hold_up_another(rig: Rig) -> None:
    slow, fast = await rig.new_game(), await rig.new_game()
    gate = rig.writer.hold(slow.id)
    held = asyncio.create_task(rig.act(slow, 0, WIN[0]))
    await until(lambda: rig.writer.waiting == 1)
    assert (await settled(rig.act(fast, 0, WIN[0])))["seq"] == 0 and not held.done()
    gate.set()
    await settled(held)
    assert slow.game.seq == fast.game.seq == 1


# -- the dead-end proof, other instances, memory ------------------------------------------------------


async def test_a_dead_end_is_recorded_through_a_commit_only_at_its_position(rig: Rig) -> None:
    live = await rig.new_game()
    await rig.act(live, 0, WIN[0])
    spectator = rig.watch(live, "spectator")
    assert await rig.service.mark_lost(live.id, 0) is False  # the game moved on meanwhile
    rig.writer.failure = StorageUnavailable("away")
    await refused(rig.service.mark_lost(live.id, 1), ErrorCode.UNAVAILABLE)
    assert live.lost_seq is None and status_of(live) is Status.PLAYING and spectator.frames == []

    rig.writer.failure = None
    assert await rig.service.mark_lost(live.id, 1) is True
    assert status_of(live) is Status.LOST and rig.writer.committed[-1].game == live.row_values()
    assert [(f["type"], f["state"]["status"]) for f in spectator.frames] == [("status", "lost")]
    assert await rig.service.mark_lost(live.id, 1) is False and len(spectator.frames) == 1
    await rig.act(live, 1, WIN[1])
    assert status_of(live) is Status.PLAYING  # the proof was about one position


async def test_an_instance_that_follows_a_game_later_is_sent_its_last_update_or_end(rig: Rig) -> None:
    live = await rig.new_game()
    topic = topics.game(live.id)
    rig.service.followed_elsewhere(topic)
    rig.service.followed_elsewhere(topics.leaderboard(CODE))
    assert rig.hub.resent == []  # nothing played yet, and not a game's topic
    await rig.play(live, WIN[:2])
    rig.service.followed_elsewhere(topic)
    [(resent_topic, update)] = rig.hub.resent
    assert resent_topic == topic and update["type"] == "update" and update["seq"] == 1
    await rig.service.end(live.id, OWNER, Result.RESIGNED)
    rig.service.followed_elsewhere(topic)
    assert rig.hub.resent[-1][1]["type"] == "finished"


async def test_with_leases_every_write_carries_the_token_the_game_was_taken_with() -> None:
    leases = FixedLeases(token=41)
    rig = make_rig(leases=leases)
    live = await rig.new_game()
    await rig.act(live, 0, WIN[0])
    await rig.service.end(live.id, OWNER, Result.RESIGNED)
    assert leases.taken == [live.id] and live.fence == 41
    assert [w.fence for w in rig.writer.committed] == [None, 41, 41]  # a new game is not fenced yet


async def test_memory_keeps_the_newest_games_but_never_drops_one_in_use() -> None:
    rig = make_rig(cache_size=1)
    busy = await rig.new_game()
    async with busy.lock:
        newer = await rig.new_game()
    assert not busy.evicted and rig.hub.released == []
    newest = await rig.new_game()
    assert busy.evicted and newer.evicted and not newest.evicted
    assert rig.hub.released == [topics.game(busy.id), topics.game(newer.id)]
