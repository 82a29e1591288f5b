"""Accounts on top of guests: claiming a player, logging in elsewhere, sessions ending at once
(open sockets included), the password rules, and failed logins slowed without telling whether
a username exists."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any

import pytest
import websockets

from server.core.backoff import Backoff, BackoffRule
from server.errors import ProtocolError
from server.features.accounts.model import (
    HASHER,
    check_password,
    clean_username,
    common_passwords,
    verify_password,
)
from tests.conftest import ClockedServer
from tests.support import Client, ManualClock, ahttp, new_player

PASSWORD = "correct horse battery"


def unique(prefix: str) -> str:
    return f"{prefix}{secrets.token_hex(3)}"


async def sign_up(base: str, username: str | None = None) -> tuple[dict[str, Any], str]:
    guest = await new_player(base)
    username = username or unique("ada")
    status, body = await ahttp(
        "POST", f"{base}/api/accounts", {"username": username, "password": PASSWORD}, guest["token"]
    )
    assert status == 201, body
    assert body == {"id": guest["id"], "name": guest["name"], "username": username}
    return guest, username


async def log_in(base: str, username: str, password: str = PASSWORD) -> tuple[int, Any]:
    status, body = await ahttp("POST", f"{base}/api/sessions", {"username": username, "password": password})
    return status, body


# -- the rules, pure ------------------------------------------------------------------------------


def test_argon2id_with_owasp_parameters() -> None:
    digest = HASHER.hash("x" * 12)
    assert digest.startswith("$argon2id$v=19$m=19456,t=2,p=1$")


@pytest.mark.parametrize(
    ("password", "rule"),
    [
        ("short", "10 to 128"),
        ("x" * 129, "10 to 128"),
        ("Password123", "too common"),
        ("QWERTYUIOP", "too common"),
        ("my-ada-name-2026", "username"),
        ("aaaaaaaaaaaa", "3 different"),
        ("ababababababab", "3 different"),
    ],
)
def test_weak_passwords_are_refused(password: str, rule: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        check_password(password, "Ada")
    assert rule in refused.value.message
    assert refused.value.extra["field"] == "password"


def test_a_good_password_passes_and_the_list_is_shipped() -> None:
    assert check_password(PASSWORD, "Ada") == PASSWORD
    assert len(common_passwords()) >= 100
    assert all(len(p) >= 10 for p in common_passwords())


@pytest.mark.parametrize(
    ("given", "stored"), [("ada", "ada"), ("  Ａｄａ  L ", "Ada L"), ("x" * 24, "x" * 24)]
)
def test_usernames_are_normalized_like_names(given: str, stored: str) -> None:
    assert clean_username(given) == stored


@pytest.mark.parametrize(
    ("given", "rule"),
    [
        ("ab", "3 to 24"),
        ("", "3 to 24"),
        ("  a  ", "3 to 24"),
        ("x" * 25, "3 to 24"),
        ("Guest-ada", "kept for guests"),
        ("ad\u200ba", "invisible"),
        (7, "must be a string"),
    ],
)
def test_bad_usernames_are_refused(given: object, rule: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        clean_username(given)
    assert refused.value.extra["field"] == "username"
    assert rule in refused.value.message and refused.value.message.startswith("username")


def test_backoff_doubles_after_the_free_failures_and_forgets() -> None:
    clock = ManualClock(0)
    backoff = Backoff(clock, BackoffRule(free=2, base_s=1, cap_s=8, forget_s=60))
    for _ in range(2):
        assert backoff.wait_s("k") == 0
        backoff.failed("k")
    assert backoff.wait_s("k") == 0
    backoff.failed("k")  # the first failure past the free ones: wait 1 s
    assert backoff.wait_s("k") == 1
    clock.advance(1000)
    assert backoff.wait_s("k") == 0
    backoff.failed("k")
    assert backoff.wait_s("k") == 2
    for _ in range(10):
        backoff.failed("k")
    assert backoff.wait_s("k") == 8  # capped
    clock.advance(60_000)
    assert backoff.wait_s("k") == 0 and len(backoff) == 0
    backoff.failed("other")
    backoff.succeeded("other")
    assert len(backoff) == 0


def test_the_backoff_rule_waits_at_most_the_cap_however_many_failures() -> None:
    rule = BackoffRule(free=2, base_s=1, cap_s=8, forget_s=60)
    assert [rule.delay_s(n) for n in range(7)] == [0, 0, 0, 1, 2, 4, 8]
    assert rule.delay_s(10**6) == 8  # no power of two that large is computed
    assert rule.wait_s(3, last_ms=1000, now_ms=1250) == 0.75
    assert rule.wait_s(9, last_ms=0, now_ms=60_000) == 0  # quiet for forget_s: forgotten


# -- over HTTP and the WebSocket ---------------------------------------------------------------


async def test_a_guest_claims_its_player_and_logs_in_elsewhere(server: str) -> None:
    guest, username = await sign_up(server)
    status, me = await ahttp("GET", f"{server}/api/accounts/me", token=guest["token"])
    assert status == 200 and me["username"] == username and me["session_id"].startswith("s_")
    # the guest's own token keeps working: it is the account's first session now
    client = await Client.connect(server, guest["token"])
    game = await client.request("new_game", code="SH1-C4-AAAAAJ2")
    await client.close()
    status, other = await log_in(server, username.upper())  # ignoring case
    assert status == 201, other
    assert other["id"] == guest["id"] and other["token"] != guest["token"]
    second = await Client.connect(server, other["token"])
    assert second.hello["type"] == "hello"
    reply = await second.request("resign", game_id=game["game"]["id"])  # the same player, elsewhere
    assert reply["type"] != "error", reply
    await second.close()
    status, listed = await ahttp("GET", f"{server}/api/sessions", token=other["token"])
    assert status == 200
    assert [s["current"] for s in listed["sessions"]] == [False, True]


async def test_usernames_are_unique_ignoring_case_and_lookalikes(server: str) -> None:
    _, username = await sign_up(server, unique("grace"))
    for clash in (username.upper(), username.replace("a", "\u0430")):  # capitals; Cyrillic a
        guest = await new_player(server)
        status, body = await ahttp(
            "POST", f"{server}/api/accounts", {"username": clash, "password": PASSWORD}, guest["token"]
        )
        assert status == 400 and body["error"]["field"] == "username", body
        assert "taken" in body["error"]["message"]


async def test_an_account_is_claimed_once(server: str) -> None:
    guest, _ = await sign_up(server)
    status, body = await ahttp(
        "POST", f"{server}/api/accounts", {"username": unique("again"), "password": PASSWORD}, guest["token"]
    )
    assert status == 409 and body["error"]["code"] == "conflict"


async def test_wrong_username_and_wrong_password_get_one_answer(server: str) -> None:
    _, username = await sign_up(server)
    wrong_password = await log_in(server, username, "not the password at all")
    no_such_user = await log_in(server, unique("nobody"))
    assert wrong_password[0] == no_such_user[0] == 401
    assert wrong_password[1] == no_such_user[1]
    assert wrong_password[1]["error"]["code"] == "bad_credentials"


async def test_logout_ends_the_token_and_its_open_sockets_at_once(server: str) -> None:
    _, username = await sign_up(server)
    _, first = await log_in(server, username)
    _, second = await log_in(server, username)
    doomed = await Client.connect(server, first["token"])
    kept = await Client.connect(server, second["token"])
    status, body = await ahttp("DELETE", f"{server}/api/sessions/current", token=first["token"])
    assert status == 200 and body == {"ended_sessions": 1}
    with pytest.raises(websockets.ConnectionClosed) as closed:
        await doomed.recv(timeout=5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401
    status, body = await ahttp("GET", f"{server}/api/accounts/me", token=first["token"])
    assert status == 401 and body["error"]["code"] == "bad_token"
    pong = await kept.request("ping")
    assert pong["type"] == "pong"
    await kept.close()
    again = await Client.connect(server, anonymous="1")  # the old token cannot authenticate again
    refused = await again.request("auth", token=first["token"])
    assert refused["code"] == "bad_token"
    await again.close()


async def test_a_guest_cannot_log_out_its_only_key(server: str) -> None:
    guest = await new_player(server)
    status, body = await ahttp("DELETE", f"{server}/api/sessions/current", token=guest["token"])
    assert status == 409, body


async def test_revoking_another_device_and_changing_the_password(server: str) -> None:
    guest, username = await sign_up(server)
    _, phone = await log_in(server, username)
    _, laptop = await log_in(server, username)
    status, listed = await ahttp("GET", f"{server}/api/sessions", token=phone["token"])
    assert len(listed["sessions"]) == 3
    status, body = await ahttp(
        "DELETE", f"{server}/api/sessions/{laptop['session_id']}", token=phone["token"]
    )
    assert status == 200 and body == {"ended_sessions": 1}
    status, _ = await ahttp("GET", f"{server}/api/accounts/me", token=laptop["token"])
    assert status == 401
    status, body = await ahttp(
        "DELETE", f"{server}/api/sessions/{laptop['session_id']}", token=phone["token"]
    )
    assert status == 404
    watching = await Client.connect(server, guest["token"])
    new = "an entirely new passphrase"
    change = {"password": "wrong password here", "new_password": new}
    status, body = await ahttp("POST", f"{server}/api/accounts/me/password", change, phone["token"])
    assert status == 401 and body["error"]["code"] == "bad_credentials"
    change["password"] = PASSWORD
    status, body = await ahttp("POST", f"{server}/api/accounts/me/password", change, phone["token"])
    assert status == 200 and body == {"ended_sessions": 1}  # the guest's first token
    with pytest.raises(websockets.ConnectionClosed):
        await watching.recv(timeout=5)
    assert (await ahttp("GET", f"{server}/api/accounts/me", token=phone["token"]))[0] == 200
    assert (await ahttp("GET", f"{server}/api/accounts/me", token=guest["token"]))[0] == 401
    assert (await log_in(server, username))[0] == 401
    assert (await log_in(server, username, new))[0] == 201


async def test_failed_logins_are_slowed_the_same_for_unknown_names(clocked_server: ClockedServer) -> None:
    base, clock = clocked_server.url, clocked_server.clock
    _, username = await sign_up(base)
    nobody = unique("nobody")
    for name in (username, nobody):
        answers = [await log_in(base, name, "wrong wrong wrong") for _ in range(6)]
        assert [status for status, _ in answers] == [401] * 5 + [401]  # five free, the sixth counted
        status, body = await log_in(base, name, "wrong wrong wrong")
        assert status == 429 and body["error"]["code"] == "rate_limited", body
        assert body["error"]["retry_after_s"] == 1
    status, _ = await log_in(base, username)  # even the right password waits its turn
    assert status == 429
    clock.advance(1_000)
    status, _ = await log_in(base, username)
    assert status == 201


async def test_concurrent_logins_each_get_a_session(server: str) -> None:
    _, username = await sign_up(server)
    answers = await asyncio.gather(*(log_in(server, username) for _ in range(4)))
    assert [status for status, _ in answers] == [201] * 4
    assert len({body["token"] for _, body in answers}) == 4


def test_an_unknown_account_takes_as_long_as_a_wrong_password() -> None:
    """verify_password(None, …) checks a dummy hash: the same argon2id work as a real one.
    The fastest of several calls each is compared, which a busy machine does not disturb."""
    stored = HASHER.hash(PASSWORD)

    def fastest(stored_hash: str | None) -> float:
        times = []
        for _ in range(7):
            started = time.perf_counter()
            assert verify_password(stored_hash, "not the password") is False
            times.append(time.perf_counter() - started)
        return min(times)

    known, unknown = fastest(stored), fastest(None)
    assert 0.5 < unknown / known < 2.0, (known, unknown)
    assert verify_password(stored, PASSWORD) is True
