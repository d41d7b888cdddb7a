"""The settings tree: every variable validated before any work, a bad one named in the message."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from pipeline import config


def test_defaults_are_the_projects_own_folders(monkeypatch):
    for var in ("LIGER_WAREHOUSE", "LIGER_DATA_RAW", "LIGER_LOCAL_DIR"):
        monkeypatch.delenv(var, raising=False)
    s = config.load()
    assert Path(s.warehouse) == config.PROJECT_ROOT / "warehouse"
    assert s.local == config.PROJECT_ROOT / "warehouse"
    assert s.data_raw == config.PROJECT_ROOT / "data_raw"


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("LIGER_LOCK_TIMEOUT_S", "abc"),
        ("LIGER_LOCK_TIMEOUT_S", "0"),
        ("LIGER_RETENTION_HOURS", "-5"),
        ("LIGER_COMPACT_MIN_FILES", "1"),
        ("LIGER_WAREHOUSE", "gs://bucket/x"),
        ("LIGER_WAREHOUSE", "s3://"),
        ("LIGER_WAREHOUSE", "file://otherhost/tmp/x"),
    ],
)
def test_a_bad_value_names_its_variable(monkeypatch, var, value):
    monkeypatch.setenv(var, value)
    with pytest.raises(config.SettingsError, match=var):
        config.load()


def test_file_uri_is_the_local_folder_it_names(monkeypatch, tmp_path):
    monkeypatch.setenv("LIGER_WAREHOUSE", f"file://{tmp_path}/wh")
    s = config.load()
    assert s.warehouse == str(tmp_path / "wh") and not s.is_remote and s.local == tmp_path / "wh"


def test_s3_warehouse_keeps_local_files_in_local_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("LIGER_WAREHOUSE", "s3://bucket/prefix/")
    monkeypatch.setenv("LIGER_LOCAL_DIR", str(tmp_path))
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
    s = config.load()
    assert s.warehouse == "s3://bucket/prefix" and s.is_remote and s.local == tmp_path
    opts = config.object_store().delta_options()
    assert opts["AWS_ENDPOINT_URL"] == "http://127.0.0.1:1" and opts["conditional_put"] == "etag"


def test_settings_are_read_again_when_the_environment_or_folder_changes(monkeypatch, tmp_path):
    monkeypatch.setenv("LIGER_LOCK_TIMEOUT_S", "5")
    first = config.load()
    assert config.load() is first  # nothing changed: the same read
    with pytest.raises(ValidationError):  # shared by every caller, so nobody may change it
        first.lock_timeout_s = 7.0
    monkeypatch.setenv("LIGER_LOCK_TIMEOUT_S", "6")
    assert config.load().lock_timeout_s == 6.0
    monkeypatch.setenv("liger_retention_hours", "3")  # matched without regard to case, as pydantic-settings does
    assert config.load().retention_hours == 3.0
    monkeypatch.delenv("liger_retention_hours")
    monkeypatch.setenv("LIGER_WAREHOUSE", "relative_wh")
    monkeypatch.chdir(tmp_path)
    assert config.load().warehouse == str(tmp_path / "relative_wh")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert config.load().warehouse == str(tmp_path / "elsewhere" / "relative_wh")
    monkeypatch.setenv("LIGER_LOCK_TIMEOUT_S", "abc")
    with pytest.raises(config.SettingsError, match="LIGER_LOCK_TIMEOUT_S"):
        config.load()
