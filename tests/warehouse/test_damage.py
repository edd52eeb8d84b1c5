"""A damaged warehouse file is found before anything trusts it (issue 33): `status --verify`
reads every block, `init` and `refresh` check the file before they write, and each says so
in one line, leaving the file as it was found."""

from __future__ import annotations

import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from fabricscope.warehouse import db
from fabricscope.warehouse.db import WarehouseError, block_damage, verify
from fabricscope.warehouse.load import init_warehouse
from tests.helpers import fabricscope

ZEROED = 256 * 1024  # one DuckDB block's worth, as in the issue
FIRST_BLOCK = 3 * 4096  # after the main header and the two database headers
WHAT_TO_DO = "move it aside, then rebuild it (`fabricscope init` and `fabricscope refresh`)"


def zero_at(offset: Callable[[int], int]) -> Callable[[bytes], bytes]:
    def damage(good: bytes) -> bytes:
        start = offset(len(good))
        return good[:start] + bytes(ZEROED) + good[start + ZEROED :]

    return damage


def flip_byte(offset: Callable[[int], int]) -> Callable[[bytes], bytes]:
    def damage(good: bytes) -> bytes:
        at = offset(len(good))
        return good[:at] + bytes([good[at] ^ 0xFF]) + good[at + 1 :]

    return damage


# zeroed blocks at several offsets (the case is the middle), then the corruptions
# that DuckDB's open already reported (kept here so a change to the check cannot lose them)
DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "zeroed middle": zero_at(lambda size: size // 2),
    "zeroed first block": zero_at(lambda _: FIRST_BLOCK),
    "zeroed second block": zero_at(lambda _: FIRST_BLOCK + ZEROED),
    "zeroed across two blocks": zero_at(lambda _: FIRST_BLOCK + 5 * ZEROED + 1000),
    "zeroed last block": zero_at(lambda size: size - ZEROED),
    "zeroed headers": zero_at(lambda _: 0),
    "one byte flipped in a block": flip_byte(lambda size: size // 3),
    "one byte flipped in a database header": flip_byte(lambda _: 4096 + 20),
    "truncated": lambda good: good[:300_000],
    "garbage": lambda _: bytes(range(256)) * 100,
    "empty": lambda _: b"",
}


@pytest.fixture(scope="module")
def good_bytes(fixture_warehouse: Path) -> bytes:
    return fixture_warehouse.read_bytes()


def damaged_copy(good: bytes, folder: Path, case: str) -> Path:
    path = folder / "warehouse.duckdb"
    path.write_bytes(DAMAGE[case](good))
    return path


def test_a_good_warehouse_passes_every_block(fixture_warehouse: Path, tmp_path: Path) -> None:
    assert block_damage(fixture_warehouse) is None
    assert verify(fixture_warehouse).ok
    # and after a writer rebuilt it (init rewrites nothing when nothing changed: force a run)
    copy = tmp_path / "warehouse.duckdb"
    shutil.copyfile(fixture_warehouse, copy)
    init_warehouse(copy)
    assert block_damage(copy) is None


def test_every_zeroed_block_of_a_real_warehouse_is_found(good_bytes: bytes, tmp_path: Path) -> None:
    """Not only the blocks a scan of every table reads: also the primary keys' index blocks
    and free ones, which a full read misses and init's writes then crash on."""
    blocks = (len(good_bytes) - FIRST_BLOCK) // ZEROED
    assert blocks > 10  # a warehouse with real data, not a toy
    path = tmp_path / "warehouse.duckdb"
    for block in range(blocks):
        offset = FIRST_BLOCK + block * ZEROED
        path.write_bytes(good_bytes[:offset] + bytes(ZEROED) + good_bytes[offset + ZEROED :])
        assert block_damage(path) == f"block {block} at byte {offset} fails its checksum"


@pytest.mark.parametrize("case", list(DAMAGE))
def test_verify_and_init_refuse_a_damaged_file_and_leave_it(
    case: str, good_bytes: bytes, tmp_path: Path
) -> None:
    path = damaged_copy(good_bytes, tmp_path, case)
    found = path.read_bytes()
    for check in (verify, init_warehouse):
        with pytest.raises(WarehouseError, match="damaged or not a warehouse") as raised:
            check(path)
        assert WHAT_TO_DO in str(raised.value), (case, check.__name__)
        assert str(path) in str(raised.value)
    assert path.read_bytes() == found
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, path.name + ".lock"]


@pytest.mark.parametrize(
    "case", ["zeroed middle", "zeroed second block", "zeroed last block", "truncated"]
)
def test_the_cli_says_so_in_one_line_and_changes_nothing(
    case: str, good_bytes: bytes, tmp_path: Path
) -> None:
    (tmp_path / "data").mkdir()
    path = damaged_copy(good_bytes, tmp_path / "data", case)
    found = path.read_bytes()
    env = {"FABRICSCOPE_DATA_DIR": str(tmp_path / "data")}
    for args in (
        ["status", "--verify"],
        ["init"],
        ["refresh", "--offline", "-s", "skypilot_hyperbolic"],
    ):
        done = fabricscope(*args, "--warehouse", str(path), env=env)
        assert done.returncode == 1, (case, args, done.stderr[-2000:])
        [line] = done.stderr.strip().splitlines()
        assert "damaged or not a warehouse" in line and WHAT_TO_DO in line, (case, args, line)
        assert "verified" not in done.stdout + done.stderr
        assert path.read_bytes() == found, (case, args)
    assert not list(path.parent.glob("*.staging-*"))


def test_a_storage_version_the_check_was_not_verified_on_is_left_to_duckdb(
    fixture_warehouse, tmp_path
):
    """The block check copies DuckDB 2.0's layout and checksum: a file of another storage
    version (a newer DuckDB may lay blocks out otherwise) is not judged by it, so a good
    file is never refused for a layout the check does not know."""
    good = fixture_warehouse.read_bytes()
    assert struct.unpack_from("<Q", good, 12)[0] in db._CHECKED_STORAGE_VERSIONS
    other = bytearray(zero_at(lambda size: size // 2)(good))
    struct.pack_into("<Q", other, 12, 1_000_000)  # an unknown version, its header re-summed
    words = np.frombuffer(bytes(other[8:4096]), dtype="<u8")
    with np.errstate(over="ignore"):
        checksum = int(np.bitwise_xor.reduce(words * db._CHECKSUM_FACTOR)) ^ db._CHECKSUM_SEED
    struct.pack_into("<Q", other, 0, checksum)
    path = tmp_path / "other.duckdb"
    path.write_bytes(bytes(other))
    assert block_damage(path) is None
    damaged = tmp_path / "damaged.duckdb"
    damaged.write_bytes(zero_at(lambda size: size // 2)(good))
    assert block_damage(damaged) is not None  # the same damage, on the verified version
