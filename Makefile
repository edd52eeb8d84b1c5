# fabricscope: `make app` and `make test` work on a fresh machine with Python 3.11+ and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
WAREHOUSE ?= data/warehouse.duckdb
PORT ?= 8501

.PHONY: app test bench lint format venv warehouse clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall when the project's metadata changes; otherwise this is a no-op.
$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(INSTALLED)

venv: $(INSTALLED)

# The bench extra (llm-analysis, the third estimator in the accuracy table) on top of the
# above; redone whenever the test install is.
BENCH_INSTALLED := $(VENV)/.installed-bench
$(BENCH_INSTALLED): $(INSTALLED)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	touch $(BENCH_INSTALLED)

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

test: venv browser
	$(BIN)/python -m pytest

bench: $(BENCH_INSTALLED)
	$(BIN)/python -m bench

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache *.egg-info
