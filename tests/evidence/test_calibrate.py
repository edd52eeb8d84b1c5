"""Uploaded nccl-tests output: stored in the warehouse, then used by the model."""

from __future__ import annotations

import json

import pytest

from fabricscope.evidence.calibrate import stored_all_reduce
from fabricscope.model.calibration import fit_alpha_beta, parse_nccl_tests
from fabricscope.model.hardware import REFERENCE_ALPHA_US, latency_multiplier
from fabricscope.model.scaling import estimate
from fabricscope.model.workload import Workload
from fabricscope.rank import catalog
from fabricscope.warehouse.db import read_frame, verify
from tests.helpers import ROOT, fabricscope

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
        "deepseek-v3",
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
    assert used.returncode == 0, used.stderr
    assert "multi-node all_reduce calibrations only" not in used.stderr
    # its table starts at sizes too large to fit a latency on: the class's latency stays
    assert "the fabric class's latency stays" in used.stderr
    timed = fabricscope(
        "calibrate", str(NCCL / "efa-p5_2n_16g_all_reduce.txt"), "--provider", "aws",
        "--fabric-class", "efa", "--nodes", "2", "--warehouse", str(warehouse_path),
    )  # fmt: skip
    assert timed.returncode == 0 and not timed.stderr.strip(), timed.stderr


def _alpha(name: str) -> float:
    fit = fit_alpha_beta(parse_nccl_tests((NCCL / name).read_text()))
    assert fit.alpha_us is not None
    return fit.alpha_us


def test_the_reference_latency_is_the_infiniband_fixtures_fit():
    fitted = _alpha("infiniband_2n_16g_all_reduce.txt")
    assert abs(fitted - REFERENCE_ALPHA_US) < 0.05


def test_the_class_latency_priors_agree_with_measured_runs():
    """EFA's and TCPX's alpha multipliers are priors; 2-node all-reduce runs on AWS p5 and
    GCP A3 Mega (TCPXO) measure them within a quarter."""
    classes = catalog.fabric_classes()
    for name, fabric in (("efa-p5_2n_16g_all_reduce.txt", "efa"),
                         ("tcpxo_2n_16g_all_reduce.txt", "tcpx")):  # fmt: skip
        measured = latency_multiplier(_alpha(name), 16, 2)
        assert measured == pytest.approx(classes[fabric].alpha_multiplier, rel=0.25), name


def test_a_measured_latency_replaces_the_class_multiplier(warehouse_path):
    for name, provider in (("efa-p4de_2n_16g_all_reduce.txt", "aws"),
                           ("infiniband_2n_16g_all_reduce.txt", "ib-cloud")):  # fmt: skip
        stored = fabricscope(
            "calibrate", str(NCCL / name), "--provider", provider, "--fabric-class",
            "efa" if provider == "aws" else "infiniband", "--nodes", "2",
            "--warehouse", str(warehouse_path),
        )  # fmt: skip
        assert stored.returncode == 0, stored.stderr
    calibrations = stored_all_reduce(warehouse_path)
    # a small model with FSDP over 64 nodes: its per-layer gathers are latency-bound
    rows = [
        {"provider": provider, "gpu_model": "H100 SXM", "gpu_count": 512, "gpus_per_node": 8,
         "fabric_class": fabric, "fabric_gbps_per_gpu": 400}
        for provider, fabric in (("aws", "efa"), ("elsewhere", "efa"), ("ib-cloud", "infiniband"))
    ]  # fmt: skip
    hw = catalog.profiles(rows, calibrations)
    p4de, class_efa, ib = hw.fabric_alpha_multiplier
    assert p4de == pytest.approx(_alpha("efa-p4de_2n_16g_all_reduce.txt") / REFERENCE_ALPHA_US)
    assert p4de > 5 and class_efa == 2.0 and ib == pytest.approx(1.0, abs=0.01)
    workload = Workload.model_validate(
        {"name": "fsdp-1b", "params_billion": 1.3, "layers": 24, "hidden_size": 2048,
         "heads": 16, "seq_len": 2048, "vocab_size": 50272, "tokens": 1e9,
         "global_batch_size": 512, "zero_stage": 3}
    )  # fmt: skip
    step = estimate(workload, hw).step_time_s
    assert step[0] > step[1] > step[2]


def test_a_latency_is_read_only_at_the_reference_shape():
    assert latency_multiplier(REFERENCE_ALPHA_US * 2, 16, 2) == pytest.approx(2.0)
    assert latency_multiplier(REFERENCE_ALPHA_US * 2, 32, 4) is None
    assert latency_multiplier(None, 16, 2) is None
    assert latency_multiplier(float("nan"), 16, 2) is None


def test_a_bus_bandwidth_no_link_reaches_is_not_stored(tmp_path):
    from fabricscope.evidence.calibrate import MAX_BUSBW_GBYTES_S, fit_upload
    from fabricscope.model.calibration import CalibrationError

    text = (ROOT / "fixtures" / "nccl_tests" / "infiniband_2n_16g_all_reduce.txt").read_text()
    lines = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 13 and parts[0].isdigit():  # a result row: sizes 100,000x, same times
            line = line.replace(parts[0], str(int(parts[0]) * 100_000), 1)
            line = line.replace(parts[1], str(int(parts[1]) * 100_000), 1)
        lines.append(line)
    with pytest.raises(CalibrationError, match=f"reaches {MAX_BUSBW_GBYTES_S:g} GB/s"):
        fit_upload("\n".join(lines), "p", "infiniband")


def test_a_size_longer_than_any_run_is_one_line():
    from fabricscope.evidence.calibrate import fit_upload
    from fabricscope.model.calibration import CalibrationError

    text = (NCCL / "infiniband_2n_16g_all_reduce.txt").read_text()
    lines = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 13 and parts[0].isdigit():  # sizes past int64: 5,000 digits
            line = line.replace(parts[0], parts[0] + "9" * 5000, 1)
        lines.append(line)
    with pytest.raises(CalibrationError, match=r"column 'size' has 5,0\d\d digits"):
        fit_upload("\n".join(lines), "p", "infiniband")
