"""The reference CSVs: sourced, unambiguous, and faithful to the field's claims."""

from __future__ import annotations

import csv
import math
import re

import pytest

from fabricscope.warehouse.load import REFERENCE_DIR


def rows(name):
    with (REFERENCE_DIR / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize(
    "name", ["gpus", "fabric_classes", "providers", "fx_rates", "instance_gpus", "gemm_ceilings"]
)
def test_every_row_has_a_source(name):
    assert all(row["source"].strip() for row in rows(name))


# a source names where it was read: a URL, or a file of the project or its shared folder
_CITATION = re.compile(r"https?://|(?:^|\s)(?:shared|fixtures)/")


@pytest.mark.parametrize("name", ["gpus", "instance_gpus", "gemm_ceilings"])
def test_every_gpu_row_cites_where_its_numbers_were_read(name):
    for row in rows(name):
        assert _CITATION.search(row["source"]), row


def normalise(spelling):
    return re.sub(r"[\s_\-]+", "", spelling).lower()


def test_gpu_spellings_map_to_one_model_only():
    owner = {}
    for row in rows("gpus"):
        spellings = [row["gpu_model"], *filter(None, row["aliases"].split("|"))]
        for spelling in spellings:
            key = normalise(spelling)
            assert owner.setdefault(key, row["gpu_model"]) == row["gpu_model"], spelling


@pytest.mark.parametrize(
    "ambiguous",
    [
        "H100",
        "A100",
        "H200",
        "V100",
        "A100 80GB",
        "GH200",
        "A100-80GB",  # SXM or PCIe
        "V100-32GB",  # SXM2 or PCIe
        "P100",  # SXM2 or PCIe
        "H100 NVLink",  # SXM, NVL or a bridged PCIe pair
        "RTX6000",  # Quadro RTX 6000, RTX 6000 Ada
        "RTX 3080",  # 10 or 12 GB
        "RTX A2000",  # 6 or 12 GB
        "RTX PRO 5000",  # 48 or 72 GB
    ],
)
def test_ambiguous_bare_names_are_not_aliases(ambiguous):
    keys = {normalise(a) for row in rows("gpus") for a in row["aliases"].split("|") if a}
    assert normalise(ambiguous) not in keys


def test_dense_fp8_is_about_twice_bf16_where_both_are_known():
    for row in rows("gpus"):
        if row["bf16_dense_tflops"] and row["fp8_dense_tflops"]:
            ratio = float(row["fp8_dense_tflops"]) / float(row["bf16_dense_tflops"])
            assert 1.9 <= ratio <= 2.1, row["gpu_model"]


def test_dense_fp4_is_twice_fp8_or_blackwell_ultras_three_times_and_quoted_in_its_source():
    stated = {}
    for row in rows("gpus"):
        if row["fp4_dense_tflops"]:
            assert row["fp8_dense_tflops"], row["gpu_model"]  # FP4 tensor cores also run FP8
            ratio = float(row["fp4_dense_tflops"]) / float(row["fp8_dense_tflops"])
            # a sparse figure taken as dense would read 4x (6x on Blackwell Ultra)
            # Blackwell Ultra (B300, GB300): 3x, and B300's per-GPU datasheet row 14 / 4.5
            ultra = row["gpu_model"].startswith(("GB300", "B300"))
            assert 1.9 <= ratio <= 2.1 or (ultra and 3.0 <= ratio <= 3.12), row["gpu_model"]
            assert "fp4_dense_tflops" in row["source"], row["gpu_model"]
            stated[row["gpu_model"]] = float(row["fp4_dense_tflops"])
    assert stated["B200-SXM-180GB"] == 9000 and stated["GB300-NVL-288GB"] == 15000
    assert stated["B300-SXM-288GB"] == 14000
    assert "H100-SXM-80GB" not in stated  # Hopper has no FP4 tensor cores


def test_priors_are_marked_as_such():
    for row in rows("fabric_classes"):
        assert (row["is_prior"] == "true") == row["source"].startswith("prior:"), row


def efficiency_at(row, nodes):
    eta, knee = float(row["eta_small_scale"]), float(row["knee_nodes"])
    kappa, floor = float(row["kappa_per_doubling"]), float(row["phi_floor"])
    phi = 1.0 if nodes <= knee else max(floor, 1 - kappa * math.log2(nodes / knee))
    return eta * phi


def test_fabric_classes_reproduce_what_the_field_reports_at_100k_gpus():
    classes = {row["fabric_class"]: row for row in rows("fabric_classes")}
    nodes = 100_000 / 8
    # InfiniBand and AI-optimised Ethernet hold ~90-95% of fabric throughput at this scale
    # (busbw efficiency also pays NCCL protocol overhead, hence >= 0.85 of line rate here).
    for name in ("infiniband", "spectrum_x"):
        assert 0.85 <= efficiency_at(classes[name], nodes) <= 0.95
    # plain ECMP Ethernet falls toward ~60% (NVIDIA's Colossus statement)
    assert 0.55 <= efficiency_at(classes["roce"], nodes) <= 0.65
    # well-tuned fabrics are near each other at small scale
    assert efficiency_at(classes["roce"], 8) >= 0.8 * efficiency_at(classes["infiniband"], 8)
    assert set(classes) == {
        "infiniband",
        "spectrum_x",
        "roce",
        "efa",
        "tcpx",
        "ethernet",
        "ultra_ethernet",
        "none",
    }


INSTANCE_GPUS_HEADER = ["provider", "instance_type", "gpu_model", "gpu_count", "source"]


def test_instance_gpus_name_known_providers_and_gpus_once_each():
    with (REFERENCE_DIR / "instance_gpus.csv").open(newline="", encoding="utf-8") as handle:
        assert next(csv.reader(handle)) == INSTANCE_GPUS_HEADER
    models = {row["gpu_model"] for row in rows("gpus")}
    providers = {row["provider"] for row in rows("providers")}
    keys = [(row["provider"], row["instance_type"]) for row in rows("instance_gpus")]
    assert len(keys) == len(set(keys))
    for row in rows("instance_gpus"):
        assert row["provider"] in providers, row
        assert row["gpu_model"] in models, row
        assert row["instance_type"] == row["instance_type"].strip() and row["instance_type"], row
        assert int(row["gpu_count"]) >= 1, row


def test_the_catalog_loads_both_tables():
    from fabricscope.warehouse.gpus import gpu_catalog

    catalog = gpu_catalog(REFERENCE_DIR)
    assert catalog.by_instance[("aws", "p4d.24xlarge")] == "A100-SXM-40GB"
    assert len(catalog.by_instance) == len(rows("instance_gpus"))


def test_cudo_a800_pci_machine_types_identify_as_the_80gb_pcie_card():
    """Cudo's own machine-type ids say 'pci' (PCIe) and publish 81920 MiB: that is the A800 80GB
    PCIe. The bare name stays unmapped, as 'A800' also names the 40 GB PCIe and the SXM4 part."""
    from fabricscope.warehouse.gpus import gpu_catalog

    catalog = gpu_catalog(REFERENCE_DIR)
    (a800,) = [row for row in rows("gpus") if row["gpu_model"] == "A800-PCIE-80GB"]
    assert (a800["form_factor"], float(a800["memory_gb"]), a800["aliases"]) == ("pcie", 80, "")
    cudo = "intel-ice-lake-a800-pci_8x96v192gb"
    assert catalog.identify("A800", 80.0, cudo, "cudo_compute").model == "A800-PCIE-80GB"
    assert catalog.identify("A800", 80.0, None, "cudo_compute").model is None
    assert catalog.identify("A800", 40.0, cudo, "cudo_compute").model is None


def test_gemm_ceilings_are_measured_shares_of_a_known_gpus_peak():
    peaks = {
        row["gpu_model"]: {"bf16": row["bf16_dense_tflops"], "fp8": row["fp8_dense_tflops"]}
        for row in rows("gpus")
    }
    seen = set()
    for row in rows("gemm_ceilings"):
        key = (row["gpu_model"], row["precision"])
        assert key not in seen, key  # one measurement per GPU and precision
        seen.add(key)
        peak = float(peaks[row["gpu_model"]][row["precision"]])
        # a matmul benchmark reaches less than the datasheet, and more than a third of it
        assert 0.33 < float(row["mamf_tflops"]) / peak < 1.0, row
        # the figure the row quotes is the one it holds
        assert f"{float(row['mamf_tflops']):.1f} of" in row["source"], row
