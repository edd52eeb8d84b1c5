# fabricscope: `make app` and `make test` work on a fresh machine with Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
WAREHOUSE ?= data/warehouse.duckdb
PORT ?= 8501

.PHONY: app test test-quick bench lint format venv warehouse clean browser lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Installs come from the lock (requirements.lock: every package pinned, with hashes), so a
# fresh clone gets the versions the tests passed with, installed by uv in seconds.
UV_VERSION := 0.13.9
$(BIN)/uv: | $(BIN)/python
	$(BIN)/python -m pip install --quiet uv==$(UV_VERSION)

# Reinstall when the project's metadata or the lock changes; otherwise this is a no-op.
$(INSTALLED): pyproject.toml requirements.lock | $(BIN)/uv
	$(BIN)/uv pip install --quiet --python $(BIN)/python --require-hashes -r requirements.lock
	$(BIN)/uv pip install --quiet --python $(BIN)/python --no-deps -e .
	touch $(INSTALLED)

# Lock again after editing pyproject.toml's dependencies: versions already locked are kept
# where they still fit; `make lock UPGRADE=1` takes the newest that do.
lock: | $(BIN)/uv
	$(BIN)/uv pip compile pyproject.toml --extra test --extra bench --python-version 3.11 \
		--generate-hashes --no-annotate $(if $(UPGRADE),--upgrade,) \
		-o requirements.lock

venv: $(INSTALLED)

# Create or migrate the warehouse, load the bundled reference data, and fill it from the
# recorded responses in fixtures/ if it holds no offers yet (idempotent, no network).
warehouse: venv
	$(BIN)/fabricscope init --warehouse $(WAREHOUSE)
	$(BIN)/fabricscope refresh --offline --if-empty --warehouse $(WAREHOUSE) || test $$? -eq 3

app: warehouse
	$(BIN)/fabricscope serve --warehouse $(WAREHOUSE) --port $(PORT)

# The browser tests (tests/e2e) drive Debian's Chromium; install it where we may (root with
# apt-get), else say how.
CHROMIUM := /usr/bin/chromium
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
		else \
			echo "the browser tests need $(CHROMIUM): sudo apt-get install chromium" >&2; \
			exit 1; \
		fi; \
	fi

# Two workers (pytest-xdist): the process-level tests wait on subprocesses, so two share the
# cores well; TEST_WORKERS=1 runs them one at a time.
TEST_WORKERS ?= 2
test: venv browser
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

# While working: everything but the process-level tests (tests/conftest.py SLOW), in under
# two minutes; `make test` runs them all.
test-quick: venv
	$(BIN)/python -m pytest -n $(TEST_WORKERS) -m "not slow"

# the bench extra (llm-analysis, the third estimator in the accuracy table) is in the lock
bench: venv
	$(BIN)/python -m bench

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
