"""The results log, pure: RFC 9162 hashing over stored perfect subtrees, proofs and leaf bytes.

The tree is the one of RFC 9162 section 2.1.1 (leaf ``SHA-256(0x00 || d)``,
node ``SHA-256(0x01 || left || right)``, split at the largest power of two
below n). It is stored as the hashes of its *perfect* subtrees: node
``(level, index)`` covers leaves ``[index * 2**level, (index + 1) * 2**level)``
and is written once, when its last leaf is appended. Every range the RFC's
recursion names (a root, a proof element) starts at a multiple of a power of
two at least its length, so it is the right fold of at most log2(n) such
nodes: a root or a proof costs O(log n) stored hashes, never a rebuild.

Functions here return the ranges and node keys a proof needs; storage reads
those nodes in one query and :func:`range_hash` folds them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

NodeKey = tuple[int, int]  # (level, index): a perfect subtree of 2**level leaves
Range = tuple[int, int]  # [start, end) of leaf indices
EMPTY_ROOT = hashlib.sha256(b"").digest()  # the hash of the empty tree (RFC 9162 2.1.1)
MAX_LEAVES_PER_CALL = 1000


class LeafKind(StrEnum):
    """What a leaf records."""

    RESULT = "result"  # a ranked daily attempt that ended
    MODERATION = "moderation"  # an operator's action that changed a daily board


def canonical(value: Mapping[str, Any]) -> bytes:
    """Leaf and tree-head bytes: UTF-8 JSON, keys sorted, no spaces, non-ASCII as itself."""
    for item in value.values():
        if isinstance(item, float):
            raise TypeError("the log's JSON holds integers only, no floats")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(n: int) -> int:
    """The largest power of two smaller than n (n >= 2): where RFC 9162 splits a tree of n leaves."""
    return 1 << ((n - 1).bit_length() - 1)


def subtrees(start: int, end: int) -> list[NodeKey]:
    """The perfect subtrees whose right fold is the hash of leaves [start, end), largest first.

    Valid for the ranges of the RFC's recursion, whose start is a multiple of
    a power of two at least their length (raises ValueError otherwise).
    """
    keys: list[NodeKey] = []
    while start < end:
        level = (end - start).bit_length() - 1
        if start % (1 << level):
            raise ValueError(f"leaves [{start}, {end}) are no range of the tree's recursion")
        keys.append((level, start >> level))
        start += 1 << level
    return keys


def range_hash(nodes: Mapping[NodeKey, bytes], start: int, end: int) -> bytes:
    """The Merkle tree hash of leaves [start, end) from its perfect subtrees' stored hashes."""
    keys = subtrees(start, end)
    if not keys:
        return EMPTY_ROOT
    folded = nodes[keys[-1]]
    for key in reversed(keys[:-1]):
        folded = node_hash(nodes[key], folded)
    return folded


def inclusion_ranges(index: int, size: int) -> list[Range]:
    """RFC 9162 2.1.3.1 PATH(index, D[0:size]) as the ranges whose hashes it lists, leaf first."""
    if not 0 <= index < size:
        raise ValueError(f"no leaf {index} in a tree of {size}")
    path: list[Range] = []
    start, n = 0, size
    while n > 1:
        k = split(n)
        if index - start < k:
            path.append((start + k, start + n))
            n = k
        else:
            path.append((start, start + k))
            start, n = start + k, n - k
    path.reverse()  # the recursion appends on the way back up: the deepest sibling comes first
    return path


def consistency_ranges(first: int, second: int) -> list[Range]:
    """RFC 9162 2.1.4.1 PROOF(first, D[0:second]) as the ranges whose hashes it lists."""
    if not 0 < first <= second:
        raise ValueError(f"no consistency proof from {first} to {second}")
    proof: list[Range] = []
    start, m, n, complete = 0, first, second, True
    while m != n:
        k = split(n)
        if m <= k:
            proof.append((start + k, start + n))
            n = k
        else:
            proof.append((start, start + k))
            start, m, n, complete = start + k, m - k, n - k, False
    if not complete:
        proof.append((start, start + n))
    proof.reverse()  # SUBPROOF puts the inner proof before the sibling it recursed past
    return proof


def keys_of(ranges: Sequence[Range]) -> list[NodeKey]:
    """Every stored node the ranges' hashes fold, each once."""
    return list(dict.fromkeys(key for start, end in ranges for key in subtrees(start, end)))


def completed_by(index: int) -> list[tuple[NodeKey, NodeKey, NodeKey]]:
    """(left, right, parent) of each perfect subtree leaf ``index`` completes, lowest first."""
    out: list[tuple[NodeKey, NodeKey, NodeKey]] = []
    level, i = 0, index
    while i & 1:
        out.append(((level, i - 1), (level, i), (level + 1, i >> 1)))
        i >>= 1
        level += 1
    return out


def extend(
    start: int, hashes: Sequence[bytes], frontier: Mapping[NodeKey, bytes]
) -> list[tuple[NodeKey, bytes]]:
    """The nodes to store when leaves with ``hashes`` are appended at ``start``.

    ``frontier`` holds the perfect subtrees of the tree before (``subtrees(0,
    start)``): every left sibling the new leaves complete is one of those or new.
    """
    nodes = dict(frontier)
    written: list[tuple[NodeKey, bytes]] = []
    for offset, digest in enumerate(hashes):
        index = start + offset
        nodes[(0, index)] = digest
        written.append(((0, index), digest))
        for left, right, parent in completed_by(index):
            nodes[parent] = node_hash(nodes[left], nodes[right])
            written.append((parent, nodes[parent]))
    return written


@dataclass(frozen=True, slots=True)
class TreeHead:
    """A day's tree head: the four fields the signature covers."""

    day: str
    tree_size: int
    root_hash: str  # lowercase hex
    timestamp_ms: int

    def signed_bytes(self) -> bytes:
        return canonical(
            {
                "day": self.day,
                "tree_size": self.tree_size,
                "root_hash": self.root_hash,
                "timestamp_ms": self.timestamp_ms,
            }
        )


def result_leaf(
    day: str,
    family: str,
    code: str,
    game_id: str,
    player_id: str,
    result: str,
    score: int,
    moves: int,
    time_ms: int,
    finished_ms: int,
) -> bytes:
    """A ranked daily attempt that ended."""
    return canonical(
        {
            "kind": LeafKind.RESULT.value,
            "day": day,
            "family": family,
            "code": code,
            "game_id": game_id,
            "player_id": player_id,
            "result": result,
            "score": score,
            "moves": moves,
            "time_ms": time_ms,
            "finished_ms": finished_ms,
        }
    )


def moderation_leaf(day: str, family: str, action: str, target: str, reason: str, at_ms: int) -> bytes:
    """An operator's action on a daily board."""
    return canonical(
        {
            "kind": LeafKind.MODERATION.value,
            "day": day,
            "family": family,
            "action": action,
            "target": target,
            "reason": reason,
            "at_ms": at_ms,
        }
    )
