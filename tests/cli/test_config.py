"""Invalid configuration fails at start with one readable line naming the setting."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from fabricscope.config import ConfigError, cron_fields, load_settings
from tests.helpers import fabricscope


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in list(__import__("os").environ):
        if name.startswith("FABRICSCOPE_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def test_defaults():
    settings = load_settings()
    assert str(settings.warehouse) == "data/warehouse.duckdb"
    assert settings.query_limits.max_rows == 10_000


def test_environment_and_toml_file(monkeypatch, tmp_path):
    (tmp_path / "fabricscope.toml").write_text("stale_after_hours = 6\nquery_max_rows = 50\n")
    monkeypatch.setenv("FABRICSCOPE_QUERY_MAX_ROWS", "70")
    settings = load_settings()
    assert settings.stale_after_hours == 6 and settings.query_max_rows == 70  # env wins


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"FABRICSCOPE_STALE_AFTER_HOURS": "-3"}, "invalid setting stale_after_hours"),
        ({"FABRICSCOPE_QUERY_TIMEOUT_S": "soon"}, "invalid setting query_timeout_s"),
        ({"FABRICSCOPE_QUERY_MEMORY_LIMIT": "lots"}, "invalid setting query_memory_limit"),
        ({"FABRICSCOPE_WAREHOSE": "x.duckdb"}, "unknown setting FABRICSCOPE_WAREHOSE"),
        ({"FABRICSCOPE_CONFIG": "missing.toml"}, "invalid setting FABRICSCOPE_CONFIG"),
    ],
)
def test_bad_settings_name_the_setting(monkeypatch, env, expected):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError, match=expected):
        load_settings()


def test_unknown_key_in_the_toml_file(tmp_path):
    (tmp_path / "fabricscope.toml").write_text("refresh_every = 3\n")
    with pytest.raises(ConfigError, match="unknown setting 'refresh_every'"):
        load_settings()


def test_unwritable_warehouse_path_fails_for_writers(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    settings = load_settings(warehouse=blocker / "warehouse.duckdb")
    with pytest.raises(ConfigError, match=r"invalid setting warehouse .*cannot write"):
        settings.require_writable()


@pytest.mark.parametrize(
    ("env", "args", "named"),
    [
        ({"FABRICSCOPE_STALE_AFTER_HOURS": "-1"}, ["status"], "stale_after_hours"),
        ({"FABRICSCOPE_BOGUS": "1"}, ["status"], "FABRICSCOPE_BOGUS"),
        ({"FABRICSCOPE_WAREHOUSE": "a-file/warehouse.duckdb"}, ["init"], "warehouse"),
    ],
)
def test_the_cli_refuses_to_start_with_one_line(tmp_path, env, args, named):
    (tmp_path / "a-file").write_text("a file where a folder should be")
    result = fabricscope(*args, env=env, cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'warehouse = "unterminated\n', "invalid configuration file"),
        (b"\xff\xfe not text", "not UTF-8 text"),
    ],
)
def test_a_configuration_file_that_is_not_toml_is_one_line(tmp_path, content, message):
    config = tmp_path / "fabricscope.toml"
    config.write_bytes(content)
    done = fabricscope("status", env={"FABRICSCOPE_CONFIG": str(config)})
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert message in line and str(config) in line


def test_a_byte_order_mark_in_the_configuration_file_is_not_content(tmp_path, monkeypatch):
    config = tmp_path / "fabricscope.toml"
    config.write_bytes(b"\xef\xbb\xbfstale_after_hours = 12\n")
    monkeypatch.setenv("FABRICSCOPE_CONFIG", str(config))
    assert load_settings().stale_after_hours == 12


def test_the_source_names_are_the_spiders(monkeypatch):
    """Read from the spiders' files, so settings load without importing Scrapy."""
    from fabricscope.config import source_names
    from fabricscope.scrapers.tools import spider_names
    from tests.helpers import ROOT

    monkeypatch.chdir(ROOT)  # Scrapy finds its project from scrapy.cfg
    assert list(source_names()) == spider_names()


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            '[schedule.sources.no_such_source]\ncron = "0 * * * *"\n',
            "unknown source 'no_such_source'",
        ),
        ('[schedule]\nonly = ["lambda_cloud", "nope"]\n', "schedule.only: unknown source 'nope'"),
    ],
)
def test_an_unknown_scheduled_source_is_refused_at_load(tmp_path, toml, expected):
    (tmp_path / "fabricscope.toml").write_text(toml)
    with pytest.raises(ConfigError, match=expected):
        load_settings()


def test_known_scheduled_sources_load(tmp_path):
    (tmp_path / "fabricscope.toml").write_text("[schedule.sources.lambda_cloud]\nenabled = false\n")
    assert not load_settings().schedule.sources["lambda_cloud"].enabled


@pytest.mark.parametrize("size", ["0B", "1MB", "100MiB", "127MB"])
def test_a_memory_cap_too_small_for_the_console_is_refused(monkeypatch, size):
    monkeypatch.setenv("FABRICSCOPE_QUERY_MEMORY_LIMIT", size)
    with pytest.raises(ConfigError, match=r"query_memory_limit .*at least 128MB"):
        load_settings()


@pytest.mark.parametrize("size", ["128MB", "512MiB", "2GB"])
def test_memory_caps_the_console_runs_with_load(monkeypatch, size):
    monkeypatch.setenv("FABRICSCOPE_QUERY_MEMORY_LIMIT", size)
    assert load_settings().query_memory_limit == size


def test_settings_load_without_the_data_libraries():
    import subprocess
    import sys

    from tests.helpers import ROOT, python_env

    script = (
        "import sys\nimport fabricscope.config\n"
        "print(sorted({'duckdb', 'pandas', 'scrapy'} & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
        env=python_env(), check=False,
    )  # fmt: skip
    assert done.stdout.strip() == "[]", done.stderr


@pytest.mark.parametrize(
    ("line", "weekdays", "next_fire"),
    [
        ("0 9 * * 1-5", "mon,tue,wed,thu,fri", "Mon 2026-03-09"),
        ("0 9 * * 0", "sun", "Sun 2026-03-08"),
        ("0 9 * * 7", "sun", "Sun 2026-03-08"),
        ("0 9 * * 6", "sat", "Sat 2026-03-07"),
        ("0 9 * * */2", "sun,tue,thu,sat", "Sat 2026-03-07"),
        ("0 9 * * 1,3,5", "mon,wed,fri", "Mon 2026-03-09"),
        ("0 9 * * mon-fri", "mon-fri", "Mon 2026-03-09"),
    ],
)
def test_crontab_weekdays_count_from_sunday(line, weekdays, next_fire):
    """crontab's 1-5 is Monday to Friday; APScheduler's own numbers start on Monday."""
    from apscheduler.triggers.cron import CronTrigger

    fields = cron_fields(line)
    assert fields["day_of_week"] == weekdays
    saturday = datetime(2026, 3, 7, 8, 0, tzinfo=UTC)
    fire = CronTrigger(timezone="UTC", **fields).get_next_fire_time(None, saturday)
    assert fire.strftime("%a %Y-%m-%d") == next_fire
    with pytest.raises(ValueError, match="crontab weekdays are 0-7"):
        cron_fields("0 9 * * 8")
