"""The WebSocket session core without sockets or sleeping: text in, frames and requests out."""

from __future__ import annotations

import json
from typing import Any

import pytest

from server.config import Limits
from server.core.hub import Encoded, encode
from server.edge import session as session_module
from server.edge.protocol import parse_json
from server.edge.session import MAX_OWN_GAMES, Authenticate, Call, Session
from server.errors import ProtocolError
from server.vocabulary import ConnectionState
from tests.support import ManualClock
from wire import CloseCode, ErrorCode

LIMITS = Limits(rate_per_s=10, burst=5, auth_timeout_s=10, max_watches=3)


def frames(session: Session) -> list[dict[str, Any]]:
    return [json.loads(frame) for frame in session.data_to_send()]


def opened(clock: ManualClock | None = None) -> Session:
    session = Session(LIMITS, clock or ManualClock(0))
    hello = frames(session)
    assert [m["type"] for m in hello] == ["hello"] and hello[0]["limits"]["burst"] == 5
    return session


def authenticated(clock: ManualClock | None = None) -> Session:
    session = opened(clock)
    request = session.receive('{"type":"auth","token":"t","id":1}')
    assert request == Authenticate("t", 1, 1)
    session.authenticated(request, ("p_1", "Ada"))
    assert frames(session) == [
        {"type": "welcome", "protocol": 1, "player": {"id": "p_1", "name": "Ada"}, "id": 1}
    ]
    assert session.state is ConnectionState.AUTHENTICATED
    return session


def test_the_first_message_must_be_auth_and_its_refusal_carries_the_id() -> None:
    session = opened()
    assert session.receive('{"type":"ping","id":"a"}') is None
    [error] = frames(session)
    assert error["code"] == ErrorCode.NOT_AUTHENTICATED and error["id"] == "a"
    assert session.state is ConnectionState.CLOSING and session.close_code is CloseCode.AUTH
    assert session.receive('{"type":"auth"}') is None  # nothing more is read once closing


def test_a_null_token_is_refused_with_the_request_id() -> None:
    session = opened()
    assert session.receive('{"type":"auth","token":null,"id":7}') is None
    [error] = frames(session)
    assert error["code"] == "not_authenticated" and error["id"] == 7 and "token" in error["message"]


@pytest.mark.parametrize("text", ["not json", "[1]", "\x00binary", "[" * 5000, "[" * 1200 + "]" * 1200])
def test_garbage_before_auth_closes_with_a_clear_error(text: str) -> None:
    session = opened()
    assert session.receive(text) is None
    [error] = frames(session)
    assert error["code"] == "bad_json" and "auth" in error["message"]
    assert session.close_code is CloseCode.AUTH


@pytest.mark.parametrize("text", ["[" * 5000, "[" * 1200 + "]" * 1200, '{"a":' * 1200 + "1" + "}" * 1200])
def test_json_nested_past_the_parser_is_bad_json_after_auth(text: str) -> None:
    session = authenticated()
    assert session.receive(text) is None
    assert frames(session) == [
        {"type": "error", "code": "bad_json", "message": "the frame is not valid JSON"}
    ]
    assert session.reading


def test_an_unsupported_version_closes_with_4400() -> None:
    session = opened()
    assert session.receive('{"type":"auth","protocol":9,"id":2}') is None
    [error] = frames(session)
    assert error["code"] == "unsupported_version" and error["id"] == 2
    assert session.close_code is CloseCode.BAD_VERSION


def test_a_bad_token_closes_with_4401() -> None:
    session = opened()
    request = session.receive('{"type":"auth","token":"nope"}')
    assert isinstance(request, Authenticate)
    session.bad_token(request)
    assert frames(session)[0]["code"] == "bad_token" and session.close_code is CloseCode.AUTH


def test_anonymous_sessions_watch_but_do_not_play() -> None:
    session = opened()
    request = session.receive('{"type":"auth"}')
    assert request == Authenticate(None, 1, None)
    session.authenticated(request, None)
    assert frames(session)[0]["player"] is None
    with pytest.raises(ProtocolError) as refused:
        session.require_player()
    assert refused.value.code is ErrorCode.FORBIDDEN


def test_the_auth_deadline_follows_the_clock() -> None:
    clock = ManualClock(0)
    session = opened(clock)
    clock.advance(9_999)
    session.check_time()
    assert session.state is ConnectionState.CONNECTED
    clock.advance(1)
    session.check_time()
    assert session.close_code is CloseCode.AUTH_TIMEOUT
    late = opened(clock)
    clock.advance(10_000)  # auth arriving after the deadline is too late as well
    assert late.receive('{"type":"auth"}') is None and late.close_code is CloseCode.AUTH_TIMEOUT


