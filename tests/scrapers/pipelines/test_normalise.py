import pytest
from scrapy.exceptions import DropItem

from fabricscope.scrapers.pipelines.normalise import NormalisePipeline


@pytest.mark.parametrize(
    ("name", "memory", "model"),
    [
        ("NVIDIA A100 SXM", 80, "A100-SXM-80GB"),
        ("NVIDIA A100 SXM", 40, "A100-SXM-40GB"),  # 40 GB is never an 80 GB, nor the reverse
        ("A100 SXM 80GB", 40, None),  # the name says 80 GB, the page 40 GB: not certain
        ("NVIDIA H100 PCIe", 80, "H100-PCIE-80GB"),  # PCIe is never SXM
        ("NVIDIA H100 SXM", 80, "H100-SXM-80GB"),
        ("H100", 80, None),  # bare H100: SXM, PCIe or NVL? unknown
        ("NVIDIA A10", 24, "A10-PCIE-24GB"),  # A10 is not an A100
        ("A100", 80, None),  # bare A100 at 80 GB: SXM or PCIe? unknown
        ("Quadro RTX 6000", 24, "QUADRORTX6000-PCIE-24GB"),
        ("Quadro RTX 8000", 48, None),  # not in gpus.csv
    ],
)
def test_gpu_names_map_exactly_or_not_at_all(crawler, raw_offer, name, memory, model):
    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(gpu_name=name, gpu_memory_gb=memory)
    )
    assert item["gpu_model"] == model
    if model is None:
        assert crawler.stats.get_value("fabricscope/gpu_unmapped") == 1
        assert item["gpu_name"] == name  # kept as published


@pytest.mark.parametrize(
    ("name", "memory", "instance_type", "model"),
    [
        ("H100", None, "gpu_1x_h100_pcie", "H100-PCIE-80GB"),  # the type names the form
        ("H100", None, "gpu_8x_h100_sxm5", "H100-SXM-80GB"),
        ("H100", None, "1x-H100_NVL-32-65536", "H100-NVL-94GB"),
        ("H200", None, "gpu-h200-sxm_1gpu-16vcpu-200gb", "H200-SXM-141GB"),
        ("A100-80GB", None, "crusoe_A100-80G-sxm4x8", "A100-SXM-80GB"),
        ("A100", 40, "gpu_8x_a100_sxm4", "A100-SXM-40GB"),
        ("A100", None, "denvr_A100-sxm4x8", None),  # SXM, but 40 or 80 GB? still unknown
        ("H100", None, "paperspace_H100", None),  # no form in the type
        ("H100", None, "mixed_pcie_and_sxm", None),  # two forms: not certain
        ("H100", None, "gpu_1x_h100_pcienext", None),  # a word containing pcie is not pcie
    ],
)
def test_an_instance_type_that_names_the_form_factor_settles_a_bare_name(
    crawler, raw_offer, name, memory, instance_type, model
):
    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(gpu_name=name, gpu_memory_gb=memory, instance_type=instance_type)
    )
    assert item["gpu_model"] == model
    assert item["gpu_name"] == name  # the published name is kept as it was


@pytest.mark.parametrize(
    ("basis", "price", "count", "per_hour", "per_gpu_hour"),
    [
        ("per_gpu", 2.0, 8, 16.0, 2.0),
        ("per_instance", 16.0, 8, 16.0, 2.0),
        ("gpu_only_host_extra", 2.5, 4, 10.0, 2.5),
    ],
)
def test_prices_per_hour_and_per_gpu_hour(
    crawler, raw_offer, basis, price, count, per_hour, per_gpu_hour
):
    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(price_basis=basis, price=price, gpu_count=count)
    )
    assert item["price_usd_per_hour"] == per_hour
    assert item["price_usd_per_gpu_hour"] == per_gpu_hour


