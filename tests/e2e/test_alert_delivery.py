"""Alert delivery against real receivers on 127.0.0.1 and real processes (issue 53): one warehouse of the
shipped gh-pages runs up to 4444fdf, built once by Dagster; each test starts from a state with nothing
delivered.

* a redirect (301, 302, 303, 307, 308) is not a delivery: nothing is sent as a GET, every alert stays
  undelivered and the next run delivers each once;
* a receiver that never answers, or trickles its answer a byte at a time, holds delivery no longer than
  LIGER_ALERT_DEADLINE_S (what is left is undelivered, then delivered once by the next run);
* `make ack` while a run delivers (the receiver holds every POST), in both orders of arrival: the
  acknowledgement stays and no status is sent twice.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from pipeline.cli.ack import refresh_duckdb_state
from pipeline.outputs.alerts.notify import sync_and_notify
from pipeline.regress.alert_state import read_state, state_uri
from pipeline.store.warehouse import Warehouse
from tests.e2e.test_alerts import _build, _gh_pages_upto, _open
from tests.fixtures.webhook import Receiver

REPO = Path(__file__).resolve().parents[2]
NOTIFY = (
    "from pipeline.outputs.alerts.notify import sync_and_notify\n"
    "from pipeline.config import load\n"
    "from pipeline.store.warehouse import Warehouse\n"
    "s = load()\n"
    "wh = Warehouse(s.warehouse, s.local)\n"
    "done = sync_and_notify(wh.duckdb_path, wh.root_uri, s.local, s.alert_webhook, s.alert_timeout_s,\n"
    "                       deadline_s=s.alert_deadline_s)\n"
    "print(done.summary())\n"
)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    for name in ("LIGER_ALERT_WEBHOOK", "LIGER_ALERT_DEADLINE_S", "LIGER_ALERT_TIMEOUT_S"):
        os.environ.pop(name, None)
    tmp = tmp_path_factory.mktemp("delivery")
    wh = tmp / "wh"
    _build(_gh_pages_upto(tmp / "data_raw", "4444fdf"), wh)
    return wh


@pytest.fixture
def wh(built: Path) -> Path:
    """The warehouse with no alert ever delivered nor acknowledged."""
    shutil.rmtree(state_uri(str(built)), ignore_errors=True)
    shutil.rmtree(built / "alerts", ignore_errors=True)
    refresh_duckdb_state(Warehouse(str(built)))
    return built


def _alert_ids(wh: Path) -> list[str]:
    with _open(wh) as con:
        return [r[0] for r in con.execute("select alert_id from alerts order by alert_id").fetchall()]


def _notify(wh: Path, url: str, timeout: float = 10.0, deadline_s: float = 60.0):
    return sync_and_notify(wh / "liger.duckdb", str(wh), wh, url, timeout, deadline_s=deadline_s)


def _delivered(wh: Path) -> dict[str, str | None]:
    return {r["alert_id"]: r["notified_status"] for r in read_state(str(wh)).to_pylist()}


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_not_a_delivery_and_the_next_run_delivers_once(wh, status):
    ids = _alert_ids(wh)
    assert len(ids) >= 2
    with Receiver() as hook:
        hook.status, hook.location = status, f"{hook.base}/elsewhere"
        done = _notify(wh, hook.url)
        assert sorted(done.failed) == ids and not done.sent
        assert all(f"HTTP {status} redirect" in e and "/elsewhere" in e for e in done.failed.values())
        # one POST per alert (a redirect is final for the run), none re-sent as a GET, no text taken
        assert hook.requests == [("POST", "/hook")] * len(ids) and hook.take() == []
        assert set(_delivered(wh).values()) == {None}
        hook.status, hook.location = 200, ""
        done = _notify(wh, hook.url)
        texts = hook.take()
    assert sorted(s.split(":")[0] for s in done.sent) == ids
    assert sorted(t.split()[2] for t in texts) == ids  # "Liger alert <id> [status]: …", each once
    assert None not in _delivered(wh).values()


@pytest.mark.parametrize("behaviour", ["never answers", "trickles"])
def test_a_receiver_that_holds_the_connection_is_cut_at_the_run_deadline(wh, behaviour):
    ids = _alert_ids(wh)
    with Receiver() as hook:
        if behaviour == "never answers":
            hook.hold = threading.Event()
        else:
            hook.trickle_s = 0.2
        started = time.monotonic()
        # unbounded, this is alerts x 3 attempts x 5 s (a trickle: for ever); the deadline is 2 s
        done = _notify(wh, hook.url, timeout=5.0, deadline_s=2.0)
        elapsed = time.monotonic() - started
    assert elapsed < 2.0 + 15.0, elapsed  # the deadline plus a wide margin for a loaded machine
    assert elapsed < len(ids) * 3 * 5.0 / 2
    assert sorted(done.failed) == ids and not done.sent
    assert any("LIGER_ALERT_DEADLINE_S=2" in e for e in done.failed.values())
    assert any("no complete answer" in e for e in done.failed.values())
    with Receiver() as hook:
        _notify(wh, hook.url)
        assert sorted(t.split()[2] for t in hook.take()) == ids


def _start(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen, list[str]]:
    """A process in its own group; its stderr lines collected as they come."""
    proc = subprocess.Popen(args, cwd=REPO, env=env, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
    return proc, lines


def _wait_for(lines: list[str], text: str, proc: subprocess.Popen, limit_s: float = 300.0) -> None:
    end = time.monotonic() + limit_s
    while not any(text in line for line in lines):
        assert proc.poll() is None, f"ended before {text!r}: {lines}"
        assert time.monotonic() < end, f"no {text!r} after {limit_s} s: {lines}"
        time.sleep(0.05)


@pytest.mark.parametrize("first", ["run", "ack"])
def test_ack_during_a_run_keeps_the_ack_and_sends_no_status_twice(wh, first):
    ids = _alert_ids(wh)
    acked, note = ids[0], "host swapped <!channel> & see https://example.com @octocat"
    with Receiver() as hook:
        hook.hold = threading.Event()
        env = {**os.environ, "LIGER_WAREHOUSE": str(wh), "LIGER_ALERT_WEBHOOK": hook.url, "PYTHONPATH": str(REPO),
               "LIGER_ALERT_TIMEOUT_S": "300", "LIGER_ALERT_DEADLINE_S": "600", "LIGER_GIT_REPO": ""}  # fmt: skip
        run_args = [sys.executable, "-c", NOTIFY]
        ack_args = [sys.executable, "-m", "pipeline.cli.ack", acked, note]
        a, a_err = _start(run_args if first == "run" else ack_args, env)
        while not hook.arrived.wait(0.1):  # the first holds the delivery lock, its POST held
            assert a.poll() is None, a_err
        b, b_err = _start(ack_args if first == "run" else run_args, env)
        _wait_for(b_err, "waiting for the alert state lock", b)
        hook.hold.set()
        for proc, err in ((a, a_err), (b, b_err)):
            assert proc.wait(timeout=600) == 0, err
        texts = hook.take()
    sent = Counter((t.split()[2], t.split()[3].rstrip(":")) for t in texts)
    assert all(n == 1 for n in sent.values()), sent  # no status twice
    assert sent[(acked, "[acknowledged]")] == 1
    assert {i for i, _ in sent} == set(ids)  # every alert's status delivered
    state = {r["alert_id"]: r for r in read_state(str(wh)).to_pylist()}
    assert state[acked]["ack_note"] == note and state[acked]["notified_status"] == "acknowledged"
    with _open(wh) as con:
        row = con.execute("select status, note from alerts where alert_id = $a", {"a": acked}).fetchone()
    assert row == ("acknowledged", note)
    # the Slack text escapes what would ping (`<!channel>`) and the page neither links nor mentions
    text = next(t for t in texts if acked in t and "[acknowledged]" in t)
    assert "&lt;!channel&gt; &amp;" in text and "<!channel>" not in text
    page = (wh / "alerts" / f"{acked}.md").read_text()
    assert page.count("host swapped") == 1 and "https://" not in page and "@octocat" not in page
