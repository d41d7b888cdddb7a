"""`make run` ends with os._exit to skip the interpreter's teardown: what a normal exit guarantees
must still happen (exit code, atexit handlers, threads finished, stdio flushed)."""

import subprocess
import sys
import textwrap

from tests.conftest import PROJECT


def test_exit_without_teardown_keeps_what_a_normal_exit_does(tmp_path):
    code = textwrap.dedent(
        f"""
        import atexit, pathlib, sys, threading, time
        from pipeline.cli.run import exit_without_teardown

        out = pathlib.Path({str(tmp_path)!r})
        atexit.register(lambda: (out / "atexit").write_text("ran"))

        def late():
            time.sleep(0.5)
            (out / "thread").write_text("done")

        threading.Thread(target=late).start()
        sys.stdout.write("buffered, no newline")
        sys.stderr.write("err, no newline")
        exit_without_teardown(3)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3
    assert done.stdout == "buffered, no newline"
    assert done.stderr == "err, no newline"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "thread").read_text() == "done"