def test_other_currencies_convert_through_the_dated_rate_table(crawler, raw_offer):
    from fabricscope.scrapers.normalise import usd_rates

    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(price=2.0, currency="EUR", price_basis="per_gpu", gpu_count=1)
    )
    assert item["price_usd_per_gpu_hour"] == pytest.approx(2.0 * usd_rates()["EUR"])


def test_a_currency_without_a_rate_is_dropped(crawler, raw_offer):
    with pytest.raises(DropItem, match="no_fx_rate"):
        NormalisePipeline.from_crawler(crawler).process_item(raw_offer(currency="XYZ"))


@pytest.mark.parametrize(
    ("provider", "instance_type", "name", "memory", "model"),
    [
        # the provider documents the GPU of the exact instance type: it settles a bare name
        ("aws", "p4d.24xlarge", "A100", 40, "A100-SXM-40GB"),
        ("aws", "p4de.24xlarge", "A100-80GB", 80, "A100-SXM-80GB"),
        ("gcp", "a3-megagpu-8g", "H100-MEGA", 80, "H100-SXM-80GB"),
        ("oracle", "BM.GPU4.8", "A100", 40, "A100-SXM-40GB"),
        ("azure", "Standard_NC40ads_H100_v5", "H100", None, "H100-NVL-94GB"),
        ("azure", "Standard_NC24ads_A100_v4", "A100-80GB", None, "A100-PCIE-80GB"),
        ("lambda", "gpu_8x_a100", "A100", 40, "A100-SXM-40GB"),
        ("lambda", "gpu_2x_a100", "A100", 40, "A100-PCIE-40GB"),
        # exact keys only: the same type at another provider, or another spelling, is not it
        ("lambda", "p4d.24xlarge", "A100", 40, None),
        ("aws", "P4D.24XLARGE", "A100", 40, None),
        # Lambda sells a 1x SXM and a 1x PCIe A100 40 GB; its dashboard names them apart
        ("lambda", "gpu_1x_a100", "A100", 40, "A100-PCIE-40GB"),
        ("lambda", "gpu_1x_a100_sxm4", "A100", 40, "A100-SXM-40GB"),
        # a part settled by the provider's own output on that shape, and one nothing settles
        ("oracle", "BM.GPU3.8", "V100", 16, "V100-SXM-16GB"),
        ("oracle", "VM.GPU3.4", "V100", 16, None),
    ],
)
def test_an_instance_type_documented_by_its_provider_names_the_gpu(
    crawler, raw_offer, provider, instance_type, name, memory, model
):
    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(
            provider=provider, instance_type=instance_type, gpu_name=name, gpu_memory_gb=memory
        )
    )
    assert item["gpu_model"] == model
    assert item["gpu_name"] == name  # kept as published


@pytest.mark.parametrize(
    ("instance_type", "name", "memory"),
    [
        ("p5.48xlarge", "NVIDIA H100 PCIe", 80),  # H100 PCIe is never the SXM AWS documents
        ("p5.48xlarge", "L40S", 48),  # another family
        ("p4d.24xlarge", "A100", 80),  # AWS documents 40 GB parts: off by more than 10%
        ("p4d.24xlarge", "A100 80GB", None),  # the name says 80 GB
        ("p4d.24xlarge", "A100 PCIe", None),  # the name says PCIe
        ("p5.48xlarge", "GAUDI2", 96),  # not a GPU we know
    ],
)
def test_a_name_or_memory_contradicting_the_documented_gpu_stays_null_and_is_counted(
    crawler, raw_offer, instance_type, name, memory
):
    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(provider="aws", instance_type=instance_type, gpu_name=name, gpu_memory_gb=memory)
    )
    assert item["gpu_model"] is None
    stats = crawler.stats
    assert stats.get_value("fabricscope/gpu_unmapped") == 1
    assert stats.get_value("fabricscope/gpu_unmapped/instance_gpu_conflict") == 1
    assert (
        stats.get_value(f"fabricscope/gpu_unmapped/instance_gpu_conflict/aws/{instance_type}") == 1
    )


