"""Named pause points, so crash tests can kill a real run at an exact place.

``LIGER_FAILPOINT=<name>:<seconds>`` makes the run sleep that long when it reaches ``<name>``
(and write ``<name>`` to ``LIGER_FAILPOINT_FILE`` first, so the test knows it got there). A test
that removes that file lets the run go on at once: it resumes the run on an event (its own work
done meanwhile), not after a guessed time. Unset, a pause point costs one dictionary lookup.
"""

from __future__ import annotations

import time

from pipeline.config import load


def pause(name: str) -> None:
    settings = load()
    spec = settings.failpoint
    if not spec:
        return
    point, _, seconds = spec.rpartition(":")
    if point != name:
        return
    deadline = time.monotonic() + float(seconds)
    marker = settings.failpoint_file
    if marker:
        marker.write_text(name)
    while time.monotonic() < deadline and (marker is None or marker.exists()):
        time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
