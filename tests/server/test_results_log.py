"""The results log's tree against a verifier written here from RFC 9162's pseudo-code.

``mth``, ``path`` and ``proof`` are sections 2.1.1, 2.1.3.1 and 2.1.4.1 over
plain lists of leaves; ``verify_inclusion`` and ``verify_consistency`` are the
verification algorithms of 2.1.3.2 and 2.1.4.2, step by step. The log's proofs
come from the nodes stored in a real database, on both backends.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator

import pytest

from client.results_log import consistency_ok, inclusion_ok
from server.features.results_log import model
from server.features.results_log.model import consistency_ranges, inclusion_ranges, keys_of, range_hash
from server.features.results_log.service import days_to_sign
from server.rules.days import day_start_ms
from server.storage import results_log as store
from server.storage.db import Database, migrate
from server.storage.results_log import NewLeaf

# -- RFC 9162, as written ---------------------------------------------------------------


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def k_of(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(d: list[bytes]) -> bytes:
    if not d:
        return sha(b"")
    if len(d) == 1:
        return sha(b"\x00" + d[0])
    k = k_of(len(d))
    return sha(b"\x01" + mth(d[:k]) + mth(d[k:]))


def path(m: int, d: list[bytes]) -> list[bytes]:
    if len(d) == 1:
        return []
    k = k_of(len(d))
    if m < k:
        return [*path(m, d[:k]), mth(d[k:])]
    return [*path(m - k, d[k:]), mth(d[:k])]


def subproof(m: int, d: list[bytes], b: bool) -> list[bytes]:
    n = len(d)
    if m == n:
        return [] if b else [mth(d)]
    k = k_of(n)
    if m <= k:
        return [*subproof(m, d[:k], b), mth(d[k:])]
    return [*subproof(m - k, d[k:], False), mth(d[:k])]


def proof(m: int, d: list[bytes]) -> list[bytes]:
    return subproof(m, d, True)


def verify_inclusion(
    leaf_index: int, tree_size: int, leaf: bytes, inclusion_path: list[bytes], root: bytes
) -> bool:
    """RFC 9162 2.1.3.2."""
    if leaf_index >= tree_size:
        return False
    fn, sn = leaf_index, tree_size - 1
    r = sha(b"\x00" + leaf)
    for p in inclusion_path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = sha(b"\x01" + p + r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = sha(b"\x01" + r + p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    first: int, second: int, first_hash: bytes, second_hash: bytes, c: list[bytes]
) -> bool:
    """RFC 9162 2.1.4.2."""
    if not c:
        return False
    if first & (first - 1) == 0:  # an exact power of two: prepend first_hash
        c = [first_hash, *c]
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = c[0]
    for p in c[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = sha(b"\x01" + p + fr)
            sr = sha(b"\x01" + p + sr)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = sha(b"\x01" + sr + p)
        fn >>= 1
        sn >>= 1
    return fr == first_hash and sr == second_hash and sn == 0


# -- the published vectors (docs/results-log.md) ---------------------------------------------


def vector_leaves() -> list[bytes]:
    return [
        model.result_leaf(
            "2026-12-01",
            "HH1-N",
            "HH1-N-AAAAAC5",
            f"g_vector{i}",
            f"p_player{i}",
            "won" if i % 2 == 0 else "resigned",
            100 + i,
            50 + i,
            60000 + i,
            1764600000000 + i,
        )
        for i in range(7)
    ]


LEAF_0 = (
    '{"code":"HH1-N-AAAAAC5","day":"2026-12-01","family":"HH1-N","finished_ms":1764600000000,'
    '"game_id":"g_vector0","kind":"result","moves":50,"player_id":"p_player0","result":"won",'
    '"score":100,"time_ms":60000}'
)
ROOT_7 = "1b0ba93e6024d212a8e933e195d9b0e49922a01720ea16202f04d0d9e562214f"
ROOT_3 = "3d3703c725f648e11b94c459dd36bca2031f283b4bd06f5207a9c324d140a079"
INCLUSION_3_OF_7 = [
    "4be772759687dd37361c9632eee895b453f8c216ebf021e7b8904934ccb20e02",
    "38f01508e4ab529519d747a1c9713e300c50b53e700416ff2a89ffaa5c95ee8b",
    "36ce0907c13235751a85ea45c3882a624c988cd9eb280c1860bc8e7360c95206",
]
CONSISTENCY_3_TO_7 = [
    "4be772759687dd37361c9632eee895b453f8c216ebf021e7b8904934ccb20e02",
    "513b8aefdc7827ce06c85d28c5ced7072b5eb909f25f156d805f6981c48a7f01",
    "38f01508e4ab529519d747a1c9713e300c50b53e700416ff2a89ffaa5c95ee8b",
    "36ce0907c13235751a85ea45c3882a624c988cd9eb280c1860bc8e7360c95206",
]


def test_the_published_vectors_hold_by_the_rfc() -> None:
    leaves = vector_leaves()
    assert leaves[0].decode() == LEAF_0
    nodes = dict(model.extend(0, [model.leaf_hash(leaf) for leaf in leaves], {}))
    assert range_hash(nodes, 0, 7).hex() == mth(leaves).hex() == ROOT_7
    assert range_hash(nodes, 0, 3).hex() == mth(leaves[:3]).hex() == ROOT_3
    inclusion = [range_hash(nodes, a, b).hex() for a, b in inclusion_ranges(3, 7)]
    assert inclusion == [p.hex() for p in path(3, leaves)] == INCLUSION_3_OF_7
    consistency = [range_hash(nodes, a, b).hex() for a, b in consistency_ranges(3, 7)]
    assert consistency == [p.hex() for p in proof(3, leaves)] == CONSISTENCY_3_TO_7
    as_bytes = [bytes.fromhex(p) for p in INCLUSION_3_OF_7]
    assert verify_inclusion(3, 7, leaves[3], as_bytes, bytes.fromhex(ROOT_7))
    assert not verify_inclusion(3, 7, leaves[4], as_bytes, bytes.fromhex(ROOT_7))
    consistent = [bytes.fromhex(p) for p in CONSISTENCY_3_TO_7]
    assert verify_consistency(3, 7, bytes.fromhex(ROOT_3), bytes.fromhex(ROOT_7), consistent)
    assert not verify_consistency(3, 7, bytes.fromhex(ROOT_3), bytes.fromhex(ROOT_7), consistent[::-1])


def test_the_encoding_is_canonical_and_integers_only() -> None:
    assert model.canonical({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()
    with pytest.raises(TypeError):
        model.canonical({"score": 1.5})
    assert model.EMPTY_ROOT.hex() == sha(b"").hex()


def test_days_to_sign_are_the_ended_days_without_a_head() -> None:
    assert days_to_sign(None, None, "2026-12-02") == []
    assert days_to_sign(None, day_start_ms("2026-11-30") + 5, "2026-12-02") == ["2026-11-30", "2026-12-01"]
    assert days_to_sign("2026-11-30", 0, "2026-12-02") == ["2026-12-01"]
    assert days_to_sign("2026-12-01", 0, "2026-12-02") == []


# -- stored: every size up to 64 --------------------------------------------------------------

SIZES = 64


@pytest.fixture(scope="module")
def log_db(database_url: str) -> Iterator[str]:
    asyncio.run(migrate(database_url))
    yield database_url


def leaf_of(i: int) -> bytes:
    return model.moderation_leaf("2026-12-01", "SH1-C4", "ban_player", f"p_{i}", "tested", i)


async def test_every_proof_of_every_tree_up_to_64_leaves(log_db: str) -> None:
    db = Database.open(log_db)
    leaves: list[bytes] = []
    try:
        for i in range(SIZES):  # one append at a time, as results come: the root after each
            async with db.transaction() as tx:
                assert await store.append(tx, [NewLeaf(leaf_of(i), "moderation", "2026-12-01")], i) == i
                size = await store.size(tx)
                root = range_hash(await store.nodes(tx, model.subtrees(0, size)), 0, size)
            leaves.append(leaf_of(i))
            assert root == mth(leaves)
        async with db.read() as tx:
            for n in range(1, SIZES + 1):
                root = mth(leaves[:n])
                for index in range(n):
                    ranges = inclusion_ranges(index, n)
                    nodes = await store.nodes(tx, keys_of(ranges))
                    got = [range_hash(nodes, a, b) for a, b in ranges]
                    assert got == path(index, leaves[:n]), (index, n)
                    assert verify_inclusion(index, n, leaves[index], got, root)
                    assert inclusion_ok(leaves[index], index, n, got, root)
                    assert not inclusion_ok(leaves[index] + b" ", index, n, got, root)
                for m in range(1, n + 1):
                    ranges = consistency_ranges(m, n)
                    nodes = await store.nodes(tx, keys_of(ranges))
                    got = [range_hash(nodes, a, b) for a, b in ranges]
                    assert got == proof(m, leaves[:n]), (m, n)
                    first = mth(leaves[:m])
                    if m < n:
                        assert verify_consistency(m, n, first, root, got), (m, n)
                    assert consistency_ok(m, n, first, root, got), (m, n)
                    assert not consistency_ok(m, n, first, sha(root), got)
    finally:
        await db.dispose()


async def test_two_writers_append_without_a_gap_or_a_repeat(log_db: str) -> None:
    """Two engines (two instances' pools) append at once; the head row orders them."""
    dbs = [Database.open(log_db), Database.open(log_db)]
    try:
        async with dbs[0].read() as tx:
            before = await store.size(tx)

        async def writer(db: Database, name: str) -> None:
            for i in range(40):
                async with db.transaction() as tx:
                    await store.append(
                        tx, [NewLeaf(leaf_of(1000 + i) + name.encode(), "moderation", "2026-12-01")], i
                    )

        await asyncio.gather(writer(dbs[0], "a"), writer(dbs[1], "b"))
        async with dbs[0].read() as tx:
            size = await store.size(tx)
            stored = await store.leaves(tx, 0, size - 1)
            root = range_hash(await store.nodes(tx, model.subtrees(0, size)), 0, size)
        assert size == before + 80
        assert [leaf.index for leaf in stored] == list(range(size))
        assert root == mth([leaf.leaf.encode() for leaf in stored])
    finally:
        for db in dbs:
            await db.dispose()
