"""The shipped front: docker-compose.yml against the Compose Specification's JSON schema, and
deploy/haproxy.cfg as HAProxy itself reads it.

``compose-spec.json`` is the Compose Specification's schema (compose-spec/compose-spec,
``schema/compose-spec.json``, Apache License 2.0), kept here so the test needs no network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.cluster.fleet import HAPROXY_CFG, ROOT

SCHEMA = Path(__file__).with_name("compose-spec.json")


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text()))


def test_the_compose_file_follows_the_compose_specification() -> None:
    schema = json.loads(SCHEMA.read_text())
    schema.pop("$schema")  # draft 7, named by an address the validator does not know by that spelling
    jsonschema.Draft7Validator(schema).validate(compose())


def test_the_compose_file_runs_three_instances_on_postgres_and_redis_behind_the_balancer() -> None:
    services = compose()["services"]
    instances = [name for name in services if name.startswith("server")]
    assert len(instances) == 3
    for name in instances:
        env = services[name]["environment"]
        assert env["SOLITAIRE_REDIS_URL"].startswith("redis://")
        assert env["SOLITAIRE_DATABASE_URL"].startswith("postgresql+asyncpg://")
        assert env["SOLITAIRE_METRICS_LISTEN"].endswith(":9100")  # metrics never on the public port
        assert "ports" not in services[name]
    text = (ROOT / "docker-compose.yml").read_text()
    assert "SOLITAIRE_SECRET" not in text  # no shipped secret
    assert services["balancer"]["ports"] == ["8000:8000"]


def test_haproxy_accepts_the_shipped_configuration() -> None:
    if shutil.which("haproxy") is None:
        if os.environ.get("CI"):
            pytest.fail("haproxy is required (.ci/run installs it)")
        pytest.skip("haproxy is not installed")
    env = {**os.environ, "SOLITAIRE_FRONT": "127.0.0.1:18000"}
    for i in (1, 2, 3):
        env[f"SOLITAIRE_BACKEND_{i}"] = f"127.0.0.1:1800{i}"
    done = subprocess.run(["haproxy", "-c", "-f", str(HAPROXY_CFG)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
