"""Project-wide rules: one import root, imports one way between its rooms, lint, no machine
paths."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.helpers import ROOT

PACKAGE = ROOT / "fabricscope"
# What each room of the package may import of the others (docs/ARCHITECTURE.md): the
# warehouse at the bottom, the app and the CLI at the top, the model pure.
ALLOWED: dict[str, set[str]] = {
    "warehouse": set(),
    "files": set(),
    "frames": set(),
    "scrapers": {"warehouse"},
    "config": {"warehouse"},
    "model": {"files"},
    "evidence": {"model", "frames", "warehouse"},
    "rank": {"model", "evidence", "frames", "files", "warehouse"},
    "procurement": {"rank", "evidence", "model", "frames", "warehouse"},
    "accuracy": {"model", "rank", "files", "frames"},
    "ops": {"rank", "evidence", "config", "files", "warehouse"},
    "cli": {"config", "files", "frames", "model", "evidence", "rank", "procurement", "ops",
            "warehouse"},
    "app": {"config", "files", "frames", "model", "evidence", "rank", "procurement", "ops",
            "warehouse"},
}  # fmt: skip
# The model is numbers in, numbers out: no tables, no database, no crawler, no page.
DOORS = {"__init__", "__main__"}
MODEL_FORBIDS = {"pandas", "duckdb", "scrapy", "streamlit", "pyarrow"}


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, dotted (``from a import b`` counts a and a.b)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def room_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def rooms_imported(path: Path) -> set[str]:
    return {
        name.split(".")[1]
        for name in imports_of(path)
        if name.startswith("fabricscope.") and name.split(".")[1] in ALLOWED
    }


def modules() -> list[Path]:
    """Every module of the package but its own ``__init__`` and ``__main__`` (the CLI's door)."""
    return [p for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE or p.stem not in DOORS]


def test_every_room_is_known():
    rooms = {room_of(p) for p in modules()}
    assert rooms == set(ALLOWED), rooms ^ set(ALLOWED)


@pytest.mark.parametrize("room", sorted(ALLOWED))
def test_imports_point_one_way(room):
    for module in (p for p in modules() if room_of(p) == room):
        ours = rooms_imported(module) - {room}
        assert ours <= ALLOWED[room], f"{module.relative_to(ROOT)} imports {ours - ALLOWED[room]}"
        third_party = {name.split(".")[0] for name in imports_of(module)}
        if room == "model":
            assert not third_party & MODEL_FORBIDS, f"{module.relative_to(ROOT)}"
        if room == "app":
            assert "scrapy" not in third_party, f"{module.relative_to(ROOT)}"


def test_the_rooms_form_no_cycle():
    """A topological order exists: every room's allowed imports come before it."""
    placed: list[str] = []
    pending = dict(ALLOWED)
    while pending:
        ready = [room for room, needs in pending.items() if needs <= set(placed)]
        assert ready, f"a cycle among {sorted(pending)}"
        placed.extend(sorted(ready))
        for room in ready:
            del pending[room]


def test_nothing_in_the_package_imports_the_benchmarks_or_the_tests():
    for module in modules():
        tops = {name.split(".")[0] for name in imports_of(module)}
        assert not tops & {"bench", "tests"}, f"{module.relative_to(ROOT)} imports {tops}"


def test_one_top_level_package_is_installed():
    """`pip install .` puts fabricscope into site-packages and nothing else of ours."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["setuptools"]["packages"]["find"]["include"] == ["fabricscope*"]
    assert config["project"]["scripts"] == {"fabricscope": "fabricscope.cli:main"}
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == {"fabricscope", "tests", "bench"}, packages


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


def _name(requirement: str) -> str:
    """A requirement's distribution name, normalised as PyPI does (PEP 503)."""
    name = re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _locked() -> dict[str, str]:
    text = (ROOT / "requirements.lock").read_text()
    return {_name(m[0]): m[1] for m in re.findall(r"(?m)^([A-Za-z0-9][\w.\-]*)==(\S+) \\$", text)}


def test_the_lock_pins_every_dependency_with_hashes():
    """requirements.lock (what `make` installs) pins every dependency pyproject.toml names,
    each with its hashes, so a fresh clone installs the versions the tests passed with."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = [*project["dependencies"], *(r for e in project["optional-dependencies"].values()
                                         for r in e)]  # fmt: skip
    locked = _locked()
    assert {_name(r) for r in named} <= set(locked), {_name(r) for r in named} - set(locked)
    text = (ROOT / "requirements.lock").read_text()
    entries = re.split(r"(?m)^(?=[A-Za-z0-9])", text)
    pinned = [e for e in entries if "==" in e.split("\n", 1)[0]]
    assert len(pinned) == len(locked)
    assert all("--hash=sha256:" in entry for entry in pinned)


def test_the_suite_runs_on_the_locked_versions():
    from importlib.metadata import PackageNotFoundError, version

    wrong = {}
    for name, pinned in _locked().items():
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = None
        if installed != pinned:
            wrong[name] = (installed, pinned)
    assert wrong == {}, f"installed, locked: {wrong}; run `make venv`"


# SQL the package runs on the warehouse lives in fabricscope/warehouse/sql/queries/; only the
# warehouse room and the SQL console's examples (people's own queries) hold SQL text
SQL_TEXT = re.compile(
    r"\bselect\s+(\*|\(|distinct\b|[a-z_][\w.]*\s*(?=\(|,|\bas\b|\bfrom\b))[\s\S]*?"
    r"\bfrom\s+[a-z_]+"
    r"|\binsert\s+into\s+[a-z_]+|\bcreate\s+(or\s+replace\s+)?(table|view)\s+[a-z_]+"
    r"|\balter\s+table\s+[a-z_]+|\bdelete\s+from\s+[a-z_]+|\bupdate\s+[a-z_]+\s+set\b",
    re.IGNORECASE,
)
SQL_ALLOWED = ("warehouse/", "app/pages/sql.py")


def test_no_sql_text_outside_the_warehouse_room():
    found = []
    for module in modules():
        where = module.relative_to(PACKAGE).as_posix()
        if where.startswith(SQL_ALLOWED):
            continue
        for node in ast.walk(ast.parse(module.read_text())):
            pieces = []
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                pieces = [node.value]
            elif isinstance(node, ast.JoinedStr):
                # what is interpolated reads as a name: "select {columns} from t" is SQL
                pieces = [
                    "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
                ]
            for text in pieces:
                words = " ".join(text.split())
                if SQL_TEXT.search(words):
                    found.append(f"{where}:{node.lineno}: {words[:60]}")
    assert found == [], "\n".join(found)


def test_every_slow_path_names_tests_that_exist():
    from tests.conftest import SLOW

    for path in SLOW:
        assert (ROOT / path).exists(), path
