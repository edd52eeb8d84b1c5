"""Settings: defaults, then an optional TOML file, then ``FABRICSCOPE_`` variables.

Invalid settings fail at start with one line naming the setting.
"""

from __future__ import annotations

import os
import re
import tempfile
import tomllib
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

# the query limits come from the SQL console's module, which loads duckdb and pandas: read
# only where the console is used, so settings load cheaply everywhere (the app, the CLI)
if TYPE_CHECKING:
    from fabricscope.warehouse.query import QueryLimits

ENV_PREFIX = "FABRICSCOPE_"
CONFIG_ENV = ENV_PREFIX + "CONFIG"
DEFAULT_CONFIG_FILE = Path("fabricscope.toml")
# Variables with our prefix that are not settings themselves.
_NOT_SETTINGS = {CONFIG_ENV}
# the SQL console's smallest memory cap: below it DuckDB cannot pin a block, or the worker's
# address-space limit (the cap plus its overhead) leaves no room to start a thread
MIN_QUERY_MEMORY_BYTES = 128_000_000


class ConfigError(Exception):
    """Invalid configuration; the message names the setting and what is wrong."""


def _config_file() -> Path | None:
    named = os.environ.get(CONFIG_ENV)
    if named:
        path = Path(named)
        if not path.is_file():
            raise ConfigError(f"invalid setting {CONFIG_ENV}: no such file {path}")
        return path
    return DEFAULT_CONFIG_FILE if DEFAULT_CONFIG_FILE.is_file() else None


# crontab numbers its weekdays from Sunday (0 and 7); APScheduler's numbers start on Monday,
# so a crontab line's numbers are passed on as names ("1-5" is "mon,tue,wed,thu,fri")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _crontab_weekdays(field: str) -> str:
    """A crontab weekday field with its numbers (0-7, ranges, steps) as day names."""
    items = []
    for item in field.split(","):
        match = re.fullmatch(r"(\d+|\*)(?:-(\d+))?(?:/(\d+))?", item)
        if match is None or item == "*":
            items.append(item)  # '*' and names read the same in both
            continue
        first = 0 if match[1] == "*" else int(match[1])
        last = 6 if match[1] == "*" else int(match[2]) if match[2] else first
        step = int(match[3]) if match[3] else 1
        if last > 7 or first > last or step < 1:
            raise ValueError(f"weekday {item!r}: crontab weekdays are 0-7 (0 and 7 are Sunday)")
        items.extend(_WEEKDAYS[day] for day in range(first, last + 1, step))
    return ",".join(dict.fromkeys(items))


def cron_fields(text: str) -> dict[str, str]:
    """A crontab line (minute hour day month weekday), or six fields with seconds first.

    The fields are APScheduler's CronTrigger fields; a bad line raises ValueError."""
    parts = text.split()
    names = ["minute", "hour", "day", "month", "day_of_week"]
    if len(parts) == 6:
        names = ["second", *names]
    elif len(parts) != 5:
        raise ValueError(
            f"{text!r} is not a cron line: 5 fields (minute hour day month weekday) "
            "or 6 with seconds first"
        )
    from apscheduler.triggers.cron import CronTrigger

    fields = dict(zip(names, parts, strict=True))
    fields["day_of_week"] = _crontab_weekdays(fields["day_of_week"])
    try:
        CronTrigger(timezone="UTC", **fields)
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a valid cron line: {exc}") from None
    return fields


