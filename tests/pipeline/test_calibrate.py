"""Uploaded nccl-tests output: stored in the warehouse, then used by the model."""

from __future__ import annotations

import json

from tests.helpers import ROOT, fabricscope
from warehouse.db import read_frame, verify

NCCL = ROOT / "fixtures" / "nccl_tests"


def test_a_calibration_is_stored_and_replaces_the_class_default(warehouse_path, tmp_path):
    upload = NCCL / "roce_2n_16g_all_reduce.txt"
    stored = fabricscope(
        "calibrate",
        str(upload),
        "--provider",
        "oracle",
        "--fabric-class",
        "roce",
        "--warehouse",
        str(warehouse_path),
        "--format",
        "json",
    )
    assert stored.returncode == 0, stored.stderr
    [fit] = json.loads(stored.stdout)
    assert fit["collective"] == "all_reduce" and fit["nodes"] == 2
    assert 400 < fit["busbw_gbytes_s"] < 500  # the output's own busbw is ~471 GB/s
    current = read_frame(warehouse_path, "select * from calibration_current")[1]
    assert list(current["provider"]) == ["oracle"]
    raw = read_frame(warehouse_path, "select raw_text from fabric_calibrations")[1]
    assert raw.iloc[0, 0] == upload.read_text()  # kept as uploaded
    assert verify(warehouse_path).ok

    hardware = tmp_path / "hw.json"
    hardware.write_text(
        json.dumps(
            [
                {
                    "provider": "oracle",
                    "gpu_model": "H100 SXM",
                    "gpu_count": 1024,
                    "gpus_per_node": 8,
                    "fabric_class": "roce",
                    "fabric_gbps_per_gpu": 400,
                },
                {
                    "provider": "elsewhere",
                    "gpu_model": "H100 SXM",
                    "gpu_count": 1024,
                    "gpus_per_node": 8,
                    "fabric_class": "roce",
                    "fabric_gbps_per_gpu": 400,
                },
            ]
        )
    )
    estimated = fabricscope(
        "estimate",
        "-w",
        "mixtral-8x7b",
        "--hardware",
        str(hardware),
        "--warehouse",
        str(warehouse_path),
        "--format",
        "json",
    )
    assert estimated.returncode == 0, estimated.stderr
    measured, default = json.loads(estimated.stdout)
    assert measured["fabric_source"] == f"calibration {fit['calibration_id']}"
    assert default["fabric_source"] == "class default"
    # measured RoCE on OCI beats the plain-ECMP class default at this scale
    assert measured["step_time_s"] < default["step_time_s"]


def test_garbage_uploads_get_one_clear_line_and_store_nothing(warehouse_path, tmp_path):
    page = tmp_path / "page.html"
    page.write_text("<html><body>not a benchmark</body></html>\n")
    result = fabricscope(
        "calibrate",
        str(page),
        "--provider",
        "x",
        "--fabric-class",
        "infiniband",
        "--warehouse",
        str(warehouse_path),
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "page.html: line" in lines[0]
    assert read_frame(warehouse_path, "select count(*) from fabric_calibrations")[1].iloc[0, 0] == 0
    bad_class = fabricscope(
        "calibrate",
        str(NCCL / "roce_2n_16g_all_reduce.txt"),
        "--provider",
        "x",
        "--fabric-class",
        "pigeon",
        "--warehouse",
        str(warehouse_path),
    )
    assert bad_class.returncode == 2 and "pigeon" in bad_class.stderr


def test_a_calibration_the_model_will_not_use_says_so(warehouse_path):
    stored = fabricscope(
        "calibrate", str(NCCL / "nvlink_1n_8g_all_reduce.txt"), "--provider", "lambda",
        "--fabric-class", "infiniband", "--warehouse", str(warehouse_path),
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    assert "multi-node all_reduce calibrations only" in stored.stderr
    gather = fabricscope(
        "calibrate", str(NCCL / "tcpxo_2n_16g_all_gather.txt"), "--provider", "gcp",
        "--fabric-class", "tcpx", "--collective", "all_gather",
        "--warehouse", str(warehouse_path),
    )  # fmt: skip
    assert gather.returncode == 0, gather.stderr
    assert "multi-node all_reduce calibrations only" in gather.stderr
    used = fabricscope(
        "calibrate", str(NCCL / "roce_2n_16g_all_reduce.txt"), "--provider", "oracle",
        "--fabric-class", "roce", "--warehouse", str(warehouse_path),
    )  # fmt: skip
    assert used.returncode == 0 and "only" not in used.stderr
