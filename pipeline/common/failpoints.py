"""Named pause points, so crash tests can kill a real run at an exact place.

``LIGER_FAILPOINT=<name>:<seconds>`` makes the run sleep that long when it reaches ``<name>``
(and write ``<name>`` to ``LIGER_FAILPOINT_FILE`` first, so the test knows it got there). Unset,
a pause point costs one dictionary lookup.
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
    if settings.failpoint_file:
        settings.failpoint_file.write_text(name)
    time.sleep(float(seconds))
