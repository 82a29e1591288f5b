"""One instance's link to the others through Redis: pub/sub, the control channel, leadership.

See :mod:`server.cluster` for what Redis carries between instances and what happens when a
link breaks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import hiredis
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from server import metrics
from server.cluster.control import SEP, Control
from server.cluster.hub import ClusterHub
from server.cluster.leader import LEADER_RENEW_S, LEADER_TTL_MS, RENEW, RedisLeader
from server.cluster.leases import RedisLeases
from server.cluster.link import Endpoint, LinkError, RedisLink, Reply, open_link
from server.storage.db import Database

log = logging.getLogger(__name__)
RETRY_S = 0.5  # between attempts to reach Redis again
PING_S = 2.0  # a subscription this quiet is pinged, so a dead link is found within seconds
QUIET_LIMIT = 100_000  # topics remembered as unwatched elsewhere (forgotten all at once past it)


def instance_name() -> str:
    """A name for this process that no other instance shares (host, pid, a random tail)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


class RedisCluster:
    """This instance's link to the others: pub/sub, the control channel, leadership."""

    def __init__(self, url: str, prefix: str, db: Database, name: str | None = None) -> None:
        self.name = name or instance_name()
        self._signature = f"{self.name}{SEP}".encode()  # how this instance's own messages begin
        self.prefix = prefix
        self.endpoint = Endpoint.from_url(url)
        self.redis: Redis = Redis.from_url(
            url, retry=Retry(NoBackoff(), 0), socket_timeout=5, socket_connect_timeout=2
        )
        self.hub = ClusterHub(self)
        self.leases = RedisLeases(self, db)
        self.leader = RedisLeader()
        self.control = f"{prefix}:ctl"
        self.on_moved: Callable[[str], None] = lambda game_id: None
        self.on_interest: Callable[[str], None] = lambda topic: None
        self.on_resync: Callable[[], Awaitable[None]] = _nothing
        self.on_sessions_ended: Callable[[set[str]], Coroutine[Any, Any, object]] = _no_sessions
        self._ending: set[asyncio.Task[object]] = set()  # closing sockets of sessions ended elsewhere
        self.connected = False
        self._sub: RedisLink | None = None  # subscribed to the control channel and watched topics
        self._pub: RedisLink | None = None  # publishes; its replies are receiver counts, in order
        self._sent: deque[tuple[str, str, bool | None, int]] = deque()  # (topic, kind, counted, interest)
        self._subscribed: set[str] = set()  # topics whose channel this instance asked to subscribe to
        self._confirmed: set[str] = set()  # ... and whose subscription Redis has confirmed
        self._interest_seen = 0  # interest announcements received: a publish count older is stale
        self._tasks: list[asyncio.Task[None]] = []

    def channel(self, topic: str) -> str:
        return f"{self.prefix}:t:{topic}"

    # -- what the hub and the leases call --------------------------------------------

    def send(self, topic: str, kind: Control, body: str) -> None:
        """Publish a message on a topic's channel now (dropped while Redis is away)."""
        link = self._pub
        if link is None or link.backed_up:
            metrics.REDIS_DROPPED.inc()
            return
        channel = self.channel(topic) if topic else self.control
        link.command("PUBLISH", channel, f"{self.name}{SEP}{kind}{SEP}{body}")
        self._sent.append((topic, kind, self._counted(topic) if topic else None, self._interest_seen))
        metrics.REDIS_PUBLISHED.inc()

    def send_control(self, kind: Control, body: str) -> None:
        self.send("", kind, body)

    def sessions_ended(self, token_hashes: set[str]) -> None:
        """Tell the other instances these sessions ended: each closes its own sockets on them."""
        self.send_control(Control.ENDED, ",".join(sorted(token_hashes)))

    def want(self, topic: str) -> None:
        """A first local subscriber: subscribe to the topic's channel (again, after a drop)."""
        if self._sub is None or topic in self._subscribed or topic in self.hub.held:
            return
        if self.hub.has_local(topic):
            self._sub.command("SUBSCRIBE", self.channel(topic))
            self._subscribed.add(topic)

    def drop(self, topic: str) -> None:
        """No local subscriber left, or the topic's game is held here: unsubscribe from its channel."""
        if self._sub is None or topic not in self._subscribed:
            return
        if topic in self.hub.held or not self.hub.has_local(topic):
            self._sub.command("UNSUBSCRIBE", self.channel(topic))
            self._subscribed.discard(topic)

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._listen(), name="redis-listen"),
            loop.create_task(self._lead(), name="redis-leader"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        if self.leader.leading:  # hand leadership on at once rather than at the end of the term
            with contextlib.suppress(RedisError, OSError):
                await self.redis.eval(RENEW, 1, self._leader_key, self.name, 1)
        await self.redis.aclose()

    async def ping(self) -> bool:
        """Whether Redis answers now (``/ready``)."""
        try:
            return bool(await asyncio.wait_for(self.redis.ping(), 2))
        except (RedisError, OSError, TimeoutError):
            return False

    # -- the links ---------------------------------------------------------------------

    async def _listen(self) -> None:
        interrupted = False
        while True:
            try:
                await self._session(interrupted)
            except (OSError, TimeoutError, LinkError) as exc:
                if self.connected:
                    log.warning("redis: link lost (%s); reconnecting", exc)
                elif not interrupted:  # never reached since the start: once, not per retry
                    log.warning("redis: unreachable (%s); retrying every %.1f s", exc, RETRY_S)
            self._set_connected(False)
            interrupted = True
            await asyncio.sleep(RETRY_S)

    async def _session(self, interrupted: bool) -> None:
        """Both links, from connecting until one of them breaks."""
        sub = pub = None
        try:
            sub = await open_link(self.endpoint, self._on_subscription)
            pub = await open_link(self.endpoint, self._on_publish_reply)
            topics = [topic for topic in self.hub.local_topics() if topic not in self.hub.held]
            sub.command("SUBSCRIBE", self.control, *(self.channel(t) for t in topics))
            self._subscribed, self._confirmed = set(topics), set()
            self._sent.clear()
            self._sub, self._pub = sub, pub
            self.hub.quiet.clear()  # whoever watched what, before the break, is unknown
            self._set_connected(True)
            if interrupted:
                log.warning("redis: subscribed again; clients reconnect to read every state again")
                await self.on_resync()
            await self._keep_alive(sub, pub)
        finally:
            self._sub = self._pub = None
            for link in (sub, pub):
                if link is not None:
                    link.close()

    async def _keep_alive(self, sub: RedisLink, pub: RedisLink) -> None:
        """Ping a link that has been quiet for ``PING_S``; one silent for twice that is dead."""
        while True:
            done, _ = await asyncio.wait({sub.lost, pub.lost}, timeout=PING_S / 2)
            if done:
                raise ConnectionError("Redis closed the connection")
            now = time.monotonic()
            for link in (sub, pub):
                if now - link.heard >= 2 * PING_S:
                    raise TimeoutError(f"Redis has not answered for {2 * PING_S:.0f} s")
                if now - link.heard >= PING_S:
                    link.command("PING")
                    if link is pub:
                        self._sent.append(("", "", None, self._interest_seen))

    def _on_subscription(self, reply: Reply) -> None:
        if not isinstance(reply, list) or len(reply) < 3:
            return  # the answer of a PING ([pong, ""] when subscribed) or of AUTH
        kind = reply[0]
        if kind == b"message":
            if not reply[2].startswith(self._signature):  # this instance's own publish: not decoded
                self._received(reply[1].decode(), reply[2].decode())
        elif kind in (b"subscribe", b"unsubscribe"):
            self._confirm(reply[1].decode(), kind == b"subscribe")

    def _confirm(self, channel: str, subscribed: bool) -> None:
        """Redis counts this instance among a channel's subscribers from here on (or no longer)."""
        if channel == self.control:
            return
        topic = channel[len(self.prefix) + 3 :]
        if not subscribed:
            self._confirmed.discard(topic)
            return
        self._confirmed.add(topic)
        self.send_control(Control.INTEREST, topic)  # only now does every publish reach this instance

    def _received(self, channel: str, data: str) -> None:
        """Another instance's message (this one's own were dropped unread: ``_on_subscription``)."""
        _sender, kind, body = data.split(SEP, 2)
        metrics.REDIS_RECEIVED.inc()
        if channel == self.control:
            if kind == Control.INTEREST:
                self._interest_seen += 1
                self.hub.quiet.discard(body)
                self.on_interest(body)
            elif kind == Control.MOVED:
                self.on_moved(body)
            elif kind == Control.ENDED:
                self._end_sessions(set(body.split(",")))
            return
        topic = channel[len(self.prefix) + 3 :]
        if kind == Control.FRAME:
            self.hub.deliver(topic, body)
        elif kind == Control.CLOSE:
            self.hub.close_here(topic)
        elif kind == Control.FORWARD:
            self.hub.forward_here(topic, body)

    def _end_sessions(self, token_hashes: set[str]) -> None:
        task = asyncio.get_running_loop().create_task(self.on_sessions_ended(token_hashes))
        self._ending.add(task)
        task.add_done_callback(self._ending.discard)

    def _on_publish_reply(self, reply: Reply) -> None:
        """A publish's count of receivers: none but this instance, and the topic goes quiet."""
        if not self._sent:
            return
        topic, kind, me, interest = self._sent.popleft()
        if isinstance(reply, hiredis.ReplyError):
            log.warning("redis: a publish was refused (%s)", reply)
            metrics.REDIS_DROPPED.inc()
            return
        if kind != Control.FRAME or me is None or interest != self._interest_seen:
            return  # someone announced interest meanwhile: this count may be older than that
        if int(reply) - me <= 0:
            if len(self.hub.quiet) >= QUIET_LIMIT:
                self.hub.quiet.clear()
            self.hub.quiet.add(topic)

    def _counted(self, topic: str) -> bool | None:
        """Whether a publish now reaches this instance's own subscription (None: it may or may not:
        a subscription asked for but not yet confirmed, or one being dropped)."""
        if topic in self._confirmed and topic in self._subscribed:
            return True
        if topic not in self._confirmed and topic not in self._subscribed:
            return False
        return None

    # -- leadership --------------------------------------------------------------------

    @property
    def _leader_key(self) -> str:
        return f"{self.prefix}:leader"

    async def _lead(self) -> None:
        while True:
            started = time.monotonic()
            try:
                if self.leader.leading:
                    held = await self.redis.eval(RENEW, 1, self._leader_key, self.name, LEADER_TTL_MS)
                else:
                    held = await self.redis.set(self._leader_key, self.name, nx=True, px=LEADER_TTL_MS)
                # safe until a little before the key would expire, counted from before the call
                self.leader.until = started + LEADER_TTL_MS / 1000 * 0.8 if held else 0.0
            except (RedisError, OSError, TimeoutError):
                pass  # the term runs out on its own; no other instance can renew it either
            metrics.LEADER.set(1 if self.leader.leading else 0)
            await asyncio.sleep(LEADER_RENEW_S)

    def _set_connected(self, connected: bool) -> None:
        self.connected = connected
        metrics.REDIS_CONNECTED.set(1 if connected else 0)


async def _nothing() -> None:
    return None


async def _no_sessions(token_hashes: set[str]) -> None:
    return None
