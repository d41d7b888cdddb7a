"""Every setting of the pipeline, in one pydantic-settings tree: each environment variable is read
here and nowhere else, validated, and documented by its field.

The tree is read when asked (``load()``), never at import, so a process or a test that sets a
variable after importing the pipeline is still obeyed. A bad value fails before any work starts and
names its variable (``LIGER_LOCK_TIMEOUT_S=abc`` -> "LIGER_LOCK_TIMEOUT_S: ...").
"""

from __future__ import annotations

import os
from contextlib import suppress
from datetime import datetime
from pathlib import Path
from urllib.parse import urlparse

from pydantic import BaseModel, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SQL_DIR = PROJECT_ROOT / "sql"

API_VERSION = "kernelindex.dev/v1alpha1"

# Guards against hostile input: a line or header beyond these goes to quarantine, never into memory.
MAX_LINE_BYTES = 8 * 1024 * 1024
MAX_COLUMNS = 512
MAX_JSON_FILE_BYTES = 512 * 1024 * 1024
MAX_JSON_DEPTH = 64

GIT_REPO_ENV = "LIGER_GIT_REPO"  # named in messages
DATA_RAW_ENV = "LIGER_DATA_RAW"
SUPPORTED_SCHEMES = ("s3",)  # besides local paths and file:// URIs


class SettingsError(ValueError):
    """A setting from the environment is invalid; the message names the variable."""


class ObjectStore(BaseSettings):
    """The standard AWS variables, for a warehouse on S3 or an S3-compatible store."""

    model_config = SettingsConfigDict(env_prefix="AWS_", extra="ignore")

    endpoint_url: str | None = Field(None, description="S3-compatible endpoint (moto, MinIO, ...)")
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None
    region: str = "us-east-1"
    allow_http: str | None = Field(None, description="'true' for an http:// endpoint")

    def delta_options(self) -> dict[str, str]:
        """delta-rs storage options; commits use conditional put (If-None-Match), which S3 and
        moto honour, so concurrent writers cannot overwrite a commit."""
        names = {
            "endpoint_url": "AWS_ENDPOINT_URL",
            "access_key_id": "AWS_ACCESS_KEY_ID",
            "secret_access_key": "AWS_SECRET_ACCESS_KEY",
            "session_token": "AWS_SESSION_TOKEN",
            "region": "AWS_REGION",
            "allow_http": "AWS_ALLOW_HTTP",
        }
        opts = {env: value for field, env in names.items() if (value := getattr(self, field))}
        opts["conditional_put"] = "etag"
        return opts

    def s3fs_kwargs(self) -> dict:
        return {
            "key": self.access_key_id,
            "secret": self.secret_access_key,
            "token": self.session_token,
            "client_kwargs": {"endpoint_url": self.endpoint_url, "region_name": self.region},
        }


class Failpoint(BaseModel):
    """``LIGER_FAILPOINT=<name>:<seconds>``: crash tests pause a real run at a named place."""

    spec: str | None = None
    file: Path | None = None


