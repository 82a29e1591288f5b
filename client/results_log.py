"""Auditing the server's results log with nothing but its public answers, SHA-256 and Ed25519.

The log is a Merkle tree hashed as RFC 9162 section 2.1.1; each day the server
signs a tree head ``{"day","tree_size","root_hash","timestamp_ms"}`` (Ed25519
over its canonical JSON). This module checks, without trusting the server:

- :func:`verify_game`: a game's leaf, its audit path, the head of its day and
  the head's signature (the head fetched on its own, not taken from the proof);
- :func:`audit`: every head's signature, the consistency proof between each
  two consecutive heads, and that the published leaves hash to every head they
  cover; heads remembered from an earlier audit (``seen``) must not change.

The verification follows the structure of RFC 9162's tree (a tree of n leaves
splits at the largest power of two below n), rebuilding each root from a proof
recursively; nothing here imports the server.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from client.errors import NotFoundError, SolitaireError
from client.http import HttpApi

LEAVES_PER_CALL = 1000
HEAD_FIELDS = ("day", "tree_size", "root_hash", "timestamp_ms")


class ProofError(ValueError):
    """A proof that does not fit its tree sizes (too short, too long)."""


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    return 1 << ((n - 1).bit_length() - 1)


def canonical(value: Mapping[str, Any]) -> bytes:
    """The bytes the server hashes and signs: keys sorted, no spaces, UTF-8 as itself."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def head_bytes(head: Mapping[str, Any]) -> bytes:
    """What a tree head's signature covers: exactly its four fields."""
    return canonical({name: head[name] for name in HEAD_FIELDS})


def signature_ok(head: Mapping[str, Any], public_key_hex: str) -> bool:
    """Whether the head's Ed25519 signature is the key's over its canonical bytes."""
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key_hex))
        key.verify(bytes.fromhex(str(head["signature"])), head_bytes(head))
    except (InvalidSignature, ValueError):
        return False
    return True


def root_from_inclusion(index: int, size: int, digest: bytes, path: Sequence[bytes]) -> bytes:
    """The root a leaf hash and its audit path (deepest sibling first) make; ProofError if the
    path's length does not fit the tree."""
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is outside a tree of {size}")
    if size == 1:
        if path:
            raise ProofError("the audit path is longer than the tree is deep")
        return digest
    if not path:
        raise ProofError("the audit path is shorter than the tree is deep")
    k, sibling = _split(size), path[-1]
    if index < k:
        return node_hash(root_from_inclusion(index, k, digest, path[:-1]), sibling)
    return node_hash(sibling, root_from_inclusion(index - k, size - k, digest, path[:-1]))


def inclusion_ok(leaf: bytes, index: int, size: int, path: Sequence[bytes], root: bytes) -> bool:
    try:
        return root_from_inclusion(index, size, leaf_hash(leaf), path) == root
    except ProofError:
        return False


def roots_from_consistency(
    first: int, second: int, first_root: bytes, proof: Sequence[bytes]
) -> tuple[bytes, bytes]:
    """(first tree's root, second tree's root) as the proof rebuilds them; ProofError when the
    proof's length does not fit the two sizes."""
    if not 0 < first <= second:
        raise ProofError(f"no consistency between sizes {first} and {second}")
    left = list(proof)

    def take() -> bytes:
        if not left:
            raise ProofError("the consistency proof is too short")
        return left.pop()

    def rebuild(m: int, n: int, complete: bool) -> tuple[bytes, bytes]:
        if m == n:
            known = first_root if complete else take()
            return known, known
        k = _split(n)
        if m <= k:
            sibling = take()
            old, new = rebuild(m, k, complete)
            return old, node_hash(new, sibling)
        sibling = take()
        old, new = rebuild(m - k, n - k, False)
        return node_hash(sibling, old), node_hash(sibling, new)

    roots = rebuild(first, second, True)
    if left:
        raise ProofError("the consistency proof is too long")
    return roots


