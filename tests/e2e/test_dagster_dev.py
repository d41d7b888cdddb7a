"""`make dev` really starts `dg dev`, which binds to loopback only and serves the lineage; stopped by process group."""

import ipaddress
import json
import os
import shlex
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from tests.conftest import PROJECT
from tests.fixtures.procs import kill_tree


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _graphql(port: int, query: str) -> dict:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def make_dev_command(port: int) -> list[str]:
    """The command `make dev` runs (from `make -n`), on a free port instead of 3000."""
    out = subprocess.run(["make", "-n", "dev"], cwd=PROJECT, capture_output=True, text=True, check=True).stdout
    argv = shlex.split(next(line for line in out.splitlines() if "dg dev" in line))
    i = argv.index("--port")
    return [*argv[: i + 1], str(port), *argv[i + 2 :]]


def listening_addresses(port: int) -> set[str]:
    """Local addresses of the LISTEN sockets on ``port``, read from the kernel's socket tables."""
    found = set()
    for table, size in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            local, _, state = line.split()[1:4]
            addr_hex, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:  # 0A = LISTEN
                continue
            # the kernel prints each 32-bit word in host (little-endian) order
            raw = b"".join(bytes.fromhex(addr_hex[i : i + 8])[::-1] for i in range(0, len(addr_hex), 8))
            found.add(str(ipaddress.ip_address(raw[:size])))
    return found


def other_addresses() -> set[str]:
    """This machine's IPv4 addresses that are not loopback (possibly none in a sandbox)."""
    addrs = {ip for *_, (ip, *_) in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:  # the address of the default route's interface; a UDP connect sends nothing
            s.connect(("192.0.2.1", 9))
            addrs.add(s.getsockname()[0])
        except OSError:
            pass
    return {a for a in addrs if not ipaddress.ip_address(a).is_loopback and a != "0.0.0.0"}


def test_listening_addresses_reads_the_kernel_tables():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert listening_addresses(s.getsockname()[1]) == {"127.0.0.1"}
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        assert listening_addresses(s.getsockname()[1]) == {"0.0.0.0"}


def test_make_dev_serves_the_asset_graph_on_loopback_only(tmp_path):
    port = _free_port()
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((PROJECT / "config" / "dagster.yaml").read_text())
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "LIGER_WAREHOUSE": str(tmp_path / "warehouse"),
        "DAGSTER_DISABLE_TELEMETRY": "1",
    }
    # Own process group: a background `dagster dev` ignores SIGTERM sent to the parent alone.
    proc = subprocess.Popen(
        make_dev_command(port),
        cwd=PROJECT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600  # generous: the machine may be loaded
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
        assert listening_addresses(port) == {"127.0.0.1"}
        for addr in other_addresses():  # and nothing answers on the machine's other addresses
            with socket.socket() as s:
                s.settimeout(2)
                assert s.connect_ex((addr, port)) != 0, addr
    finally:
        kill_tree(proc)  # dagster dev, its webserver, daemon and `dagster api grpc` code server
