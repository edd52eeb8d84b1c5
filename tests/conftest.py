from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabricscope.accuracy.published_tables import calibration_set
from fabricscope.accuracy.validation import CalibrationCase, CaseScore, score
from fabricscope.warehouse.load import init_warehouse
from tests.helpers import ROOT

# Process-level tests: the CLI, crawls and the scheduler as subprocesses, a served app, a
# browser, kills and crashes, the SQL console's worker, and the model's fits. Marked slow, so
# `make test-quick` (pytest -m "not slow") runs the rest in under two minutes; `make test`
# runs everything.
SLOW: tuple[str, ...] = (
    "tests/bench/test_bench_browser.py",
    "tests/e2e/",
    "tests/evidence/test_calibrate.py",
    "tests/cli/test_cli.py",
    "tests/cli/test_cli_bad_input.py",
    "tests/cli/test_cli_output.py",
    "tests/cli/test_parse.py",
    "tests/ops/test_refresh_kill.py",
    "tests/ops/test_refresh_lock.py",
    "tests/ops/test_schedule.py",
    "tests/accuracy/test_validation.py",
    "tests/scrapers/spiders/",
    "tests/scrapers/test_faults.py",
    "tests/ui/test_app.py",
    "tests/warehouse/test_concurrency.py",
    "tests/warehouse/test_crash.py",
    "tests/warehouse/test_damage.py",
    "tests/warehouse/test_query.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        where = item.path.relative_to(ROOT).as_posix()
        if where.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def initialised_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One warehouse initialised per test run (schema and reference data); never written."""
    path = tmp_path_factory.mktemp("initialised") / "warehouse.duckdb"
    init_warehouse(path)
    return path


@pytest.fixture
def warehouse_path(tmp_path: Path, initialised_warehouse: Path) -> Path:
    """A real, freshly initialised warehouse file of the test's own: a copy of the run's
    initialised one (the same bytes ``init_warehouse`` writes, without initialising again)."""
    path = tmp_path / "data" / "warehouse.duckdb"
    path.parent.mkdir(parents=True)
    shutil.copyfile(initialised_warehouse, path)
    return path


@pytest.fixture(scope="session")
def fixture_warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse built the way `make app` builds it: init, then an offline refresh that
    replays every recorded response in fixtures/ (read-only for the tests that share it)."""
    from tests.helpers import fabricscope

    folder = tmp_path_factory.mktemp("fixture-warehouse")
    path = folder / "warehouse.duckdb"
    env = {"FABRICSCOPE_DATA_DIR": str(folder)}  # logs and raw feeds stay in the temp folder
    assert fabricscope("init", "--warehouse", str(path), env=env).returncode == 0
    done = fabricscope("refresh", "--offline", "--warehouse", str(path), env=env, timeout=300)
    assert done.returncode in (0, 3), done.stderr  # 3: some sources failed by design
    return path


@pytest.fixture(scope="session")
def published_cases() -> list[CalibrationCase]:
    """The published runs the constants are fitted on, mapped onto the model's inputs."""
    return calibration_set()[0]


@pytest.fixture(scope="session")
def published_scores(published_cases: list[CalibrationCase]) -> list[CaseScore]:
    """Those runs scored with ``ModelConstants()`` (read-only: shared by every test)."""
    return score(published_cases)
