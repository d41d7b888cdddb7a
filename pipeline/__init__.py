"""Liger benchmark warehouse. `pipeline.connect()` opens it from Python (see core/reader.py)."""


def connect(*args, **kwargs):
    """Open the warehouse read-only (see pipeline.core.reader.connect). Imported on call: the
    readers and Dagster's code location must not pay for it at import."""
    from pipeline.core.reader import connect as _connect

    return _connect(*args, **kwargs)


__all__ = ["connect"]
