"""`dagster dev` really starts, binds to 127.0.0.1 only, and serves the lineage; stopped by process group."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

from .conftest import PROJECT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _graphql(port: int, query: str) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def test_dagster_dev_serves_the_asset_graph_on_localhost(tmp_path):
    port = _free_port()
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((PROJECT / "config" / "dagster.yaml").read_text())
    env = {**os.environ, "DAGSTER_HOME": str(home), "LIGER_WAREHOUSE": str(tmp_path / "warehouse"),
           "DAGSTER_DISABLE_TELEMETRY": "1"}
    # Own process group: a background `dagster dev` ignores SIGTERM sent to the parent alone.
    proc = subprocess.Popen([str(PROJECT / ".venv" / "bin" / "dg"), "dev", "--host", "127.0.0.1", "--port", str(port)],
                            cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        keys = None
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                data = _graphql(port, "{ assetNodes { assetKey { path } } }")
                keys = {"/".join(n["assetKey"]["path"]) for n in data["data"]["assetNodes"]}
                if keys:
                    break
            except (OSError, KeyError, TypeError, ValueError):
                time.sleep(1)
        assert keys, "dagster dev did not serve the asset graph"
        assert {"staged_sources", "fact_measurement", "liger_duckdb", "regression_report"} <= keys
        lan = [a for a in {ip for *_, (ip, *_) in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
               if not a.startswith("127.")]
        for addr in lan:  # nothing answers on the machine's other addresses
            with socket.socket() as s:
                s.settimeout(2)
                assert s.connect_ex((addr, port)) != 0
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
