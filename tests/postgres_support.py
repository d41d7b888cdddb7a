"""A throwaway PostgreSQL server on 127.0.0.1 (Debian's binaries), owned by the test that starts it."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def postgres_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    return Path(found[-1]).parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Yield a postgresql:// URL; initdb + postgres in a temp dir, stopped by PID at exit.

    PostgreSQL refuses to run as root, so as root the server runs as `nobody`.
    """
    bin_dir = postgres_bin()
    assert bin_dir is not None, "PostgreSQL is not installed (.ci/run installs Debian's postgresql)"
    as_root = os.geteuid() == 0
    user = "nobody" if as_root else pwd.getpwuid(os.geteuid()).pw_name
    # Not under pytest's tmp_path: that is private to root, and the server user must reach it.
    base = Path(tempfile.mkdtemp(prefix="liger-pg-"))
    data = base / "data"
    if as_root:
        os.chmod(base, 0o755)
        shutil.chown(base, user)
    run_as = {"user": user} if as_root else {}
    subprocess.run(
        [str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
        check=True,
        capture_output=True,
        **run_as,
    )
    port = free_port()
    server = subprocess.Popen(
        [
            str(bin_dir / "postgres"),
            "-D",
            str(data),
            "-p",
            str(port),
            "-k",
            str(base),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            "fsync=off",
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(base / "server.log", "wb"),
        start_new_session=True,
        **run_as,
    )
    try:
        deadline = time.monotonic() + 60
        while (
            subprocess.run(
                [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)], capture_output=True
            ).returncode
            != 0
        ):
            assert server.poll() is None, (base / "server.log").read_text()
            assert time.monotonic() < deadline, "PostgreSQL did not start within 60 s"
            time.sleep(0.2)
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/postgres"
    finally:
        server.send_signal(signal.SIGINT)  # fast shutdown: ends sessions, checkpoints, exits
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(base, ignore_errors=True)
