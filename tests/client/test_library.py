"""The client library against a real server, on both databases."""

from __future__ import annotations

import asyncio

import pytest

from client import (
    AuthError,
    BadCodeError,
    ConflictError,
    ForbiddenError,
    GameOverError,
    IllegalActionError,
    NotFoundError,
    SolitaireClient,
    StaleError,
    deal,
    verify_game,
)
from client.deals import matches_state
from engine import Action, Game
from server.config import Settings
from tests.client.proxy import proxy_to
from tests.contract import SENT
from tests.server.competing import winnable_hh
from tests.support import RECEIVED, running_server

PAIR_NOW = "HH1-N-AAAAAC5"  # heart:25 pairs with the waste at once
TAP_NOW = "SH1-C4-AAAAAAB"  # col:4 taps onto its foundation at once


def make(server: str, token: str | None = None, **options: object) -> SolitaireClient:
    """A client whose received messages join the session's contract check."""
    return SolitaireClient(server, token, trace=RECEIVED.append, trace_sent=SENT.append, **options)  # type: ignore[arg-type]


async def player(server: str, name: str | None = None) -> str:
    return (await SolitaireClient.create_player(server, name)).token


async def test_heart_to_heart_through_the_helpers(server: str) -> None:
    async with make(server, await player(server, "Ada")) as client:
        assert client.player is not None and client.player.name == "Ada"
        assert client.hello["protocol"] == 1
        game = await client.new_game(PAIR_NOW)
        assert game.is_owner and game.state.seq == 0 and matches_state(PAIR_NOW, game.state.board)
        selected = await game.touch("heart:25")
        assert not selected.outcome.is_move and game.state.seq == 1
        await game.touch("heart:25")  # deselect: a second, different action
        result = await game.pair("heart:25", "waste")
        assert result.outcome.points == 10 and game.state.score == 10 and game.state.seq == 3
        undone = await game.undo()
        assert undone.outcome.events[0]["kind"] == "undo" and game.state.score == 0
        drawn = await game.draw()
        assert drawn.outcome.events[0]["kind"] == "draw" and game.state.moves == 3
        with pytest.raises(IllegalActionError) as refused:
            await game.pair("heart:25", "heart:24")
        assert refused.value.rule == "not_free" and refused.value.message == "That card is covered"
        assert game.state.seq == 5  # a refusal changes nothing


async def test_reselect_carries_the_reason(server: str) -> None:
    async with make(server, await player(server)) as client:
        game = await client.new_game("HH1-N-AAAAAAM")  # heart:25 is 8H, the waste 7H
        await game.touch("heart:25")
        result = await game.touch("waste")
        assert result.outcome.reason == "Must be the same rank" and game.state.board["selection"] == "waste"
        with pytest.raises(IllegalActionError) as refused:
            await game.pair("heart:25", "waste")
        assert refused.value.rule == "rank_mismatch"


async def test_seahaven_through_the_helpers(server: str) -> None:
    async with make(server, await player(server)) as client:
        game = await client.new_game(TAP_NOW)
        assert game.state.hints["tappable"] == ["col:4"]
        tapped = await game.tap("col:4")
        assert tapped.outcome.events[0]["to"].startswith("found:") and game.state.score == 10
        await game.act("undo")  # the text form works too
        moved = await game.move("col:4", "found")
        assert moved.outcome.points == 10
        await game.act({"type": "undo"})
        sent = await game.double_tap("col:4")
        assert sent.outcome.events[0]["to"].startswith("found:")
        with pytest.raises(IllegalActionError) as refused:
            await game.move("col:1", "col:1")
        assert refused.value.rule == "same_place"
        hint = await client.hint(game.id)  # the solver's next move from here, if a win is left
        assert hint["type"] == "hint" and hint["seq"] == game.state.seq
        assert (hint["action"] is not None) == (hint["result"] == "won")


