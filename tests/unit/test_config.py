"""The settings tree: every variable validated before any work, a bad one named in the message."""

from __future__ import annotations

import ast
import re
import sys
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


# The standard-library GPU side (docs/bisect.md): it runs where the warehouse's packages are not, so it
# reads its few variables itself. Nothing else under pipeline/ may.
GPU_SIDE = {"pipeline/bisect/runner.py", "pipeline/bisect/harness.py", "pipeline/bisect/harness_shim.py"}
UPSTREAM = {"utils"}  # the shim imports upstream's benchmark/scripts/utils.py, in the harness's own folder
ENV_NAMES = {"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"}


def _env_reads(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in ENV_NAMES:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [f"{node.lineno}: from os import {a.name}" for a in node.names if a.name in ENV_NAMES]
        elif isinstance(node, ast.Name) and node.id in ENV_NAMES:
            found.append(f"{node.lineno}: {node.id}")
    return found


def test_no_module_outside_the_settings_tree_reads_the_environment():
    readers = {}
    for path in sorted((config.PROJECT_ROOT / "pipeline").rglob("*.py")):
        rel = path.relative_to(config.PROJECT_ROOT).as_posix()
        if rel != "pipeline/config.py" and rel not in GPU_SIDE and (found := _env_reads(path)):
            readers[rel] = found
    assert not readers, readers
    assert _env_reads(config.PROJECT_ROOT / "pipeline" / "config.py")  # the check sees a read where there is one


def test_the_gpu_side_that_reads_its_own_variables_is_standard_library_only():
    """The runner, the shim and every module of pipeline/bisect/ they import (as scripts: by bare name)."""
    folder = config.PROJECT_ROOT / "pipeline" / "bisect"
    todo, seen = [Path(rel).stem for rel in GPU_SIDE], set()
    while todo:
        module = todo.pop()
        seen.add(module)
        for node in ast.walk(ast.parse((folder / f"{module}.py").read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or a.name for a in node.names] if node.level else [node.module or ""]
            else:
                continue
            for top in (name.split(".")[0] for name in names):
                if (folder / f"{top}.py").is_file():
                    todo += [] if top in seen else [top]
                else:
                    assert top in sys.stdlib_module_names | UPSTREAM, f"pipeline/bisect/{module}.py imports {top}"
    assert {"runner", "harness", "harness_shim"} <= seen


def test_every_variable_of_the_settings_tree_is_listed_with_its_default_in_operations_md():
    text = (config.PROJECT_ROOT / "docs" / "operations.md").read_text()
    section = text.split("## Settings: every environment variable", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    trees = ((config.Settings, "LIGER_"), (config.ObjectStore, "AWS_"), (config.GitHubActions, "GITHUB_"))
    for tree, prefix in trees:
        for field in tree.model_fields:
            var = f"`{prefix}{field.upper()}`"
            row = next((r for r in rows if var in r.split(" | ")[0]), None)
            assert row is not None, f"{var} is not in docs/operations.md's settings table"
            assert row.split(" | ")[1].strip(), f"{var} has no default in docs/operations.md"
    named = {v for r in rows for v in re.findall(r"`((?:LIGER|AWS|GITHUB)_[A-Z_]+)`", r.split(" | ")[0])}
    known = {f"{prefix}{f.upper()}" for tree, prefix in trees for f in tree.model_fields}
    assert named <= known, named - known  # the table names no variable the tree does not read


def test_the_build_memory_is_a_share_of_the_machine_unless_set(monkeypatch):
    monkeypatch.delenv("LIGER_BUILD_MEMORY", raising=False)
    share = config.machine_memory_mb() // config.BUILD_MEMORY_SHARE
    expected = min(max(share, config.BUILD_MEMORY_MIN_MB), config.BUILD_MEMORY_MAX_MB)
    assert config.build_memory() == f"{expected}MB"
    assert config.BUILD_MEMORY_MAX_MB <= 2500  # 3 GB ran out of memory at 1,000 runs a series (bench/HISTORY.md)
    assert config.merge_memory() == config.MERGE_MEMORY == "2GB"
    monkeypatch.setenv("LIGER_BUILD_MEMORY", "700MB")
    assert config.build_memory() == config.merge_memory() == "700MB"
