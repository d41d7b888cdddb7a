"""Liger benchmark warehouse. `pipeline.connect()` opens it from Python (see serve/connect.py)."""


def connect(*args, **kwargs):
    """Open the warehouse read-only (see pipeline.serve.connect.connect). Imported on call: the
    readers and Dagster's code location must not pay for it at import."""
    from pipeline.serve.connect import connect as _connect

    return _connect(*args, **kwargs)


__all__ = ["connect"]
