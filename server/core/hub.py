"""In-process live fan-out: topics (a game, a leaderboard, a race) to subscribers.

Topic names come from :mod:`server.core.topics`. A subscriber is anything
with a non-blocking ``push(frame)``, a ``follow_own(topic)`` and a
``topic_closed(topic)`` (a finished game's topic carries nothing more, so it
is closed and stops counting against its subscribers' limits); the WebSocket
layer's connection queues the frame and sends it on its own, so one slow
watcher never holds up the player or the other watchers. Messages are
serialized once per publish, not once per subscriber.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Protocol

import orjson

from server.metrics import PUSHES


class Subscriber(Protocol):
    def push(self, frame: str) -> None:
        """Queue an already-serialized frame for sending."""

    def follow_own(self, topic: str) -> None:
        """Subscribe to a game of the subscriber's own player (a racer's game, say)."""

    def topic_closed(self, topic: str) -> None:
        """The topic will carry nothing more and the hub has let it go: forget it too."""


class Encoded(str):
    """A JSON value already encoded: a game state shared by a result and its updates."""

    __slots__ = ()


def encode(message: dict[str, Any]) -> str:
    """The one JSON encoding every frame uses (compact, UTF-8 safe).

    A top-level ``Encoded`` value is spliced in as is, so a state serialized
    once serves the player's result and every watcher's update.

    orjson writes it: on the action's path the standard library's encoder was
    the largest cost after the rules. Text is kept as it is (shorter for names
    in any script). What orjson refuses is written by the standard library,
    escaped to ASCII: a lone surrogate (requests refuse them, so it would be a
    bug) would otherwise fail in the UTF-8 encoder and silence the connection,
    and an integer past 64 bits (a request id, echoed) is still valid JSON.
    """
    spliced = {k: orjson.Fragment(str(v)) if isinstance(v, Encoded) else v for k, v in message.items()}
    try:
        return orjson.dumps(spliced).decode()
    except orjson.JSONEncodeError:
        return _ascii(message)


def _ascii(message: dict[str, Any]) -> str:
    encoded = {k: v for k, v in message.items() if isinstance(v, Encoded)}
    rest = json.dumps({k: v for k, v in message.items() if k not in encoded}, separators=(",", ":"))
    tail = "".join(f',"{k}":{v}' for k, v in encoded.items())
    if not encoded:
        return rest
    return f"{rest[:-1]}{tail}}}" if len(rest) > 2 else "{" + tail[1:] + "}"


class Hub:
    """Topic -> subscribers. Topics are strings such as ``game:g_1``."""

    def __init__(self) -> None:
        self._topics: defaultdict[str, set[Subscriber]] = defaultdict(set)

    def subscribe(self, topic: str, subscriber: Subscriber) -> None:
        self._topics[topic].add(subscriber)

    def unsubscribe(self, topic: str, subscriber: Subscriber) -> None:
        subscribers = self._topics.get(topic)
        if subscribers is not None:
            subscribers.discard(subscriber)
            if not subscribers:
                del self._topics[topic]

    def close(self, topic: str) -> None:
        """A topic that will carry nothing more (a finished game, race): every subscriber lets go."""
        for subscriber in self._topics.pop(topic, ()):
            subscriber.topic_closed(topic)

    def subscribers(self, topic: str) -> list[Subscriber]:
        return list(self._topics.get(topic, ()))

    def has_subscribers(self, topic: str, besides: Subscriber | None = None) -> bool:
        subscribers = self._topics.get(topic)
        if not subscribers:
            return False
        return not (len(subscribers) == 1 and besides in subscribers)

    def subscriber_count(self, topic: str) -> int:
        return len(self._topics.get(topic, ()))

    def forward(self, source: str, target: str) -> None:
        """Every subscriber of ``source`` follows ``target`` too (a racer's tabs follow their game)."""
        for subscriber in self.subscribers(source):
            subscriber.follow_own(target)

    def publish(self, topic: str, message: dict[str, Any], skip: Subscriber | None = None) -> int:
        """Send to every subscriber of a topic except ``skip``; returns how many got it."""
        if not self.has_subscribers(topic, besides=skip):
            return 0
        frame = encode(message)
        sent = 0
        for subscriber in list(self._topics[topic]):
            if subscriber is not skip:
                subscriber.push(frame)
                sent += 1
        PUSHES.inc(sent)
        return sent
