"""Run a spider and its item pipelines on recorded responses, through the real crawler."""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from typing import Any

from tests.helpers import ROOT, python_env

FIXTURES = ROOT / "fixtures"


def manifest(source: str) -> list[dict[str, Any]]:
    path = FIXTURES / source / "requests.json"
    return json.loads(path.read_text()) if path.is_file() else []


@cache
def parse_fixture(source: str, fixture: str, url: str | None = None) -> dict[str, Any]:
    """What the source would publish from ``fixtures/<source>/<fixture>`` (nothing is)."""
    args = [
        sys.executable,
        "-m",
        "scrapers.tools",
        "parse",
        source,
        str(FIXTURES / source / fixture),
    ]
    if url:
        args += ["--url", url]
    recorded = next((e for e in manifest(source) if e["file"] == fixture), None)
    if recorded and recorded.get("body_hex"):  # a POST API: replay the exact request
        args += ["--method", recorded["method"], "--body-hex", recorded["body_hex"]]
    result = subprocess.run(
        args, capture_output=True, text=True, env=python_env(), cwd=ROOT, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def offers_by_type(parsed: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(o["instance_type"], o["pricing_tier"]): o for o in parsed["offers"]}