class SourceSchedule(BaseModel):
    """One source's schedule, overriding its spider's ``refresh_cron``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cron: str | None = None
    jitter_s: int | None = Field(default=None, ge=0, le=3600)
    enabled: bool = True
    timeout_s: float | None = Field(default=None, gt=0, le=24 * 3600)
    stale_after_hours: float | None = Field(
        default=None, gt=0, le=24 * 365, description="this source's staleness threshold"
    )
    start_url: str | None = Field(
        default=None, pattern=r"^https?://\S+$", description="crawl a mirror instead"
    )

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is not None:
            cron_fields(value)
        return value


class ScheduleSettings(BaseModel):
    """``fabricscope schedule``: one job per source (its spider's ``refresh_cron`` unless
    overridden here), estimates after each publish, an optional daily Parquet export."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    jitter_s: int = Field(default=120, ge=0, le=3600, description="random delay per fire")
    misfire_grace_s: int = Field(
        default=1800, ge=1, le=86400, description="a fire this late still runs (then coalesced)"
    )
    crawl_timeout_s: float = Field(
        default=1800,
        gt=0,
        le=24 * 3600,
        description="a crawl's hard wall-clock, scheduled or `fabricscope refresh` alike",
    )
    shutdown_grace_s: float = Field(
        default=30, ge=0, le=3600, description="on SIGTERM: let a running crawl finish this long"
    )
    workers: int = Field(default=2, ge=1, le=16, description="crawls running at once")
    estimates_delay_s: float = Field(
        default=60, ge=0, le=3600, description="after a publish: wait, then re-rank once"
    )
    backoff_max_s: float = Field(default=6 * 3600, ge=0, le=7 * 86400)
    export_dir: Path | None = Field(default=None, description="daily Parquet export here")
    export_cron: str = "45 4 * * *"
    sources: dict[str, SourceSchedule] = Field(default_factory=dict)
    only: list[str] | None = Field(
        default=None, description="schedule only these sources (split them across hosts)"
    )

    @field_validator("export_cron")
    @classmethod
    def _export_cron(cls, value: str) -> str:
        cron_fields(value)
        return value

    @model_validator(mode="after")
    def _known_sources(self) -> ScheduleSettings:
        """Every command refuses a source no spider has, not only ``schedule``."""
        known = set(source_names())
        for name, given in (("sources", list(self.sources)), ("only", self.only or [])):
            unknown = sorted(set(given) - known)
            if unknown:
                raise ValueError(
                    f"schedule.{name}: unknown source {_shown(unknown[0])}; known sources: "
                    + ", ".join(source_names())
                )
        return self


SPIDERS_DIR = Path(__file__).resolve().parent / "scrapers" / "spiders"
# a spider's own `name = "..."` line: its module, class and name agree (tests/scrapers/
# test_registry.py), so the names are read from the files without importing Scrapy
_SPIDER_NAME = re.compile(r'^    name = "(\w+)"$', re.M)


@cache
def source_names() -> tuple[str, ...]:
    """Every source a spider crawls, read from the spiders' files (no Scrapy import), once
    per process."""
    return tuple(
        sorted(
            found.group(1)
            for path in SPIDERS_DIR.glob("[!_]*.py")
            if (found := _SPIDER_NAME.search(path.read_text(encoding="utf-8"))) is not None
        )
    )


def _shown(value: str, limit: int = 80) -> str:
    """A value quoted for a message, cut: a 1 MB setting is not echoed whole."""
    return repr(value if len(value) <= limit else value[:limit] + "...")