def consistency_ok(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> bool:
    try:
        return roots_from_consistency(first, second, first_root, proof) == (first_root, second_root)
    except ProofError:
        return False


class RootBuilder:
    """The roots of a growing tree, one leaf at a time: the perfect subtrees of its right edge."""

    def __init__(self) -> None:
        self.size = 0
        self._edge: list[tuple[int, bytes]] = []  # (leaves, hash), largest first

    def add(self, leaf: bytes) -> None:
        width, digest = 1, leaf_hash(leaf)
        while self._edge and self._edge[-1][0] == width:
            _, left = self._edge.pop()
            width, digest = width * 2, node_hash(left, digest)
        self._edge.append((width, digest))
        self.size += 1

    def root(self) -> bytes:
        if not self._edge:
            return hashlib.sha256(b"").digest()
        folded = self._edge[-1][1]
        for _, digest in reversed(self._edge[:-1]):
            folded = node_hash(digest, folded)
        return folded


# -- against a server -------------------------------------------------------------------


@dataclass
class Verdict:
    """What was checked of one game, and whether each check held."""

    game_id: str
    leaf: dict[str, Any] = field(default_factory=dict)
    leaf_index: int = -1
    head: dict[str, Any] = field(default_factory=dict)
    included: bool = False  # the audit path leads from the leaf to the head's root
    signed: bool = False  # the head's signature is the server's published key's
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.included and self.signed and not self.problems


async def get(http: HttpApi, path: str) -> Any:
    return await http.call("GET", path)


async def verify_game(http: HttpApi, game_id: str) -> Verdict:
    """Fetch a game's inclusion proof, the head of its day and the key; check all three."""
    proof = await get(http, f"/api/games/{game_id}/inclusion")
    verdict = Verdict(game_id, leaf_index=int(proof["leaf_index"]))
    leaf_text = str(proof["leaf"])
    verdict.leaf = json.loads(leaf_text)
    if verdict.leaf.get("game_id") != game_id:
        verdict.problems.append("the leaf names another game")
    head = await get(http, f"/api/log/heads/{verdict.leaf.get('day')}")
    if head["tree_size"] != proof["tree_size"] or head["root_hash"] != proof["root_hash"]:
        head = await get(http, "/api/log/latest")  # appended after its day's head: a later head has it
        if head["tree_size"] != proof["tree_size"] or head["root_hash"] != proof["root_hash"]:
            verdict.problems.append("the proof is against a tree that no published head signs")
    verdict.head = head
    path = [bytes.fromhex(step) for step in proof["audit_path"]]
    root = bytes.fromhex(str(head["root_hash"]))
    verdict.included = inclusion_ok(
        leaf_text.encode(), verdict.leaf_index, int(head["tree_size"]), path, root
    )
    key = await get(http, "/api/log/key")
    verdict.signed = signature_ok(head, str(key["public_key"]))
    return verdict


@dataclass
class AuditReport:
    """Every head checked, what held and what did not."""

    public_key: str = ""
    heads: list[dict[str, Any]] = field(default_factory=list)  # oldest first
    leaves_checked: int = 0  # the published (unsealed) leaves hashed
    heads_covered: int = 0  # heads whose every leaf was published, and hashed to their root
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _day_before(day: str) -> str:
    return (date.fromisoformat(day) - timedelta(days=1)).isoformat()


async def all_heads(http: HttpApi) -> list[dict[str, Any]]:
    """Every signed head, oldest first: the latest, then each day before it until a day has none."""
    try:
        head = await get(http, "/api/log/latest")
    except NotFoundError:
        return []
    found = [head]
    while True:
        try:
            found.append(await get(http, f"/api/log/heads/{_day_before(found[-1]['day'])}"))
        except NotFoundError:
            break
    return found[::-1]


async def open_leaves(http: HttpApi, start: int, end: int) -> list[str]:
    """Leaves ``start`` to ``end`` as far as they are published: a sealed leaf ends the run."""
    try:
        return list((await get(http, f"/api/log/leaves?start={start}&end={end}"))["leaves"])
    except SolitaireError as exc:
        if exc.code != "sealed":
            raise
    if start == end:
        return []
    middle = (start + end) // 2
    first = await open_leaves(http, start, middle)
    if len(first) < middle - start + 1:
        return first
    return first + await open_leaves(http, middle + 1, end)


def check_heads(
    report: AuditReport, heads: list[dict[str, Any]], seen: Mapping[str, Mapping[str, Any]]
) -> None:
    """Signatures, order, and heads remembered from before."""
    for head in heads:
        if not signature_ok(head, report.public_key):
            report.problems.append(f"head {head['day']}: the signature is not the log key's")
        before = seen.get(str(head["day"]))
        if before is not None and any(before.get(name) != head.get(name) for name in HEAD_FIELDS):
            report.problems.append(
                f"head {head['day']}: differs from the one seen before "
                f"(size {before.get('tree_size')} root {before.get('root_hash')})"
            )
    for older, newer in itertools.pairwise(heads):
        if newer["tree_size"] < older["tree_size"]:
            report.problems.append(f"head {newer['day']}: the tree shrank")


async def check_consistency(http: HttpApi, report: AuditReport, heads: list[dict[str, Any]]) -> None:
    """Each head's tree extends the one before it (RFC 9162 consistency proofs)."""
    for older, newer in itertools.pairwise(heads):
        m, n = int(older["tree_size"]), int(newer["tree_size"])
        old_root, new_root = bytes.fromhex(older["root_hash"]), bytes.fromhex(newer["root_hash"])
        if m == 0 or m > n:
            continue
        if m == n:
            if old_root != new_root:
                report.problems.append(f"heads {older['day']} and {newer['day']}: same size, other roots")
            continue
        body = await get(http, f"/api/log/consistency?first={m}&second={n}")
        proof = [bytes.fromhex(step) for step in body["proof"]]
        if not consistency_ok(m, n, old_root, new_root, proof):
            report.problems.append(f"heads {older['day']} -> {newer['day']}: the consistency proof fails")


async def check_leaves(http: HttpApi, report: AuditReport, heads: list[dict[str, Any]]) -> None:
    """Hash the published leaves; each head they fully cover must have their root."""
    last = max((int(h["tree_size"]) for h in heads), default=0)
    at_size: dict[int, list[dict[str, Any]]] = {}
    for head in heads:
        at_size.setdefault(int(head["tree_size"]), []).append(head)
    day_sizes = {str(h["day"]): int(h["tree_size"]) for h in heads}
    builder = RootBuilder()
    while builder.size < last:
        end = min(builder.size + LEAVES_PER_CALL, last) - 1
        batch = await open_leaves(http, builder.size, end)
        if not batch:
            break
        for text in batch:
            _check_leaf(report, builder.size, text, day_sizes)
            builder.add(text.encode())
            for head in at_size.get(builder.size, ()):
                report.heads_covered += 1
                if builder.root().hex() != head["root_hash"]:
                    report.problems.append(
                        f"head {head['day']}: the {builder.size} published leaves do not hash to its root"
                    )
    report.leaves_checked = builder.size
    for head in heads:
        if int(head["tree_size"]) == 0:
            report.heads_covered += 1


def _check_leaf(report: AuditReport, index: int, text: str, day_sizes: Mapping[str, int]) -> None:
    """A leaf is JSON of a known kind, and a result is inside the head of its own day."""
    try:
        leaf = json.loads(text)
    except ValueError:
        report.problems.append(f"leaf {index}: not JSON")
        return
    if not isinstance(leaf, dict) or leaf.get("kind") not in ("result", "moderation"):
        report.problems.append(f"leaf {index}: not a result or a moderation")
        return
    size = day_sizes.get(str(leaf.get("day")))
    if leaf["kind"] == "result" and size is not None and index >= size:
        report.problems.append(f"leaf {index}: a result of {leaf['day']} outside that day's head")


async def audit(
    http: HttpApi,
    seen: Mapping[str, Mapping[str, Any]] | None = None,
    progress: Callable[[str], None] | None = None,
) -> AuditReport:
    """The whole log: heads, signatures, consistency, leaves (``seen``: heads from earlier audits)."""
    report = AuditReport(public_key=str((await get(http, "/api/log/key"))["public_key"]))
    report.heads = await all_heads(http)
    if progress is not None:
        progress(f"{len(report.heads)} heads")
    check_heads(report, report.heads, seen or {})
    await check_consistency(http, report, report.heads)
    await check_leaves(http, report, report.heads)
    return report