class Settings(BaseSettings):
    """``LIGER_*`` variables. Paths resolve against the current directory."""

    # frozen: one read is shared by every caller until the environment changes (`load`)
    model_config = SettingsConfigDict(env_prefix="LIGER_", extra="ignore", validate_default=True, frozen=True)

    data_raw: Path = Field(PROJECT_ROOT / "data_raw", description="input folder: CSVs, kernelindex bundles")
    warehouse: str = Field(
        str(PROJECT_ROOT / "warehouse"), description="Delta tables: a folder, file:///abs/path, or s3://bucket/prefix"
    )
    local_dir: Path | None = Field(
        None,
        description="staging, liger.duckdb and reports when the warehouse is on S3 (default warehouse/ in the project)",
    )
    git_repo: str = Field("", description="a Liger-Kernel clone to backfill from (blank: none)")
    reader_memory: str = Field("1500MB", description="DuckDB memory per staging connection")
    # Unset: the liger.duckdb build takes a share of the machine (`build_memory()`), the merge and the
    # readers MERGE_MEMORY. Set: every one of them takes this.
    build_memory: str | None = Field(
        None, description="DuckDB memory of the merge, the liger.duckdb build and its readers (blank: derived)"
    )
    lock_timeout_s: float = Field(600.0, gt=0, description="how long a run waits for the warehouse lock")
    lease_ttl_s: float = Field(
        900.0, gt=0, description="object storage: a run's lease lasts this long unless renewed (tests shorten it)"
    )
    compact_min_files: int = Field(32, ge=2, description="compact a table once it holds this many files")
    retention_hours: float = Field(7 * 24, ge=0, description="old table versions stay readable this long")
    failpoint: str | None = Field(None, description="tests only: <name>:<seconds>")
    failpoint_file: Path | None = Field(None, description="tests only: written when the failpoint is hit")
    spark_master: str = Field("local[2]", description="Spark master for `make spark-views`")
    full_check_every: int = Field(10, ge=1, description="every N-th warehouse run, the checks read every fact")
    rehash: bool = Field(False, description="hash every input again instead of trusting its size/mtime/inode")
    # a deep history (a run every week for years) stays whole in liger.duckdb; the dashboard's page and its
    # release pages hold the newest points of its axis, so the page opens and the step's memory stays bounded
    dashboard_axis_points: int = Field(
        156, ge=1, description="the dashboard shows the newest N commits (or versions) of its axis"
    )
    # alerts (pipeline/outputs/alerts): where a message goes besides <warehouse>/alerts/<alert_id>.md
    alert_webhook: str = Field("", description="Slack-compatible webhook URL for alert messages (blank: none)")
    alert_timeout_s: float = Field(10.0, gt=0, description="how long one webhook attempt may take, start to end")
    # a receiver that never answers, or trickles bytes, must not hold a run open: what is not delivered
    # when this runs out is left undelivered and tried again by the next run
    alert_deadline_s: float = Field(
        60.0, gt=0, description="the most time one run (or `make ack`) spends delivering alert messages, all of them"
    )

    # bisect (docs/bisect.md): the smallest change a confirm or a bisect calls a change, and the GPU host
    bisect_min_effect_speed: float = Field(
        0.05, ge=0, le=10, description="MIN_EFFECT's default for speed: a change smaller than 5 % is the same"
    )
    bisect_min_effect_memory: float = Field(
        0.0, ge=0, le=10, description="MIN_EFFECT's default for memory (upstream measures memory exactly)"
    )
    bisect_autorun: bool = Field(
        False, description="1: a plan the alert sensor queues runs at once as a Dagster run (needs bench_python)"
    )
    bench_python: str = Field("", description="the harness's interpreter on this host (blank: python3)")
    bisect_lock_timeout_s: float = Field(
        3600.0, gt=0, description="how long a bisect waits for the one GPU job at a time to finish"
    )
    # sources that go silent (sql/regress/alerts/source_freshness.sql, docs/regressions.md)
    freshness_now: datetime | None = Field(
        None, description="the time source freshness is judged at, UTC (tests, replays; blank: the clock when read)"
    )
    freshness_factor: float = Field(
        3.0, gt=1.0, le=1000.0, description="a source is overdue when its silence exceeds this many usual intervals"
    )

    @field_validator("alert_webhook")
    @classmethod
    def _webhook_url(cls, value: str) -> str:
        """Checked once when the settings are read, not per alert at every delivery."""
        value = value.strip()
        if not value:
            return value
        try:
            parsed = urlparse(value)
            parsed.port  # noqa: B018 - a port that is not a number raises here
        except ValueError as exc:
            raise ValueError(f"not a URL ({exc})") from exc
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("must be an http:// or https:// URL with a host")
        return value

    @field_validator("warehouse")
    @classmethod
    def _known_scheme(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("empty")
        if "://" not in value:
            return str(Path(value).resolve())
        parsed = urlparse(value)
        if parsed.scheme == "file":
            if parsed.netloc not in ("", "localhost"):
                raise ValueError(f"file:// URI with a host ({parsed.netloc!r}) is not a local path")
            return str(Path(parsed.path).resolve())
        if parsed.scheme not in SUPPORTED_SCHEMES:
            raise ValueError(f"unsupported scheme {parsed.scheme!r}: use a path, file:// or s3://")
        if not parsed.netloc:
            raise ValueError("s3:// URI without a bucket")
        return value.rstrip("/")

    @property
    def is_remote(self) -> bool:
        return "://" in self.warehouse

    @property
    def local(self) -> Path:
        """The local folder: staging, liger.duckdb, reports. The warehouse folder itself when it is
        local; LIGER_LOCAL_DIR (default warehouse/ in the project) when the tables are on S3."""
        if self.is_remote:
            return (self.local_dir or PROJECT_ROOT / "warehouse").resolve()
        return Path(self.warehouse)

    @property
    def harness_python(self) -> str:
        return self.bench_python.strip() or "python3"

    def min_effect(self, metric: str) -> float:
        return self.bisect_min_effect_memory if metric == "memory" else self.bisect_min_effect_speed

    @property
    def git_repo_dir(self) -> Path | None:
        value = self.git_repo.strip()
        return Path(value).expanduser() if value else None


def _read_from() -> tuple:
    """What the settings are read from: the LIGER_ variables (pydantic-settings matches their names
    without regard to case) and the folder relative paths resolve against."""
    return os.getcwd(), tuple(sorted((k, v) for k, v in os.environ.items() if k[:6].upper() == "LIGER_"))


# The last settings read and what they were read from: a run asks for them about 70 times (each
# resource and helper reads what it needs when it needs it), and each read validates the environment.
_last_read: tuple[tuple, Settings] | None = None


def load() -> Settings:
    """The settings as the environment says now; a bad value raises `SettingsError` naming it. Read
    again whenever a LIGER_ variable or the current folder changed since the last read."""
    global _last_read
    source = _read_from()
    last = _last_read
    if last is not None and last[0] == source:
        return last[1]
    try:
        settings = Settings()
    except ValidationError as err:
        problems = "; ".join(f"LIGER_{str(e['loc'][0]).upper()}: {e['msg']}" for e in err.errors())
        raise SettingsError(f"invalid setting: {problems}") from None
    _last_read = (source, settings)
    return settings


def object_store() -> ObjectStore:
    return ObjectStore()


class GitHubActions(BaseSettings):
    """What a GitHub Actions job sets for its steps (the gate appends its comment to the job summary)."""

    model_config = SettingsConfigDict(env_prefix="GITHUB_", extra="ignore")

    step_summary: str = Field("", description="the job summary file a step appends Markdown to (blank: none)")


def github_step_summary() -> Path | None:
    value = GitHubActions().step_summary
    return Path(value) if value else None


def child_env(drop: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """The environment a child process (git, the harness, a run of our own) inherits: this process's,
    less ``drop``, plus ``extra``. Read here so that the rest of pipeline/ never touches os.environ."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra)
    return env


def default_env(**values: str) -> None:
    """Set variables that libraries read from the environment themselves (PySpark's), unless set."""
    for name, value in values.items():
        os.environ.setdefault(name, value)


def rehash_from_now_on() -> None:
    """``LIGER_REHASH=1`` for the rest of this process: a bisect's ingest run must read the bisect
    folder, which the run's nothing-new test does not look at. Set in the environment because every
    part of the run reads the settings from there (`load`)."""
    os.environ["LIGER_REHASH"] = "1"


# Shorthands for the settings most modules need.
def data_raw_dir() -> Path:
    return Path(os.path.realpath(load().data_raw))  # a symlink loop reaches discovery, which names it


def warehouse_uri() -> str:
    return load().warehouse


def warehouse_dir() -> Path:
    return load().local


def duckdb_path() -> Path:
    return warehouse_dir() / "liger.duckdb"


def git_repo_dir() -> Path | None:
    return load().git_repo_dir


# DuckDB memory per connection. Two readers run at once and one build after them, so the
# process stays under ~4 GB at 10 M rows; beyond the limit DuckDB spills to disk.
def reader_memory() -> str:
    return load().reader_memory


# The merge holds Arrow batches and delta-rs buffers beside DuckDB's memory (a 10 M-fact merge at 3 GB
# peaked at 5.1 GB), and the report and the dashboard read side by side: these keep 2 GB.
MERGE_MEMORY = "2GB"
# The liger.duckdb build holds little beside DuckDB (its process peaked about 0.3 GB over the limit).
# Its default is not monotonic in effect: the release-axis deep case runs out of memory at 2 GB and
# the 1,000-run case at 3 GB, both build at 2.5 GB (bench/HISTORY.md). So at most 2.5 GB, and at most
# a quarter of a small machine's memory, at least 1 GB.
BUILD_MEMORY_SHARE, BUILD_MEMORY_MIN_MB, BUILD_MEMORY_MAX_MB = 4, 1024, 2500


def machine_memory_mb() -> int:
    """The memory this process may use, in DuckDB's MB (10^6 bytes): the machine's, or its cgroup's
    limit when lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with suppress(OSError):  # no cgroup v2 limit to read: the machine's memory
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit.isdigit():
            total = min(total, int(limit))
    return total // 10**6


def build_memory() -> str:
    """DuckDB's memory for the liger.duckdb build: LIGER_BUILD_MEMORY, else a share of the machine."""
    if explicit := load().build_memory:
        return explicit
    share = machine_memory_mb() // BUILD_MEMORY_SHARE
    return f"{min(max(share, BUILD_MEMORY_MIN_MB), BUILD_MEMORY_MAX_MB)}MB"


def merge_memory() -> str:
    """DuckDB's memory for the merge and for each reader of liger.duckdb: LIGER_BUILD_MEMORY, else 2 GB."""
    return load().build_memory or MERGE_MEMORY


def lock_timeout_s() -> float:
    return load().lock_timeout_s


def lease_ttl_s() -> float:
    return load().lease_ttl_s
