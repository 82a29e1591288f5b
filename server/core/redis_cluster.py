"""Several instances on one PostgreSQL database, coordinated through Redis.

Redis holds nothing durable; it carries four things between instances:

- **Pushes.** Each hub topic is a Redis channel (``<prefix>:t:<topic>``). An
  instance subscribes to a topic's channel while it has a local subscriber of
  it (but not to those of the games it holds, whose pushes all start here),
  and once Redis confirms the subscription announces that on
  ``<prefix>:ctl``; a game's owner answers by sending the game's last update
  (or its end) again, which the newcomer may have missed while it
  subscribed. A publish is serialized once, queued to the instance's own
  subscribers and written to Redis at once (:mod:`server.core.redis_link`:
  one connection publishes, one is subscribed). A topic whose last publish
  reached no other instance is not sent again until an instance announces
  interest in it, so an unwatched game costs no Redis traffic.
- **Moves of games.** Taking a game (:mod:`server.storage.leases`) is announced
  on the control channel, so its previous owner drops its copy at once; the
  fencing token in PostgreSQL, not this message, is what keeps that owner
  from ever committing for the game again.
- **The leader** of once-per-cluster jobs: ``<prefix>:leader`` set with NX and
  a time to live, renewed by its holder while it runs.
- **Ended sessions.** Logging out (or revoking, or a new password) is
  announced on the control channel with the ended tokens' hashes, and every
  instance closes its own sockets on them.

Failed logins are counted in Redis too, by :mod:`server.core.redis_backoff`.

When a link breaks (Redis restarted or unreachable, or silent past a ping),
the instance keeps serving (commits need only PostgreSQL), drops what it
would publish meanwhile, reconnects every ``RETRY_S``, subscribes again, and
then says goodbye to its clients: they may have missed pushes, and
reconnecting makes them read every state again.
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
from server.core.hub import Hub, Subscriber, encode
from server.core.redis_link import Endpoint, LinkError, RedisLink, Reply, open_link
from server.storage import leases
from server.storage.db import Database
from server.storage.faults import Conflict

log = logging.getLogger(__name__)
SEP = "\x1f"  # between the sender, the kind and the body of a message (never in ids or topics)
RETRY_S = 0.5  # between attempts to reach Redis again
PING_S = 2.0  # a subscription this quiet is pinged, so a dead link is found within seconds
LEADER_TTL_MS = 5_000
LEADER_RENEW_S = 1.0
QUIET_LIMIT = 100_000  # topics remembered as unwatched elsewhere (forgotten all at once past it)

FRAME, CLOSE, FORWARD, INTEREST, MOVED = "m", "c", "f", "i", "g"
ENDED = "e"  # on the control channel: sessions ended; the body is their token hashes, comma-separated

RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""


def instance_name() -> str:
    """A name for this process that no other instance shares (host, pid, a random tail)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


