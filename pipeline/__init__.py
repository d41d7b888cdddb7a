"""Liger benchmark warehouse. `pipeline.connect()` opens it from Python (see serve/connect.py)."""


def connect(*args, **kwargs):
    """Open the warehouse read-only (see pipeline.serve.connect.connect). Imported on call: the
    readers and Dagster's code location must not pay for it at import."""
    from pipeline.serve.connect import connect as _connect

    return _connect(*args, **kwargs)


def compare(from_: str, to: str, gpu: str | None = None, **kwargs) -> list[dict]:
    """The sweeps that moved between two releases, versions or commits (see pipeline.regress.judge)."""
    from pipeline.regress.judge import compare as _compare

    kwargs.setdefault("connect", connect)
    return _compare(from_, to, gpu, **kwargs)


__all__ = ["connect", "compare"]
