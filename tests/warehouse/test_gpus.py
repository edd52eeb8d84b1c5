"""The GPU catalog on a small reference table of its own: exact spellings, documented
instance types, and why a name did not map."""

from __future__ import annotations

import pytest

from fabricscope.warehouse.gpus import GpuCatalog, GpuMatch, Unmapped, gpu_catalog, instance_gpus

GPUS = """gpu_model,aliases,vendor,form_factor,memory_gb,hbm_tbps,bf16_dense_tflops,fp8_dense_tflops,scaleup_link,scaleup_gbps_per_gpu,tdp_w,source
A100-SXM-40GB,A100 SXM 40GB,nvidia,sxm,40,,,,,,,test
A100-SXM-80GB,A100 SXM 80GB,nvidia,sxm,80,,,,,,,test
A100-PCIE-80GB,A100 PCIe 80GB,nvidia,pcie,80,,,,,,,test
L4-PCIE-24GB,L4,nvidia,pcie,24,,,,,,,test
"""
INSTANCES = """provider,instance_type,gpu_model,gpu_count,source
cloud,box.8,A100-SXM-40GB,8,test
"""


@pytest.fixture
def reference(tmp_path):
    (tmp_path / "gpus.csv").write_text(GPUS, encoding="utf-8")
    (tmp_path / "instance_gpus.csv").write_text(INSTANCES, encoding="utf-8")
    return tmp_path


@pytest.fixture
def catalog(reference):
    return gpu_catalog(reference)


@pytest.mark.parametrize(
    ("name", "memory", "instance_type", "provider", "match"),
    [
        ("A100", 40, "box.8", "cloud", GpuMatch("A100-SXM-40GB")),
        ("NVIDIA A100", None, "box.8", "cloud", GpuMatch("A100-SXM-40GB")),
        ("A100-40GB", None, "box.8", "cloud", GpuMatch("A100-SXM-40GB")),
        ("A100", 80, "box.8", "cloud", GpuMatch(None, "instance_gpu_conflict", "cloud/box.8")),
        (
            "A100 PCIe",
            None,
            "box.8",
            "cloud",
            GpuMatch(None, "instance_gpu_conflict", "cloud/box.8"),
        ),
        ("L4", None, "box.8", "cloud", GpuMatch(None, "instance_gpu_conflict", "cloud/box.8")),
        # another provider's type proves nothing; here only one 40 GB A100 is listed, yet
        # "A100" is not one of its spellings
        ("A100", 40, "box.8", "other", GpuMatch(None, "no_exact_spelling", "A100")),
        ("A100", 80, None, None, GpuMatch(None, "ambiguous_form_factor", "A100")),
        ("A100 SXM", None, None, None, GpuMatch(None, "ambiguous_memory", "A100 SXM")),
        ("A100 SXM", 80, None, None, GpuMatch("A100-SXM-80GB")),
        ("A100 PCIe", 79.6, None, None, GpuMatch("A100-PCIE-80GB")),  # GiB as measured
        ("A100 PCIe", 40, None, None, GpuMatch(None, "memory_mismatch", "A100 PCIe")),
        ("L4", 48, None, None, GpuMatch(None, "memory_mismatch", "L4")),
        ("A10", 24, None, None, GpuMatch(None, "not_in_gpus_csv", "A10")),  # never an A100
        ("A100 NVL", 80, None, None, GpuMatch(None, "not_in_gpus_csv", "A100 NVL")),
        (None, None, "box.8", "cloud", GpuMatch(None)),
    ],
)
def test_identify(catalog, name, memory, instance_type, provider, match):
    assert catalog.identify(name, memory, instance_type, provider) == match


def test_every_reason_is_a_stats_key_word():
    reasons = [v for k, v in vars(Unmapped).items() if not k.startswith("_")]
    assert all(r.replace("_", "").isalpha() and r.islower() for r in reasons)


def test_an_instance_type_naming_an_unknown_gpu_fails_loading(reference):
    (reference / "instance_gpus.csv").write_text(
        INSTANCES + "cloud,box.9,Z100-SXM-80GB,8,test\n", encoding="utf-8"
    )
    instance_gpus.cache_clear()
    with pytest.raises(ValueError, match="Z100-SXM-80GB"):
        GpuCatalog.from_csv(reference / "gpus.csv", instance_gpus(reference))