async def test_random_deals_and_bad_codes(server: str) -> None:
    async with make(server, await player(server)) as client:
        game = await client.new_game(game="SH", variant="C2")
        assert (
            game.code is not None and game.code.startswith("SH1-C2-") and game.state.board["cell_count"] == 2
        )
        with pytest.raises(BadCodeError) as bad:
            await client.new_game("SH1-C9-AAAAAAA")
        assert bad.value.part == "variant"
        with pytest.raises(NotFoundError):
            await client.open_game("g_nothere")


async def test_stale_resyncs_the_handle(server: str) -> None:
    async with make(server, await player(server)) as a, make(server, a.token) as b:
        game = await a.new_game(PAIR_NOW)
        other = await b.open_game(game.id)  # the same player on a second connection
        await other.draw()
        with pytest.raises(StaleError) as stale:
            await a.act(game.id, 0, "touch heart:25")  # seq 0 is taken by the draw
        assert stale.value.state is not None and stale.value.state.seq == 1
        await game.wait_change(0, timeout=5)  # the update pushed to the first connection
        assert game.state.seq == 1 and game.updates[-1].action.kind == "draw"
        await game.draw()
        assert game.state.moves == 2


async def test_duplicate_answers_are_idempotent(server: str) -> None:
    async with make(server, await player(server)) as client:
        game = await client.new_game(PAIR_NOW)
        first = await client.act(game.id, 0, "draw")
        again = await client.act(game.id, 0, "draw")
        assert again.duplicate and not first.duplicate and again.state.moves == 1


async def test_spectators_and_anonymous_connections(server: str) -> None:
    async with make(server, await player(server)) as owner, make(server) as anon:
        assert anon.player is None
        with pytest.raises(ForbiddenError):
            await anon.new_game(PAIR_NOW)
        game = await owner.new_game(PAIR_NOW)
        watched = await anon.watch(game.id)
        assert watched.role == "spectator" and watched.state == game.state
        with pytest.raises(ForbiddenError):
            await watched.draw()
        version = watched.version
        await game.pair("heart:25", "waste")
        await watched.wait_change(version, timeout=5)
        assert watched.state == game.state and watched.updates[-1].outcome.points == 10
        last = watched.updates[-1]
        repeat = {  # the same update pushed again (a watch's instance is sent the last one again)
            "type": "update",
            "game_id": last.game_id,
            "seq": last.seq,
            "action": last.action.to_json(),
            "outcome": {"points": 10, "is_move": last.outcome.is_move, "events": last.outcome.events},
            "state": last.state.raw,
        }
        version, count = watched.version, len(watched.updates)
        watched.take_update(repeat)
        assert watched.version == version and len(watched.updates) == count  # dropped
        assert (await anon.open_game(game.id)).role == "spectator"
        await anon.unwatch(game.id)
        assert await anon.ping() >= 0


async def test_resign_verify_and_http(server: str) -> None:
    async with make(server, await player(server, "Vera")) as client:
        game = await client.new_game(TAP_NOW)
        with pytest.raises(ConflictError):
            await verify_game(client.http, game.id)  # not finished: the log is not public yet
        await game.tap("col:4")
        await game.undo()
        await game.resign()
        assert game.finished and game.info.result == "resigned"
        await game.resign()  # repeating it is harmless
        with pytest.raises(GameOverError):
            await game.draw()
        verdict = await verify_game(client.http, game.id)
        assert verdict.ok and verdict.replayed is not None and verdict.replayed["moves"] == 2
        info, state = await client.http.game(game.id)
        assert info.result == "resigned" and state.fingerprint == game.state.fingerprint
        answer = await client.solution(game.id)  # allowed once the game is over
        assert answer == {"type": "solution", **await client.http.solution(game.id), "id": answer["id"]}
        if answer["winnable"]:
            replayed = Game.replay(answer["code"], [Action.from_json(a) for a in answer["actions"]])
            assert replayed.status == "won"
        renamed = await client.http.rename("Vera2")
        assert (await client.http.player(renamed.id))["name"] == "Vera2"
        assert (await client.http.health())["status"] == "ok"