class Settings(BaseSettings):
    """Everything configurable; each field is also ``FABRICSCOPE_<NAME>``."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, extra="forbid", frozen=True, env_nested_delimiter="__"
    )

    warehouse: Path = Field(
        default=Path("data/warehouse.duckdb"), description="the published DuckDB file"
    )
    data_dir: Path = Field(
        default=Path("data"), description="raw feeds, logs and staging live here"
    )
    offline: bool = Field(default=False, description="replay recorded fixtures, never fetch")
    stale_after_hours: float = Field(
        default=48.0, gt=0, le=24 * 365, description="a source older than this is stale"
    )
    query_timeout_s: float = Field(default=10.0, gt=0, le=600)
    query_max_rows: int = Field(default=10_000, gt=0, le=1_000_000)
    query_memory_limit: str = Field(default="1GB")
    query_threads: int = Field(default=2, gt=0, le=64)
    lambda_api_key: SecretStr | None = Field(
        default=None, description="key for Lambda's Cloud API (the lambda_api source)"
    )
    lock_wait_s: float = Field(
        default=60.0, ge=0, le=3600, description="how long a writer waits for another's lock"
    )
    schedule: ScheduleSettings = Field(default_factory=ScheduleSettings)
    serve_stored_rankings: bool = Field(
        default=True,
        description="the app serves a view the refresh ranked and stored (the preset rankings) "
        "from the warehouse while that is the same answer; false ranks every view live",
    )
    as_of: datetime | None = Field(
        default=None,
        description="measure prices' ages at this time instead of the clock (reproducible "
        "reports; a time without a zone is UTC)",
    )

    @field_validator("as_of")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value

    @field_validator("query_memory_limit")
    @classmethod
    def _memory_size(cls, value: str) -> str:
        size = re.fullmatch(
            r"(\d{1,15}(?:\.\d{1,6})?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value.strip()
        )
        if size is None:
            raise ValueError(f"must be a size such as '512MB' or '2GB' (got {_shown(value)})")
        number, unit = size.groups()
        base = 1024 if "i" in unit else 1000
        scale = "BKMGT".index(unit[0])
        if float(number) * base**scale < MIN_QUERY_MEMORY_BYTES:
            raise ValueError(
                f"must be at least {MIN_QUERY_MEMORY_BYTES // 1_000_000}MB: the console's worker "
                f"and DuckDB do not start in less (got {value.strip()!r})"
            )
        return value.strip()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config_file = _config_file()
        if config_file is not None:
            sources.append(InitSettingsSource(settings_cls, init_kwargs=_read_toml(config_file)))
        return tuple(sources)

    @property
    def stale_thresholds(self) -> dict[str, float]:
        """Per-source staleness thresholds set in the schedule configuration."""
        return {
            name: own.stale_after_hours
            for name, own in self.schedule.sources.items()
            if own.stale_after_hours is not None
        }

    @property
    def query_limits(self) -> QueryLimits:
        from fabricscope.warehouse.query import QueryLimits

        return QueryLimits(
            max_rows=self.query_max_rows,
            timeout_s=self.query_timeout_s,
            memory_limit=self.query_memory_limit,
            threads=self.query_threads,
        )

    def require_writable(self) -> None:
        """Writers call this at start: the warehouse's folder must be writable."""
        for name, path in (("warehouse", self.warehouse.parent), ("data_dir", self.data_dir)):
            if not _writable_dir(path):
                raise ConfigError(
                    f"invalid setting {name} ({ENV_PREFIX}{name.upper()}): cannot write to {path}"
                )


def _read_toml(path: Path) -> dict[str, Any]:
    """The configuration file's settings; ConfigError in one line if it is not TOML.

    A byte-order mark (as some editors write) is not content."""
    if path.stat().st_size > 1_000_000:
        raise ConfigError(f"invalid configuration file {path}: larger than 1 MB")
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"invalid configuration file {path}: not UTF-8 text (byte {exc.start})"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid configuration file {path}: {exc}") from None


def _writable_dir(path: Path) -> bool:
    """True if ``path`` is (or can be made) a directory we can create files in.

    Tries for real: permission bits say little when running as root.
    """
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            return True
    except OSError:
        return False


def _unknown_env_settings() -> list[str]:
    known = {ENV_PREFIX + name.upper() for name in Settings.model_fields}
    # nested settings (FABRICSCOPE_SCHEDULE__JITTER_S): the first part must be a setting;
    # the nested model refuses names it does not know
    return sorted(
        name
        for name in os.environ
        if name.upper().startswith(ENV_PREFIX)
        and name.upper().split("__", 1)[0] not in known
        and name.upper() not in _NOT_SETTINGS
    )


def load_settings(**overrides: Any) -> Settings:
    """Read settings; raise ConfigError with one readable line on any problem."""
    unknown = _unknown_env_settings()
    if unknown:
        raise ConfigError(
            f"unknown setting {unknown[0]}; known settings are "
            + ", ".join(ENV_PREFIX + n.upper() for n in Settings.model_fields)
        )
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        error = exc.errors()[0]
        name = ".".join(str(part) for part in error["loc"]) or "settings"
        if error["type"] == "extra_forbidden":
            raise ConfigError(
                f"unknown setting {name!r} (in the configuration file or a {ENV_PREFIX} variable)"
            ) from None
        message = error["msg"].removeprefix("Value error, ")
        if "(got " not in message and not isinstance(error.get("input"), dict):
            message += f" (got {_shown(str(error.get('input')))})"
        raise ConfigError(
            f"invalid setting {name} ({ENV_PREFIX}{name.upper()}): {message}"
        ) from None
