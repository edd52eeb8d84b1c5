"""Project-wide rules: import direction, lint, no machine paths."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGES = ("scrapers", "pipeline", "warehouse", "ui")
# What each package may import of ours (DESIGN.md: ui -> pipeline -> warehouse,
# scrapers -> warehouse).
ALLOWED = {
    "warehouse": set(),
    "scrapers": {"warehouse"},
    "pipeline": {"warehouse"},
    "ui": {"pipeline", "warehouse"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_point_one_way(package):
    for module in (ROOT / package).rglob("*.py"):
        ours = imported_packages(module) & set(PACKAGES) - {package}
        assert ours <= ALLOWED[package], f"{module.relative_to(ROOT)} imports {ours}"
        if package == "ui":
            assert "scrapy" not in imported_packages(module)


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_lint_is_clean():
    result = ruff("check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean():
    result = ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_absolute_machine_paths_are_committed():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False
    ).stdout.split()
    markers = ("/" + "work/", "/" + "farm/", "/" + "root/", "/" + "home/")
    offenders = [
        name
        for name in tracked
        if (ROOT / name).is_file()
        and not name.endswith((".parquet", ".duckdb"))
        and any(m in (ROOT / name).read_text(errors="ignore") for m in markers)
    ]
    assert offenders == []