def test_requests_come_out_validated() -> None:
    session = authenticated()
    call = session.receive('{"type":"act","id":"x","game_id":"g_1","seq":0,"action":{"type":"draw"}}')
    assert call == Call("act", {"game_id": "g_1", "seq": 0, "action": {"type": "draw"}}, "x")
    session.answer("x", {"type": "result"})
    assert frames(session) == [{"type": "result", "id": "x"}]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("{", "bad_json"),
        ("[" * 5000, "bad_json"),
        ('{"type":"nope"}', "unknown_type"),
        ('{"type":"act","game_id":"g"}', "bad_message"),
        ('{"type":"auth"}', "bad_message"),
    ],
)
def test_bad_requests_are_refused_and_the_session_goes_on(text: str, code: str) -> None:
    session = authenticated()
    assert session.receive(text) is None
    assert frames(session)[0]["code"] == code
    assert session.state is ConnectionState.AUTHENTICATED


def test_the_rate_limit_refills_with_the_clock() -> None:
    clock = ManualClock(0)
    session = authenticated(clock)
    calls = [session.receive(f'{{"type":"ping","id":{i}}}') for i in range(6)]
    assert all(isinstance(c, Call) for c in calls[:5]) and calls[5] is None
    assert frames(session) == [
        {"type": "error", "code": "rate_limited", "message": "too many messages; slow down", "id": 5}
    ]
    clock.advance(100)  # 10 per second: one more token
    assert isinstance(session.receive('{"type":"ping"}'), Call)
    assert session.receive('{"type":"ping"}') is None


def test_an_id_less_flood_is_answered_at_most_ten_times_a_second() -> None:
    clock = ManualClock(0)
    session = authenticated(clock)
    for _ in range(1000):
        session.receive('{"type":"ping"}')
    refusals = [m for m in frames(session) if m.get("code") == "rate_limited"]
    assert len(refusals) == 1
    clock.advance(100)
    for _ in range(1000):
        session.receive("garbage")  # garbage is counted against the budget too
    assert len([m for m in frames(session) if m.get("code") == "rate_limited"]) == 1


@pytest.mark.parametrize(
    "text", ['{"type":"ping"}', "{", "\x00binary", '{"type":"nope"}', '{"type":"act"}', '{"type":"auth"}']
)
def test_every_frame_costs_its_sender_a_token(text: str) -> None:
    """Pings and malformed frames alike: after the burst, even a valid request is refused."""
    session = authenticated()
    for _ in range(LIMITS.burst):
        session.receive(text)
    frames(session)
    assert session.receive('{"type":"ping","id":"x"}') is None
    assert frames(session) == [
        {"type": "error", "code": "rate_limited", "message": "too many messages; slow down", "id": "x"}
    ]


