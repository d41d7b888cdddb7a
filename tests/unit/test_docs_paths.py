"""Docs point at real files, and no tracked file names a path of the machine it was written on.

Every repository path named in README.md, ARCHITECTURE.md and docs/*.md must exist in the checkout:
backticked paths that start at a top-level entry of the repository (`pipeline/...`, `sql/...`,
`Makefile`) and relative Markdown links. `path::name` also needs `def name` (or `class name`) in that
file (or `name = ...`); a glob (`sql/model/*.sql`) needs one match; `a.{md,csv}` is each of its expansions. Paths under
warehouse/ (built by `make run`), placeholders (`<view>`, `…`) and names with an extension no tracked file
has (another project's `schemas/*.ts`) are not checked.
"""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import PurePosixPath

from tests.conftest import PROJECT

DOCS = ["README.md", "ARCHITECTURE.md", *sorted(str(p.relative_to(PROJECT)) for p in (PROJECT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"[<>…$]|\.\.\.")
BRACES = re.compile(r"\{([^{}]*)\}")
STRIP = "\"'.,;:()"

# Machine paths: absolute paths of the host a file was written on. `bench/work/` (a folder of the
# repository) is not one: the path must not continue a name. The one exemption is split by another
# change (its reference copy is named there); remove it once that lands.
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|root|\.mirror)/|(?<![\w.~-])/home/[a-z_][\w-]*/")
MACHINE_PATH_EXEMPT: set[str] = set()


@cache
def tracked() -> frozenset[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        check=True,
    ).stdout
    return frozenset(p for p in out.decode().split("\0") if p and (PROJECT / p).exists())


@cache
def folders() -> frozenset[str]:
    return frozenset(str(parent) for p in tracked() for parent in PurePosixPath(p).parents if str(parent) != ".")


@cache
def extensions() -> frozenset[str]:
    return frozenset(PurePosixPath(p).suffix for p in tracked()) - {""}


@cache
def top_level() -> frozenset[str]:
    return frozenset(p.split("/")[0] for p in tracked()) - {"warehouse"}


def _expand(path: str) -> list[str]:
    m = BRACES.search(path)
    if not m:
        return [path]
    return [e for alt in m.group(1).split(",") for e in _expand(path[: m.start()] + alt + path[m.end() :])]


def _glob_regex(pattern: str) -> re.Pattern:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + "/?")


def _exists(path: str) -> bool:
    path = path.rstrip("/")
    if any(c in path for c in "*?["):
        rx = _glob_regex(path)
        return any(rx.fullmatch(p) for p in tracked() | folders())
    return path in tracked() or path in folders()


def _defines(path: str, name: str) -> bool:
    text = (PROJECT / path).read_text(errors="replace")
    pattern = rf"^\s*(?:(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|{re.escape(name)}\s*[:=])"
    return re.search(pattern, text, re.M) is not None


def _missing(ref: str) -> list[str]:
    """What of one reference (`path`, `path::name`, a glob or a brace list) is not in the checkout."""
    path, _, name = ref.partition("::")
    missing = []
    for p in _expand(path):
        if not _exists(p):
            missing.append(p)
        elif name and not _defines(p, name.split("[")[0]):
            missing.append(f"{p}::{name}")
    return missing


def _is_repo_path(token: str) -> bool:
    if PLACEHOLDER.search(token) or "://" in token or token.startswith(("/", "~")):
        return False
    path = token.split("::")[0]
    first, suffix = path.split("/")[0], PurePosixPath(path).suffix
    if suffix and not any(c in suffix for c in "*{") and suffix not in extensions():
        return False  # another project's file (`schemas/*.ts` is KernelIndex's)
    if "/" in path:
        return first in top_level()
    return first in tracked() and "/" not in first


def references(doc: str) -> list[str]:
    """The repository paths one doc names, repo-relative."""
    text = (PROJECT / doc).read_text()
    prose = FENCE.sub("", text)
    refs = []
    for span in INLINE.findall(prose):
        for token in span.split():
            token = token.lstrip("\"'(").rstrip(STRIP)
            if "=" in token:  # VAR=path
                token = token.split("=", 1)[1]
            if token and _is_repo_path(token):
                refs.append(token)
    base = PurePosixPath(doc).parent
    for target in LINK.findall(prose):
        target = target.split("#")[0]
        if not target or ":" in target or PLACEHOLDER.search(target):
            continue
        parts: list[str] = []
        for part in (base / target).parts:
            if part == "..":
                if not parts:
                    break
                parts.pop()
            elif part != ".":
                parts.append(part)
        else:
            ref = "/".join(parts) + ("/" if target.endswith("/") else "")
            if ref and not ref.startswith("warehouse/"):
                refs.append(ref)
    return refs


def test_the_checker_finds_references():
    refs = {r for doc in DOCS for r in references(doc)}
    assert "Makefile" in refs or any(r.startswith("pipeline/") for r in refs)
    assert _missing("tests/unit/no_such_test.py") == ["tests/unit/no_such_test.py"]
    assert _missing("tests/unit/test_docs_paths.py::test_no_such_test") == [
        "tests/unit/test_docs_paths.py::test_no_such_test"
    ]
    assert _missing("tests/unit/test_docs_paths.py::test_the_checker_finds_references") == []
    assert _missing("sql/model/*.sql") == [] and _missing("sql/nowhere/*.sql") == ["sql/nowhere/*.sql"]
    assert _missing("docs/{regressions,nowhere}.md") == ["docs/nowhere.md"]
    assert not _is_repo_path("warehouse/liger.duckdb") and not _is_repo_path("sql/<name>.sql")
    assert not _is_repo_path("src/liger_kernel/ops") and _is_repo_path("sql/views")
    assert not _is_repo_path("schemas/*.ts") and _is_repo_path("tests/e2e/test_spark_parity.py::PROBES")
    assert _missing("tests/e2e/test_spark_parity.py::PROBES") == []


def test_every_path_named_in_the_docs_exists():
    missing = sorted({f"{doc}: {m}" for doc in DOCS for ref in references(doc) for m in _missing(ref)})
    assert not missing, "paths named in the docs that the checkout lacks:\n" + "\n".join(missing)


def test_no_tracked_file_names_a_machine_path():
    found = []
    for path in sorted(tracked() - MACHINE_PATH_EXEMPT):
        data = (PROJECT / path).read_bytes()
        if b"\0" in data[:8192]:
            continue
        for n, line in enumerate(data.decode(errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                found.append(f"{path}:{n}: {line.strip()[:120]}")
    assert not found, "machine paths in tracked files (find shared data relative to the checkout or by env var):\n" + (
        "\n".join(found)
    )


def test_the_machine_path_rule_tells_a_repo_folder_from_a_host_path():
    assert MACHINE_PATH.search("see /" + "work/shared/data") and MACHINE_PATH.search("(/" + "home/alice/x)")
    assert not MACHINE_PATH.search("bench/work/data-1m") and not MACHINE_PATH.search("/tmp/x")
