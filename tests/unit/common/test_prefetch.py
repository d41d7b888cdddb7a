import sys
import uuid

from pipeline.common import prefetch


def test_a_missing_module_does_not_stop_the_next_from_loading(tmp_path, monkeypatch):
    # `make run`'s install lacks pandas: a missing module early in the list once kept ruptures
    # (scipy, about a second) from loading, and the DuckDB build waited for it.
    name = f"prefetch_probe_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = (f"no_such_module_{uuid.uuid4().hex}", name)

    thread = prefetch.start(modules)
    assert thread is not None
    thread.join(timeout=60)

    assert not thread.is_alive()
    assert sys.modules[name].LOADED
    assert prefetch.start(modules) is None  # once per process
