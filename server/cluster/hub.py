"""The hub of an instance among several: local fan-out as ever, plus Redis pub/sub.

It implements core's :class:`server.core.cluster.Elsewhere`: the games held here publish from
here, so their channels are not subscribed to.
"""

from __future__ import annotations

from typing import Any, Protocol

from server import metrics
from server.cluster.control import Control
from server.core.hub import Hub, Subscriber, encode


class Channels(Protocol):
    """What the hub asks of the instance's Redis link."""

    def send(self, topic: str, kind: Control, body: str) -> None: ...

    def want(self, topic: str) -> None: ...

    def drop(self, topic: str) -> None: ...


class ClusterHub(Hub):
    """The hub of an instance among several: local fan-out as ever, plus Redis pub/sub."""

    def __init__(self, cluster: Channels) -> None:
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
            self.cluster.send(topic, Control.FRAME, frame)
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
        self.cluster.send(topic, Control.FRAME, encode(message))

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
        self.cluster.send(topic, Control.CLOSE, "")

    def close_here(self, topic: str) -> None:
        had = topic in self._topics
        super().close(topic)
        if had:
            self.cluster.drop(topic)

    def forward(self, source: str, target: str) -> None:
        super().forward(source, target)
        self.cluster.send(source, Control.FORWARD, target)

    def forward_here(self, source: str, target: str) -> None:
        super().forward(source, target)
