"""The rooms of pipeline/ import only downwards, nothing imports in a circle, and no module or
function outgrows what a reader can hold (ARCHITECTURE.md states the order)."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# ARCHITECTURE.md's floors, lowest first: a room imports only rooms on a lower floor (or itself).
FLOORS = (
    ("config",),
    ("contracts",),
    ("common",),
    ("engine", "history"),
    ("ingest", "stage", "model"),
    ("store",),
    ("regress",),
    ("serve",),
    ("outputs",),
    ("spark", "bisect"),
    ("defs", "instance"),
    ("definitions",),
    ("cli",),
    ("pipeline",),  # the package facade: pipeline.connect(), pipeline.compare()
)
FLOOR = {room: n for n, rooms in enumerate(FLOORS) for room in rooms}
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 1000, 80


def _modules() -> dict[str, Path]:
    found = {}
    for top in ("pipeline", "bench"):
        for path in sorted((REPO / top).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _target(name: str) -> str | None:
    """The project module an import names (a package's submodule, else the package itself)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(module: str) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        found |= {t for t in map(_target, names) if t and t != module}
    return found


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if parts[0] == "pipeline" and len(parts) > 1 else parts[0]


def test_every_room_is_on_a_floor():
    rooms = {room(m) for m in MODULES if m.startswith("pipeline")}
    assert rooms <= set(FLOOR), sorted(rooms - set(FLOOR))


def test_no_import_runs_from_a_lower_floor_up():
    upward = []
    for module in MODULES:
        if not module.startswith("pipeline"):
            continue
        for target in imports_of(module):
            same = not target.startswith("pipeline") or room(target) == room(module)
            if not same and FLOOR[room(target)] >= FLOOR[room(module)]:
                upward.append(f"{module} -> {target}")
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    graph = {m: imports_of(m) for m in MODULES}
    # a package's __init__ importing its own submodules is how a facade is made, not a cycle
    graph = {m: {t for t in ts if not t.startswith(m + ".")} for m, ts in graph.items()}
    try:
        list(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_no_module_over_a_thousand_lines_and_no_function_over_eighty():
    long = []
    for module, path in MODULES.items():
        if not module.startswith("pipeline"):
            continue
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            long.append(f"{path.relative_to(REPO)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if node.end_lineno - start + 1 > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}: {node.end_lineno - start + 1}")
    assert not long, "\n".join(long)


def test_definitions_start_no_thread():
    """What runs is in the asset graph: no definition starts a thread or process of its own beside it."""
    spawning = {"threading", "concurrent.futures", "multiprocessing"}
    found = []
    for module, path in MODULES.items():
        if room(module) != "defs":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            found += [f"{module}: {n}" for n in names if n.split(".")[0] in spawning or n in spawning]
    assert not found, "\n".join(found)
