# Two commands do everything on a fresh machine with python3 and make: `make run` and `make test`.
SHELL := /bin/bash
TOOLS := $(CURDIR)/.tools
UV := $(TOOLS)/bin/uv
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
UV_VERSION := 0.13.9

export DAGSTER_HOME := $(CURDIR)/.dagster_home
export UV_COMPILE_BYTECODE := 1
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_LINK_MODE := copy
export DAGSTER_DISABLE_TELEMETRY := 1
export PYTHONPATH := $(CURDIR)

.PHONY: setup lint run test bench dev clean schemas sql notebook site spark-views dagster-instance export-kernelindex compare ack gate

# The targets below are thin wrappers over `liger-bench` (docs/cli.md). The values a person passes
# (make gate BASE=…, make ack NOTE=…) reach a recipe only through its environment, as "$$NAME" inside
# double quotes, never as shell text: a backtick, $(…), ;, a quote or a newline in a branch name, a
# note or a config is a value, not a command. `$(value …)` keeps make from expanding them either
# (NOTE='… up by $$5' stays as typed); options take the --name=value form, positionals follow `--`,
# so a value starting with '-' is not read as an option.
CLI_VARS := RUN BASE GPU OUT HEAD WARN_ONLY RECORD ALERT NOTE FROM TO ALL Q DEST KERNEL PASS METRIC CONFIG \
	PROVIDERS RUNS MAX_RUNS CONFIRM MIN_EFFECT NARROW NO_INGEST PLAN_OUT
$(foreach v,$(CLI_VARS),$(if $(filter undefined,$(origin $(v))),,$(eval override $(v) := $$(value $(v)))$(eval export $(v))))
LB := $(VENV)/bin/liger-bench

# uv is one binary: the host's pip puts it in .tools. A venv of its own is the fallback, where python3
# has no pip: ensurepip alone is a large part of a fresh clone's first `make run`.
$(UV):
	python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target $(TOOLS) uv==$(UV_VERSION) \
		|| { python3 -m venv $(TOOLS) && $(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION); }

# `make run` installs only the run's dependencies; the other targets add their dependency group.
# --inexact: a later plain sync does not uninstall what a group target added.
$(VENV)/.synced: $(UV) pyproject.toml uv.lock
	$(UV) sync --frozen --inexact --quiet
	touch $@

$(VENV)/.synced-%: $(VENV)/.synced
	$(UV) sync --frozen --inexact --quiet --group $*
	touch $@

$(VENV)/.synced-all: $(VENV)/.synced
	$(UV) sync --frozen --inexact --quiet --all-groups
	touch $@ $(VENV)/.synced-dev $(VENV)/.synced-ui $(VENV)/.synced-spark $(VENV)/.synced-postgres $(VENV)/.synced-notebook

# The template lives in config/: a dagster.yaml in the project root makes `dg dev` warn that it is ignored.
# The instance lives in SQLite under .dagster_home unless LIGER_DAGSTER_PG_URL names a PostgreSQL
# database (deploy/dagster.yaml). Re-checked on every setup, so switching the env var switches storage.
INSTANCE_YAML := $(if $(LIGER_DAGSTER_PG_URL),deploy/dagster.yaml,config/dagster.yaml)
dagster-instance:
	@mkdir -p $(DAGSTER_HOME)
	@cmp -s $(INSTANCE_YAML) $(DAGSTER_HOME)/dagster.yaml || cp $(INSTANCE_YAML) $(DAGSTER_HOME)/dagster.yaml

# The project's own modules byte-compiled, as uv compiles site-packages (UV_COMPILE_BYTECODE): where
# PYTHONDONTWRITEBYTECODE is set no run writes them, and every run compiled its modules again.
# Python still checks each file's size and mtime against its source.
PROJECT_SOURCES := $(shell find pipeline bench -name '*.py')
$(VENV)/.compiled: $(VENV)/.synced $(PROJECT_SOURCES)
	$(PY) -m compileall -q -j 0 pipeline bench
	touch $@

setup: $(VENV)/.synced $(VENV)/.compiled dagster-instance $(if $(LIGER_DAGSTER_PG_URL),$(VENV)/.synced-postgres)

## Materialize every asset headless on data_raw/ (or $$LIGER_DATA_RAW) and print a summary.
run: setup
	@# one process: the job (recorded in $$DAGSTER_HOME), then the summary of that run
	$(LB) run

lint: $(VENV)/.synced-all
	$(VENV)/bin/ruff check pipeline bench tests
	$(VENV)/bin/ruff format --check --quiet pipeline bench tests

test: setup lint
	$(PY) -m pytest -q -n 2 --dist loadfile --durations=20

## Dagster UI on http://127.0.0.1:3000 with the daily schedule and sensors on.
dev: setup $(VENV)/.synced-ui
	$(VENV)/bin/dg dev --host 127.0.0.1 --port 3000

## SQL prompt over warehouse/liger.duckdb (read-only); `make sql Q="select ..."` runs one query.
sql: setup
	$(LB) sql $(if $(Q),--command="$$Q")

## Facts with KernelIndex's identity as KernelIndex records -> DEST/kernelindex/runs.ndjson + DEST/objects.ndjson
export-kernelindex: setup
	@test -n "$$DEST" || { echo "usage: make export-kernelindex DEST=dir"; exit 2; }
	$(LB) export-kernelindex -- "$$DEST"