class ClusterHub(Hub):
    """The hub of an instance among several: local fan-out as ever, plus Redis pub/sub."""

    def __init__(self, cluster: RedisCluster) -> None:
        super().__init__()
        self.cluster = cluster
        self.quiet: set[str] = set()  # topics whose last publish reached no other instance
        self.held: set[str] = set()  # topics of the games this instance holds: not subscribed to

    def subscribe(self, topic: str, subscriber: Subscriber) -> None:
        first = topic not in self._topics
        super().subscribe(topic, subscriber)
        if first:
            self.cluster.want(topic)

    def unsubscribe(self, topic: str, subscriber: Subscriber) -> None:
        super().unsubscribe(topic, subscriber)
        if topic not in self._topics:
            self.cluster.drop(topic)

    def local_topics(self) -> list[str]:
        return list(self._topics)

    def has_local(self, topic: str) -> bool:
        return topic in self._topics

    def remote(self, topic: str) -> bool:
        """Whether another instance may have a subscriber of the topic."""
        return topic not in self.quiet

    def has_subscribers(self, topic: str, besides: Subscriber | None = None) -> bool:
        return self.remote(topic) or super().has_subscribers(topic, besides)

    def subscriber_count(self, topic: str) -> int:
        return super().subscriber_count(topic) + (1 if self.remote(topic) else 0)

    def publish(self, topic: str, message: dict[str, Any], skip: Subscriber | None = None) -> int:
        local = super().has_subscribers(topic, besides=skip)
        remote = self.remote(topic)
        if not (local or remote):
            return 0
        frame = encode(message)  # once, for this instance's subscribers and every other instance
        sent = self.deliver(topic, frame, skip) if local else 0
        if remote:
            self.cluster.send(topic, FRAME, frame)
        return sent

    def hold(self, topic: str) -> None:
        """Every push of a game held here starts here: its local subscribers get it without
        Redis, so the channel is not subscribed to (Redis would send each publish back)."""
        self.held.add(topic)
        self.cluster.drop(topic)

    def release(self, topic: str) -> None:
        """Another instance may publish on it now: subscribe again if anyone here follows it (the
        interest announced then brings the last update, from the game's new holder)."""
        if topic in self.held:
            self.held.discard(topic)
            self.cluster.want(topic)

    def resend(self, topic: str, message: dict[str, Any]) -> None:
        self.cluster.send(topic, FRAME, encode(message))

    def deliver(self, topic: str, frame: str, skip: Subscriber | None = None) -> int:
        """Queue a frame to this instance's subscribers of a topic."""
        sent = 0
        for subscriber in list(self._topics.get(topic, ())):
            if subscriber is not skip:
                subscriber.push(frame)
                sent += 1
        metrics.PUSHES.inc(sent)
        return sent

    def close(self, topic: str) -> None:
        self.close_here(topic)
        self.quiet.discard(topic)
        self.cluster.send(topic, CLOSE, "")

    def close_here(self, topic: str) -> None:
        had = topic in self._topics
        super().close(topic)
        if had:
            self.cluster.drop(topic)

    def forward(self, source: str, target: str) -> None:
        super().forward(source, target)
        self.cluster.send(source, FORWARD, target)

    def forward_here(self, source: str, target: str) -> None:
        super().forward(source, target)


class RedisLeases:
    """Games taken through their fencing token; each move announced to the other instances."""

    def __init__(self, cluster: RedisCluster, db: Database) -> None:
        self.cluster = cluster
        self.db = db

    async def take(self, game_id: str) -> int:
        try:
            token = await leases.take(self.db, game_id, self.cluster.name)
        except Conflict:  # the game is not stored (yet): no lease to take
            raise LookupError(game_id) from None
        if token > 1:  # another instance may hold a copy: it drops it at once
            metrics.LEASE_MOVES.inc()
            self.cluster.send_control(MOVED, game_id)
        return token


class RedisLeader:
    """Leadership through a Redis key with a time to live, renewed by its holder."""

    def __init__(self) -> None:
        self.until = 0.0  # monotonic time the current term is safe until

    @property
    def leading(self) -> bool:
        return time.monotonic() < self.until


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

    def send(self, topic: str, kind: str, body: str) -> None:
        """Publish a message on a topic's channel now (dropped while Redis is away)."""
        link = self._pub
        if link is None or link.backed_up:
            metrics.REDIS_DROPPED.inc()
            return
        channel = self.channel(topic) if topic else self.control
        link.command("PUBLISH", channel, f"{self.name}{SEP}{kind}{SEP}{body}")
        self._sent.append((topic, kind, self._counted(topic) if topic else None, self._interest_seen))
        metrics.REDIS_PUBLISHED.inc()

    def send_control(self, kind: str, body: str) -> None:
        self.send("", kind, body)

    def sessions_ended(self, token_hashes: set[str]) -> None:
        """Tell the other instances these sessions ended: each closes its own sockets on them."""
        self.send_control(ENDED, ",".join(sorted(token_hashes)))

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
        self.send_control(INTEREST, topic)  # only now does every publish reach this instance

    def _received(self, channel: str, data: str) -> None:
        """Another instance's message (this one's own were dropped unread: ``_on_subscription``)."""
        _sender, kind, body = data.split(SEP, 2)
        metrics.REDIS_RECEIVED.inc()
        if channel == self.control:
            if kind == INTEREST:
                self._interest_seen += 1
                self.hub.quiet.discard(body)
                self.on_interest(body)
            elif kind == MOVED:
                self.on_moved(body)
            elif kind == ENDED:
                self._end_sessions(set(body.split(",")))
            return
        topic = channel[len(self.prefix) + 3 :]
        if kind == FRAME:
            self.hub.deliver(topic, body)
        elif kind == CLOSE:
            self.hub.close_here(topic)
        elif kind == FORWARD:
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
        if kind != FRAME or me is None or interest != self._interest_seen:
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
