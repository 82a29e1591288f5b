"""The messages instances send each other through Redis, and how they are framed.

A message is ``SENDER<SEP>KIND<SEP>BODY``; on a topic's channel it carries a push (or the
topic's end, or a forward), on the control channel news of the fleet.
"""

from __future__ import annotations

from enum import StrEnum

SEP = "\x1f"  # between the sender, the kind and the body of a message (never in ids or topics)


class Control(StrEnum):
    """The kind of a message between instances (one letter on the wire)."""

    FRAME = "m"  # a push on a topic: the body is the frame, sent as it is
    CLOSE = "c"  # the topic will carry nothing more (a finished game)
    FORWARD = "f"  # the topic's subscribers follow another topic too (body: that topic)
    INTEREST = "i"  # control: an instance subscribed to a topic (body: the topic)
    MOVED = "g"  # control: a game was taken by another instance (body: its id)
    ENDED = "e"  # control: sessions ended (body: their token hashes, comma-separated)
