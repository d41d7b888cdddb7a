"""One webhook POST with a deadline that holds whatever the receiver does.

A read timeout bounds each read, not a delivery: a receiver that trickles a byte a second keeps a
request alive for ever. So the connection is opened here (``http.client``, whose socket we hold),
the request and the answer are read in a helper thread, and at the deadline the socket is shut
down, which ends any read at once. A redirect is not followed: a 3xx is not a delivery (requests'
and browsers' rule re-sends a redirected POST as a GET without its body, so the text reached no
one); it is counted as failed, names where it points, and is tried again by the next run.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from urllib.parse import urlsplit

_ANSWER_BYTES = 200  # of an error answer kept in delivery_error


class Deadline:
    """A point in time (monotonic) that every attempt and every wait of one run shares."""

    def __init__(self, seconds: float):
        self.at = time.monotonic() + seconds
        self.seconds = seconds

    def left(self) -> float:
        return max(self.at - time.monotonic(), 0.0)


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return cls(parts.hostname, parts.port, timeout=timeout), path


def _exchange(conn: http.client.HTTPConnection, path: str, body: bytes, result: dict) -> None:
    try:
        conn.connect()
        conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        result["status"] = response.status
        result["location"] = response.getheader("Location", "")
        # a 2xx is a delivery: its body (which a receiver may trickle) is not waited for
        ok = 200 <= response.status < 300
        result["body"] = "" if ok else response.read(_ANSWER_BYTES).decode("utf-8", errors="replace")
    except (OSError, http.client.HTTPException) as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"


def post_once(url: str, text: str, timeout: float) -> str | None:
    """POST ``{"text": text}`` within ``timeout`` seconds in all; None when the server took it (2xx)."""
    body = json.dumps({"text": text}).encode()
    conn, path = _connection(url, timeout)
    result: dict = {}
    worker = threading.Thread(target=_exchange, args=(conn, path, body, result), name="liger-webhook", daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        sock = conn.sock
        try:  # ends the helper's read at once; a helper still resolving the name is left to end on its own
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        worker.join(1.0)
        if not worker.is_alive():
            conn.close()
        return f"no complete answer within {timeout:.1f} s (after {time.monotonic() - started:.1f} s)"
    conn.close()
    if "error" in result:
        return result["error"]
    status = result["status"]
    if 200 <= status < 300:
        return None
    if 300 <= status < 400:
        return f"HTTP {status} redirect to {result['location'][:200]!r}: not followed (set the final URL)"
    return f"HTTP {status}: {result['body']}"


def post(
    url: str, text: str, timeout: float, deadline: Deadline, attempts: int = 3, backoff_s: float = 0.5
) -> str | None:
    """Up to ``attempts`` POSTs of ``text``, each within ``timeout`` and all within ``deadline``; None when
    one was taken, else the last error. A redirect is final for this run (trying again changes nothing)."""
    error = "the run's delivery deadline had passed"
    for attempt in range(attempts):
        left = deadline.left()
        if left <= 0:
            return f"{error}; not sent (LIGER_ALERT_DEADLINE_S={deadline.seconds:g})"
        error = post_once(url, text, min(timeout, left))
        if error is None or error.startswith("HTTP 3"):
            return error
        if attempt + 1 < attempts:
            time.sleep(min(backoff_s * (attempt + 1), deadline.left()))
    return error