def test_a_documented_instance_type_does_not_invent_a_gpu_nobody_named(crawler, raw_offer):
    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(provider="aws", instance_type="p4d.24xlarge", gpu_name=None, gpu_memory_gb=None)
    )
    assert item["gpu_model"] is None
    assert crawler.stats.get_value("fabricscope/gpu_unmapped") is None


@pytest.mark.parametrize(
    ("name", "memory", "instance_type", "reason"),
    [
        ("A100", 80, "paperspace_A100", "ambiguous_form_factor"),  # SXM or PCIe 80 GB?
        ("H200", 141, "1H200.141S.44V", "ambiguous_form_factor"),  # SXM or NVL?
        ("NVIDIA H100 NVLink", 80, "x", "ambiguous_form_factor"),  # "NVLink" names no product
        ("A100 SXM", None, "x", "ambiguous_memory"),  # 40 or 80 GB?
        ("A100", None, "denvr_A100-sxm4x8", "ambiguous_memory"),  # SXM, but 40 or 80 GB?
        ("GAUDI2", 96, "denvr_Gaudi2x8", "not_in_gpus_csv"),
        ("RTX 4070", 12, "x", "not_in_gpus_csv"),
        ("RTX4090", 47.99, "1x-RTX_4090-32-65536", "memory_mismatch"),  # a 48 GB card: not ours
        ("H100_NVL", 80, "n3-H100x8-NVLink", "memory_mismatch"),  # an H100 NVL has 94 GB
    ],
)
def test_unmapped_names_are_counted_by_reason(
    crawler, raw_offer, name, memory, instance_type, reason
):
    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(
            provider="vast_ai", instance_type=instance_type, gpu_name=name, gpu_memory_gb=memory
        )
    )
    assert item["gpu_model"] is None
    assert crawler.stats.get_value("fabricscope/gpu_unmapped") == 1
    assert crawler.stats.get_value(f"fabricscope/gpu_unmapped/{reason}") == 1
    assert crawler.stats.get_value(f"fabricscope/gpu_unmapped/{reason}/{name}") == 1


@pytest.mark.parametrize(
    ("name", "memory", "instance_type", "model"),
    [
        # catalog spellings that name exactly one GPU
        ("A100_80G_SXM4", 80, "x", "A100-SXM-80GB"),
        ("H100_PCIE", 80, "x", "H100-PCIE-80GB"),
        ("H100-80G-SXM5", None, "x", "H100-SXM-80GB"),
        ("L40s", 48, "x", "L40S-PCIE-48GB"),
        ("A10G", 22.35, "g5.xlarge", "A10G-PCIE-24GB"),  # 22,888 MiB as AWS measures it
        ("NVIDIA GeForce RTX 4090", 24, "x", "RTX4090-PCIE-24GB"),
        ("RTX5090", 31.84, "x", "RTX5090-PCIE-32GB"),
        # the memory decides where a name alone does not: GiB as measured, GB as sold
        ("RTXA2000", 5.99, "x", "A2000-PCIE-6GB"),
        ("RTX6000", 24, "gpu_1x_rtx6000", "QUADRORTX6000-PCIE-24GB"),
        ("RTX6000", 48, "x", None),  # not the Quadro; "RTX6000" alone names no one card
        # Cudo's instance types spell PCIe "pci"
        ("A100", 80, "intel-ice-lake-a100-pci_1x12v24gb", "A100-PCIE-80GB"),
        ("A100", 80, "epyc-genoa-a100-pcie_1x12v24gb", "A100-PCIE-80GB"),
        ("A100", 80, "epyc-genoa-a100-pcieq_1x12v24gb", None),  # "pcieq" is no word we know
    ],
)
def test_catalog_spellings(crawler, raw_offer, name, memory, instance_type, model):
    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(
            provider="cudo_compute",
            instance_type=instance_type,
            gpu_name=name,
            gpu_memory_gb=memory,
        )
    )
    assert item["gpu_model"] == model
