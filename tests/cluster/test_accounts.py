"""Accounts across a real fleet: failed logins are counted by the whole fleet, and an ended
session's sockets close on every instance, whichever instance ended it."""

from __future__ import annotations

import asyncio
import secrets
import time

import pytest
import websockets

from tests.cluster.fleet import Fleet, Instance, until
from tests.cluster.test_cluster import ahttp_text
from tests.server.test_accounts import PASSWORD, log_in, sign_up
from tests.support import Client, ahttp

pytestmark = pytest.mark.timeout(120)
WRONG = "not the password at all"
CLOSE_DEADLINE_S = 5.0  # an ended session's sockets elsewhere are closed within this


async def linked(instance: Instance) -> None:
    """Wait until the instance has subscribed to the fleet's control channel."""

    async def connected() -> bool:
        status, text = await ahttp_text(instance.metrics_url)
        return status == 200 and "solitaire_redis_connected 1.0" in text

    await until(connected, 10, f"{instance.url} linked to Redis")


async def test_failed_logins_on_three_instances_are_counted_together(fleet: Fleet) -> None:
    a, b, c = fleet.start(), fleet.start(), fleet.start()
    instances = [a, b, c]
    _, username = await sign_up(a.url)
    for i in range(5):  # the five free failures of a username, on A, B, C, A, B
        status, body = await log_in(instances[i % 3].url, username, WRONG)
        assert status == 401 and body["error"]["code"] == "bad_credentials", body
    status, body = await log_in(c.url, username)  # a success resets the username's count
    assert status == 201, body
    for i in range(6):  # five free again, then the sixth (on C) must be waited for: 1 s
        status, body = await log_in(instances[i % 3].url, username, WRONG)
        assert status == 401, (i, body)
    # at once (the wait is 1 s): A and B never saw that failure; the right password waits too
    answers = await asyncio.gather(*(log_in(instance.url, username) for instance in instances))
    for status, body in answers:
        assert status == 429, body
        assert body["error"]["code"] == "rate_limited" and body["error"]["retry_after_s"] == 1, body
    # the address: 20 free failures in all (11 so far), whatever the usernames and instances
    for i in range(10):
        status, body = await log_in(instances[i % 3].url, f"nobody{secrets.token_hex(3)}", WRONG)
        assert status == 401, (i, body)
    status, body = await log_in(b.url, f"nobody{secrets.token_hex(3)}", WRONG)
    assert status == 429 and body["error"]["retry_after_s"] == 1, body


async def closed_with(client: Client, deadline: float) -> tuple[int, str]:
    """The close code and reason the server sent, waiting until ``deadline`` (monotonic)."""
    with pytest.raises(websockets.ConnectionClosed) as closed:
        while True:  # anything pushed before the close is read past
            await client.recv(timeout=max(0.1, deadline - time.monotonic()))
    assert closed.value.rcvd is not None, "closed without a close frame from the server"
    return closed.value.rcvd.code, closed.value.rcvd.reason


async def test_sessions_ended_through_c_close_their_sockets_on_a_and_b(fleet: Fleet) -> None:
    a, b, c = fleet.start(), fleet.start(), fleet.start()
    for instance in (a, b, c):
        await linked(instance)
    guest, username = await sign_up(a.url)  # the guest's token is the account's first session
    _, phone = await log_in(c.url, username)
    _, laptop = await log_in(c.url, username)
    phone_on_a = await Client.connect(a.url, phone["token"])
    phone_on_b = await Client.connect(b.url, phone["token"])
    laptop_on_b = await Client.connect(b.url, laptop["token"])
    first_on_a = await Client.connect(a.url, guest["token"])
    first_on_c = await Client.connect(c.url, guest["token"])

    started = time.monotonic()
    status, body = await ahttp("DELETE", f"{c.url}/api/sessions/current", token=phone["token"])
    assert status == 200 and body == {"ended_sessions": 1}, body
    deadline = started + CLOSE_DEADLINE_S
    for client in (phone_on_a, phone_on_b):
        assert await closed_with(client, deadline) == (4401, "session ended")
    logged_out_s = time.monotonic() - started
    for client in (laptop_on_b, first_on_a, first_on_c):  # other sessions stay open
        assert (await client.request("ping"))["type"] == "pong"

    started = time.monotonic()  # a new password through C ends every other session, everywhere
    new = {"password": PASSWORD, "new_password": "another horse battery"}
    status, body = await ahttp("POST", f"{c.url}/api/accounts/me/password", new, guest["token"])
    assert status == 200 and body == {"ended_sessions": 1}, body
    assert await closed_with(laptop_on_b, started + CLOSE_DEADLINE_S) == (4401, "session ended")
    everywhere_s = time.monotonic() - started
    for client in (first_on_a, first_on_c):  # the session that changed it is kept
        assert (await client.request("ping"))["type"] == "pong"
    status, body = await ahttp("GET", f"{b.url}/api/accounts/me", token=laptop["token"])
    assert status == 401 and body["error"]["code"] == "bad_token"
    print(f"sockets of ended sessions closed elsewhere in {logged_out_s:.3f} s and {everywhere_s:.3f} s")