## Sweeps that moved between two releases, versions or commits: make compare FROM=0.6.5 TO=0.7.0 [GPU="..."] [ALL=1]
compare: setup
	$(LB) compare $(if $(GPU),--gpu="$$GPU") $(if $(ALL),--all) -- "$$FROM" "$$TO"

## Did a run make anything slower than its base? make gate RUN=<csv or folder> BASE=<commit | release | snapshot | auto>
##   [GPU="..."] [OUT=dir] [HEAD=rev] [WARN_ONLY=1] [RECORD=1] -> OUT/gate.json, OUT/gate.md (docs/gate.md)
## make reports any failure of its command as its own 2: a CI job calls `liger-bench gate` (0 / 1 / 2).
gate: setup
	@test -n "$$RUN" && test -n "$$BASE" || { echo 'usage: make gate RUN=<csv or folder> BASE=<commit | release | snapshot | auto> [GPU=...] [OUT=dir]'; exit 2; }
	$(LB) gate --base="$$BASE" $(if $(GPU),--gpu="$$GPU") $(if $(OUT),--out="$$OUT") \
		$(if $(HEAD),--head="$$HEAD") $(if $(WARN_ONLY),--warn-only) $(if $(RECORD),--record) -- "$$RUN"

## Acknowledge an alert (kept in the Delta table alert_state; survives rebuilds): make ack ALERT=<id> NOTE="…"
ack: setup
	@test -n "$$ALERT" && test -n "$$NOTE" || { echo 'usage: make ack ALERT=<alert_id> NOTE="why"'; exit 2; }
	$(LB) ack -- "$$ALERT" "$$NOTE"

## Static dashboard of warehouse/liger.duckdb -> warehouse/site/index.html (opens from disk, no server).
site: setup
	$(LB) site

## JupyterLab on the trend notebook (the `notebook` dependency group is installed on first use).
## As root (containers), Jupyter refuses to start without --allow-root.
notebook: setup $(VENV)/.synced-notebook
	$(VENV)/bin/jupyter lab --ip 127.0.0.1 $$([ "$$(id -u)" = 0 ] && echo --allow-root) notebooks/version_trend.ipynb

## Every model of sql/serve and sql/regress on Spark ($$LIGER_SPARK_MASTER, default local[2]) -> $$LIGER_WAREHOUSE/spark/<view>.parquet
spark-views: setup $(VENV)/.synced-spark
	@$(PY) -c "import pipeline, sys; pipeline.connect()" 2>/dev/null || $(MAKE) run
	$(PY) -m pipeline.spark

# the partitioned-staging bench launches runs through `dg launch`: the `ui` group's CLI
bench: setup $(VENV)/.synced-ui
	$(LB) bench

schemas: setup
	$(PY) -c "from pathlib import Path; from pipeline.contracts.records import export_json_schemas; export_json_schemas(Path('schemas'))"

clean:
	rm -rf warehouse/staging warehouse/git_blobs warehouse/tables warehouse/liger.duckdb warehouse/tmp warehouse/reports warehouse/spark warehouse/site

## Confirm and bisect on a GPU (docs/bisect.md): make bisect KERNEL=softmax FROM=<rev> TO=<rev>
##   [PASS=full METRIC=speed CONFIG=... PROVIDERS=liger RUNS=3 MAX_RUNS=8 CONFIRM=1 MIN_EFFECT=0.05 NARROW=0 ALERT=id]
## with LIGER_GIT_REPO (the clone) and LIGER_BENCH_PYTHON (the harness's interpreter, default python3).
BISECT_ARGS = $(if $(KERNEL),--kernel="$$KERNEL") $(if $(FROM),--from-rev="$$FROM") $(if $(TO),--to-rev="$$TO") \
	$(if $(ALERT),--alert="$$ALERT") $(if $(PASS),--pass="$$PASS") $(if $(METRIC),--metric="$$METRIC") \
	$(if $(CONFIG),--config="$$CONFIG") $(if $(PROVIDERS),--providers="$$PROVIDERS") $(if $(RUNS),--runs="$$RUNS") \
	$(if $(MAX_RUNS),--max-runs="$$MAX_RUNS") $(if $(CONFIRM),--confirm="$$CONFIRM") \
	$(if $(MIN_EFFECT),--min-effect="$$MIN_EFFECT") $(if $(NARROW),--narrow="$$NARROW")
.PHONY: bisect bisect-plan bisect-ingest bisect-queue
bisect: setup dagster-instance
	$(LB) bisect run $(BISECT_ARGS) $(if $(NO_INGEST),--no-ingest)

## The plan alone (for a GPU host that has only python3 + torch): make bisect-plan ... PLAN_OUT=gpu_carry/plans/x.json
bisect-plan: setup
	$(LB) bisect plan $(BISECT_ARGS) $(if $(PLAN_OUT),--plan-out="$$PLAN_OUT")

## Ingest the bisect folder (runs copied back into warehouse/bisect/<id>/) in one warehouse run.
bisect-ingest: setup dagster-instance
	$(LB) bisect ingest

## Run the plans the alert sensor queued in <warehouse>/bisect/queue/, one GPU job at a time (on a GPU host).
bisect-queue: setup dagster-instance
	$(LB) bisect queue