async def test_bad_token_is_an_auth_error(server: str) -> None:
    with pytest.raises(AuthError) as refused:
        await make(server, "st_not_a_token").connect()
    assert refused.value.code == "bad_token"
    with pytest.raises(AuthError) as old:
        await make(server, None, protocol=99).connect()
    assert old.value.code == "unsupported_version"


async def test_a_lost_reply_is_resent_and_answered_as_duplicate(server: str) -> None:
    async with proxy_to(server) as proxy, make(proxy.url, await player(server)) as client:
        game = await client.new_game(PAIR_NOW)
        proxy.blackhole = True  # the server gets the act; its result never comes back
        acting = asyncio.ensure_future(game.pair("heart:25", "waste"))
        await asyncio.sleep(0.5)
        proxy.blackhole = False
        proxy.cut()
        result = await asyncio.wait_for(acting, 20)
        assert result.duplicate and client.connects == 2
        assert game.state.score == 10 and game.state.moves == 1 and game.state.seq == 1


async def test_a_cut_connection_resumes_watching(server: str) -> None:
    token = await player(server)
    async with make(server, token) as owner, proxy_to(server) as proxy, make(proxy.url) as watcher:
        game = await owner.new_game(PAIR_NOW)
        watched = await watcher.watch(game.id)
        proxy.cut()
        await asyncio.sleep(0.2)
        await watcher.ping()  # any request reconnects and re-subscribes
        version = watched.version
        await game.draw()
        await watched.wait_change(version, timeout=5)
        assert watched.state.moves == 1 and watcher.connects == 2


async def test_a_cut_connection_follows_its_ghost_race_again(server: str) -> None:
    code, line = winnable_hh()
    token = await player(server)
    async with make(server, token) as owner:
        recorded = await owner.new_game(code)
        for action in line:
            await recorded.act(action)
    async with proxy_to(server) as proxy, make(proxy.url, await player(server)) as racer:
        ghost = await racer.ghost_race(recorded.id)
        proxy.cut()
        await asyncio.sleep(0.2)
        await ghost.game.draw()  # reconnects, follows the ghost again (ghost_watch), then acts
        while not ghost.ghost["finished"]:
            await ghost.wait_change(ghost.version, timeout=10)
        assert ghost.ghost["status"] == "won" and racer.connects == 2
        await ghost.game.resign()
        assert await ghost.wait_finished(timeout=10) == "ghost"


def test_deals_match_the_spec_vectors() -> None:
    hh = deal("hh1-n-aaaaaam").text.split()
    assert hh[:3] == ["HH1-N-AAAAAAM", "JH", "QH"] and hh[-3:] == ["5H", "waste", "7H"]
    sh = deal("SH1-C1-AAAAAJ2")
    assert sh.layout["columns"][1] == ["AH", "9S", "AC", "8S", "9D", "4H"] and sh.layout["cells"] == ["3C"]
    assert len(sh.deck) == 52 and sorted(deal("SH1-C4-AAAAAJ2").deck) == sorted(sh.deck)


async def test_a_server_restart_is_survived(database_url: str) -> None:
    """bye and close 1001, then the same game on a new server process over the same database."""
    settings = Settings(database_url=database_url, secret="test-secret")
    with running_server(settings) as first:
        async with proxy_to(first) as proxy:
            client = make(proxy.url, await player(first))
            game = await client.new_game(PAIR_NOW)
            await game.touch("heart:25")
            with running_server(settings) as second:
                proxy.target_port = int(second.rsplit(":", 1)[1])
                proxy.cut()  # as the first server goes away
                result = await game.touch("waste")
            assert result.outcome.points == 10 and game.state.seq == 2 and client.connects == 2
            await client.close()
