import pytest
from scrapy.exceptions import DropItem

from scrapers.pipelines.normalise import NormalisePipeline


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
        ("Quadro RTX 6000", 24, None),
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
    from scrapers.normalise import usd_rates

    item = NormalisePipeline.from_crawler(crawler).process_item(
        raw_offer(price=2.0, currency="EUR", price_basis="per_gpu", gpu_count=1)
    )
    assert item["price_usd_per_gpu_hour"] == pytest.approx(2.0 * usd_rates()["EUR"])


def test_a_currency_without_a_rate_is_dropped(crawler, raw_offer):
    with pytest.raises(DropItem, match="no_fx_rate"):
        NormalisePipeline.from_crawler(crawler).process_item(raw_offer(currency="XYZ"))
