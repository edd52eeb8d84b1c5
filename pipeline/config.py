"""Settings: defaults, then an optional TOML file, then ``FABRICSCOPE_`` variables.

Invalid settings fail at start with one line naming the setting.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from warehouse.query import QueryLimits

ENV_PREFIX = "FABRICSCOPE_"
CONFIG_ENV = ENV_PREFIX + "CONFIG"
DEFAULT_CONFIG_FILE = Path("fabricscope.toml")
# Variables with our prefix that are not settings themselves.
_NOT_SETTINGS = {CONFIG_ENV}


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


class Settings(BaseSettings):
    """Everything configurable; each field is also ``FABRICSCOPE_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="forbid", frozen=True)

    warehouse: Path = Field(
        default=Path("data/warehouse.duckdb"), description="the serving DuckDB file"
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

    @field_validator("query_memory_limit")
    @classmethod
    def _memory_size(cls, value: str) -> str:
        if not re.fullmatch(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value.strip()):
            raise ValueError(f"must be a size such as '512MB' or '2GB' (got {value!r})")
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
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config_file))
        return tuple(sources)

    @property
    def query_limits(self) -> QueryLimits:
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
    return sorted(
        name
        for name in os.environ
        if name.upper().startswith(ENV_PREFIX)
        and name.upper() not in known
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
            raise ConfigError(f"unknown setting {name!r} in the configuration file") from None
        raise ConfigError(
            f"invalid setting {name} ({ENV_PREFIX}{name.upper()}): {error['msg']}"
            f" (got {error.get('input')!r})"
        ) from None
