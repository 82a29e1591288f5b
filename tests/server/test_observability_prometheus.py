"""deploy/prometheus/alerts.yml against Debian's real promtool and prometheus, and a real
Prometheus scraping a live server's metrics listener; deploy/grafana/solitaire.json's queries
name only metrics the server exports."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from server.config import Settings
from server.metrics import BUILD
from tests import processes
from tests.support import ONE_ADDRESS, Client, free_port, running_server

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "solitaire.json"
DEADLINE_S = 90


def tool(name: str) -> str:
    found = shutil.which(name)
    assert found, f"{name} is required (Debian's prometheus package; .ci/run installs it)"
    return found


def test_the_alert_rules_pass_promtool() -> None:
    done = processes.run([tool("promtool"), "check", "rules", str(RULES)], 60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 5 rules found" in done.stdout


def test_promtool_fails_a_broken_rule(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(RULES.read_text().replace("== 0", "== ", 1))
    assert processes.run([tool("promtool"), "check", "rules", str(broken)], 60).returncode != 0


def query(base: str, expr: str) -> list[dict[str, Any]]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
    with urllib.request.urlopen(url, timeout=5) as response:
        answer = json.loads(response.read())
    assert answer["status"] == "success", answer
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def until(check: Any, deadline: float, what: str) -> Any:
    """Poll ``check`` until it returns something truthy, before ``deadline`` (monotonic)."""
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except OSError as exc:  # not listening yet
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.2)
    raise AssertionError(f"{what}: not in time; last {last!r}")


def served_metric_names(text: str) -> set[str]:
    return {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}


async def test_a_real_prometheus_scrapes_a_live_server_and_evaluates_the_rules(tmp_path: Path) -> None:
    listen = f"127.0.0.1:{free_port()}"
    url = f"sqlite+aiosqlite:///{tmp_path / 'p.db'}"
    settings = Settings(database_url=url, secret="t", limits=ONE_ADDRESS, metrics_listen=listen)
    web = f"127.0.0.1:{free_port()}"
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"rule_files:\n  - {RULES}\n"
        f"scrape_configs:\n  - job_name: solitaire\n    static_configs:\n      - targets: ['{listen}']\n"
    )
    argv = [
        tool("prometheus"),
        f"--config.file={config}",
        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
        f"--web.listen-address={web}",
    ]
    base = f"http://{web}"
    with running_server(settings) as server:
        client = await Client.connect(server)  # one open connection to see
        try:
            with (
                (tmp_path / "prometheus.log").open("wb") as log,
                processes.started(argv, stdout=log, stderr=log) as proc,
            ):
                deadline = time.monotonic() + DEADLINE_S

                def scraped() -> list[dict[str, Any]]:
                    assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
                    return [r for r in query(base, 'up{job="solitaire"}') if r["value"][1] == "1"]

                await asyncio.to_thread(until, scraped, deadline, "the server scraped")
                build = await asyncio.to_thread(
                    until, lambda: query(base, "solitaire_build_info"), deadline, "build info"
                )
                assert build[0]["metric"]["revision"] == BUILD.revision
                assert build[0]["metric"]["version"] == BUILD.version
                open_now = await asyncio.to_thread(
                    until, lambda: query(base, "solitaire_connections >= 1"), deadline, "connections"
                )
                assert float(open_now[0]["value"][1]) >= 1

                def rules_evaluated() -> list[dict[str, Any]]:
                    with urllib.request.urlopen(f"{base}/api/v1/rules", timeout=5) as response:
                        groups = json.loads(response.read())["data"]["groups"]
                    rules = [rule for group in groups for rule in group["rules"]]
                    done = len(rules) == 5 and all(
                        r["health"] == "ok" and r["lastEvaluation"][:4] != "0001" for r in rules
                    )
                    return rules if done else []

                rules = await asyncio.to_thread(until, rules_evaluated, deadline, "rules evaluated")
                assert {rule["name"] for rule in rules} >= {"SolitaireInstanceDown", "SolitaireRedisDegraded"}
                assert all(rule["state"] == "inactive" for rule in rules), rules  # a healthy server
                processes.end(proc)
        finally:
            await client.close()


def test_the_dashboard_queries_only_metrics_the_server_exports(tmp_path: Path) -> None:
    from prometheus_client import generate_latest

    import server.metrics  # noqa: F401  (every metric registered)

    exported = served_metric_names(generate_latest().decode())
    exported |= {f"{name}_{suffix}" for name in exported for suffix in ("bucket", "count", "sum", "total")}
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    named = {name for expr in exprs for name in re.findall(r"\b(solitaire_[a-z_]+)", expr)}
    assert named and named <= exported, named - exported
    for name in re.findall(r"\b(solitaire_[a-z_]+)", RULES.read_text()):
        assert name in exported, name
