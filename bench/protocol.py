"""Request validation: the compiled table (what the server runs) against a general JSON Schema validator.

Both check the same published schema (tests/server/test_protocol_schema.py
shows they agree); this measures what each costs per message, over a mix of
well-formed requests and refused ones. Prints one JSON line.

    python -m bench.protocol [--messages N]
"""

from __future__ import annotations

import argparse
import copy
import json
import time
from typing import Any

from jsonschema import Draft7Validator

from server.edge.protocol import SCHEMA_PATH, validate
from server.errors import ProtocolError

MIX: list[dict[str, Any]] = [
    {"type": "act", "id": 7, "game_id": "g_8d2e0f1a3b", "seq": 12, "action": {"type": "draw"}},
    {
        "type": "act",
        "id": 8,
        "game_id": "g_8d2e0f1a3b",
        "seq": 13,
        "action": {"type": "touch", "at": "waste"},
    },
    {"type": "ping", "id": "p"},
    {"type": "new_game", "id": 1, "game": "SH", "variant": "C2"},
    {"type": "watch", "game_id": "g_1"},
    {"type": "act", "game_id": "g_1", "seq": -1, "action": {}},  # refused: seq
    {"type": "subscribe_leaderboard", "code": "HH1-N-AAAAAAM", "limit": 500},  # refused: limit
    {"type": "race_start", "race_id": "r_1", "countdown_s": 5, "extra": 1},  # refused: unknown field
]


def schema_validators() -> dict[str, Draft7Validator]:
    document = json.loads(SCHEMA_PATH.read_text())
    found: dict[str, Draft7Validator] = {}
    for ref in document["channels"]["/ws"]["publish"]["message"]["oneOf"]:
        name = ref["$ref"].rsplit("/", 1)[1]
        kind = document["components"]["messages"][name]["payload"]["properties"]["type"]["const"]
        schema = {
            "$ref": f"#/components/messages/{name}/payload",
            "components": copy.deepcopy(document["components"]),
        }
        found[kind] = Draft7Validator(schema)
    return found


def per_message_us(check: Any, count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        check(MIX[i % len(MIX)])
    return (time.perf_counter() - started) / count * 1e6


def table(message: dict[str, Any]) -> bool:
    try:
        validate(message)
    except ProtocolError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=200_000)
    args = parser.parse_args()
    by_schema = schema_validators()

    def schema(message: dict[str, Any]) -> bool:
        return bool(by_schema[message["type"]].is_valid(message))

    if [table(m) for m in MIX] != [schema(m) for m in MIX]:
        raise SystemExit("the two validators disagree on the mix: see tests/server/test_protocol_schema.py")
    table_us = per_message_us(table, args.messages)
    schema_us = per_message_us(schema, max(1, args.messages // 10))
    result = {
        "bench": "protocol",
        "messages": args.messages,
        "table_us_per_message": round(table_us, 3),
        "jsonschema_us_per_message": round(schema_us, 3),
        "speedup": round(schema_us / table_us, 1),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