def test_a_refused_frame_is_not_parsed_and_reading_pauses_till_the_budget_refills(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = ManualClock(0)
    session = authenticated(clock)
    for _ in range(LIMITS.burst):
        assert isinstance(session.receive('{"type":"ping"}'), Call)
    assert session.paused_until_ms is None  # within the budget: read on
    parsed: list[str | bytes] = []

    def counted_parse(text: str | bytes) -> Any:
        parsed.append(text)
        return parse_json(text)

    monkeypatch.setattr(session_module, "parse_json", counted_parse)  # what the session parses with
    for _ in range(100):
        assert session.receive('{"type":"ping"}') is None
    assert parsed == []  # without an id, a refused frame is never parsed
    assert session.receive('{"type":"ping","id":7}') is None and len(parsed) == 1  # once, for its id
    assert session.paused_until_ms == 100  # 10 per second: the next token in 100 ms
    clock.advance(100)
    assert isinstance(session.receive('{"type":"ping"}'), Call)
    assert session.paused_until_ms is None


def test_too_many_connections_is_said_then_closed_to_try_again_later() -> None:
    session = authenticated()
    session.refuse_connection(ProtocolError(ErrorCode.RATE_LIMITED, "too many", retry_after_s=1), rid=3)
    assert frames(session) == [
        {"type": "error", "code": "rate_limited", "message": "too many", "retry_after_s": 1, "id": 3}
    ]
    assert session.close_code is CloseCode.TRY_AGAIN_LATER and not session.reading


def test_room_to_follow_is_checked_before_anything_is_stored() -> None:
    session = authenticated()
    for i in range(LIMITS.max_watches):
        session.check_follow()
        session.follow(f"race:r{i}")
    session.check_follow("race:r0")  # already followed: no new room needed
    with pytest.raises(ProtocolError) as refused:
        session.check_follow()
    assert refused.value.code is ErrorCode.RATE_LIMITED


def test_watches_are_limited_but_own_games_are_not() -> None:
    session = authenticated()
    assert [session.follow(f"game:w{i}") for i in range(3)] == [True, True, True]
    assert session.follow("game:w0") is False  # already followed
    with pytest.raises(ProtocolError) as refused:
        session.follow("game:w3")
    assert refused.value.code is ErrorCode.RATE_LIMITED
    dropped = [t for i in range(MAX_OWN_GAMES + 2) for t in session.follow_own(f"game:own{i}")]
    assert dropped == ["game:own0", "game:own1"]  # only the newest own games are followed
    assert len(session.topics) == 3 + MAX_OWN_GAMES
    assert session.unfollow("game:w0") and session.follow("game:w3")


def test_the_state_only_moves_forward() -> None:
    session = authenticated()
    session.close(CloseCode.GOING_AWAY, "bye")
    session.close(CloseCode.AUTH, "later decisions do not override the first")
    assert session.close_code is CloseCode.GOING_AWAY and session.state is ConnectionState.CLOSING
    assert session.receive('{"type":"ping","id":1}') is None and frames(session) == []
    session.closed()
    # mypy keeps the CLOSING narrowing from above across the call that changed it
    assert session.state is ConnectionState.CLOSED  # type: ignore[comparison-overlap]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"type":"ping","id":"\\ud800"}', "id"),
        ('{"type":"ping","id":"ok","\\udc00x":1}', "\\udc00x"),
        ('{"type":"open_game","id":"ok","game_id":"\\ud800"}', "game_id"),
        ('{"type":"race_watch","id":"ok","race_id":"r_\\udbff"}', "race_id"),
        ('{"type":"new_game","id":"ok","code":"HH1-N-\\ud800AAAAAA"}', "code"),
        ('{"type":"subscribe_leaderboard","id":"ok","code":"\\udfff"}', "code"),
        (
            '{"type":"act","id":"ok","game_id":"g_1","seq":0,"action":{"type":"touch","at":["\\ud800"]}}',
            "action",
        ),
    ],
)
def test_lone_surrogates_are_refused_naming_the_field(text: str, field: str) -> None:
    """``"\\ud800"`` is valid JSON but no character: echoed, it made the reply unsendable."""
    session = authenticated()
    assert session.receive(text) is None
    [frame] = session.data_to_send()
    frame.encode("utf-8")  # sendable
    error = json.loads(frame)
    assert error["code"] == "bad_message" and error["field"] == field, error
    assert error.get("id") == (None if field == "id" else "ok")
    assert session.reading


@pytest.mark.parametrize(
    "text", ['{"type":"auth","id":"\\ud800"}', '{"type":"auth","id":1,"token":"st_\\ud800"}']
)
def test_lone_surrogates_before_auth_are_refused_and_closed(text: str) -> None:
    session = opened()
    assert session.receive(text) is None
    [frame] = session.data_to_send()
    error = json.loads(frame.encode("utf-8"))
    assert error["code"] == "not_authenticated", error
    assert "surrogate" in error["message"] or "id must be" in error["message"], error
    assert session.close_code is CloseCode.AUTH


def test_the_encoder_never_makes_an_unsendable_frame() -> None:
    """Were a lone surrogate to reach a reply anyway, the frame is escaped, never unencodable."""
    frame = encode({"type": "error", "message": "x\ud800", "name": "Zoë"})
    frame.encode("utf-8")
    assert json.loads(frame) == {"type": "error", "message": "x\ud800", "name": "Zoë"}
    assert encode({"type": "pong", "name": "Zoë"}) == '{"type":"pong","name":"Zoë"}'  # text stays text


@pytest.mark.parametrize("rest", [{}, {"name": "Zoë"}, {"type": "update", "id": 2**70}, {"id": "\ud800"}])
def test_an_encoded_state_is_spliced_whichever_encoder_writes_the_frame(rest: dict[str, Any]) -> None:
    """A state encoded once goes into frames as it is, also when the standard library writes
    the frame (an integer past 64 bits, a lone surrogate)."""
    state = Encoded(encode({"board": ["A♠", 1], "status": "playing"}))
    frame = encode({**rest, "state": state})
    frame.encode("utf-8")
    assert json.loads(frame) == {**rest, "state": {"board": ["A♠", 1], "status": "playing"}}
    if rest == {"name": "Zoë"}:  # the usual frame keeps its text as text, the state's too
        assert frame == '{"name":"Zoë","state":{"board":["A♠",1],"status":"playing"}}'
