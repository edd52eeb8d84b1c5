"""How an offer finds its fabric: its own instance type, or a sourced product-line row."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabricscope.warehouse.db import WarehouseError, read_frame
from fabricscope.warehouse.gpus import REFERENCE_DIR
from fabricscope.warehouse.load import (
    RunBatch,
    fabric_table,
    init_warehouse,
    offers_table,
    publish_run,
)
from fabricscope.warehouse.models import FabricFact, utc_now
from tests.helpers import make_offer, run_record

NOW = utc_now()


def offer(provider, instance_type, gpu_name, gpu_model=None, count=8):
    return make_offer(
        8.0,
        provider=provider,
        source=f"{provider}_page",
        instance_type=instance_type,
        gpu_name=gpu_name,
        gpu_model=gpu_model,
        gpu_count=count,
        source_url="https://example.invalid/prices",
        observed_at=NOW,
    )


def fact(provider, instance_type, fabric_class, gpu_name=None):
    return FabricFact(
        provider=provider,
        source="curated_fabric",
        instance_type=instance_type,
        gpu_name=gpu_name,
        fabric_class=fabric_class,
        source_url="https://example.invalid/docs",
        evidence=f"{instance_type}: {fabric_class}",
        obtained_by="curated",
        source_grade="provider",
        observed_at=NOW,
    )


def catalog(warehouse_path, offers, facts, reference_dir=REFERENCE_DIR):
    publish_run(
        warehouse_path,
        RunBatch(run_record("offers_page"), offers_table(offers)),
        reference_dir=reference_dir,
    )
    publish_run(
        warehouse_path,
        RunBatch(run_record("curated_fabric"), None, fabric_table(facts)),
        reference_dir=reference_dir,
    )
    rows = read_frame(
        warehouse_path,
        "select provider, instance_type, fabric_class, fabric_match from instance_catalog",
    )[1].astype(object)
    rows = rows.where(rows.notna(), None)
    return {
        (r.provider, r.instance_type): (r.fabric_class, r.fabric_match) for r in rows.itertuples()
    }


def with_product_lines(warehouse_path: Path, lines: list[str]) -> Path:
    """The bundled reference data plus ``lines`` in fabric_product_lines.csv, loaded into the
    warehouse; returns the folder."""
    folder = warehouse_path.parent / "reference"
    shutil.copytree(REFERENCE_DIR, folder)
    with (folder / "fabric_product_lines.csv").open("a", encoding="utf-8") as handle:
        handle.writelines(f"{line}\n" for line in lines)
    init_warehouse(warehouse_path, folder)
    return folder


def test_fabric_links(warehouse_path):
    offers = [
        offer("alpha", "8x H100 IB", "H100 SXM", "H100-SXM-80GB"),
        offer("alpha", "8x H100 eth", "H100 SXM", "H100-SXM-80GB"),
        offer("beta", "gpu-h100-8", "H100"),  # mapped to its product line by a sourced row
        offer("beta", "gpu-h100-pcie-8", "H100 PCIe", "H100-PCIE-80GB"),  # not in the line
        offer("beta", "gpu-a10-1", "A10", "A10-PCIE-24GB", count=1),
        offer("gamma", "8x H100", "H100 SXM", "H100-SXM-80GB"),
    ]
    facts = [
        fact("alpha", "8x H100 IB", "infiniband"),  # exact instance types
        fact("alpha", "8x H100 eth", "ethernet"),
        fact("beta", "HGX H100 (InfiniBand node pools)", "infiniband", "H100"),
        fact("gamma", "H100 clusters", "infiniband", "H100"),  # no line maps gamma's offer
    ]
    reference = with_product_lines(
        warehouse_path,
        ["beta,gpu-h100-8,HGX H100 (InfiniBand node pools),https://example.invalid/pools"],
    )
    links = catalog(warehouse_path, offers, facts, reference)
    assert links[("alpha", "8x H100 IB")] == ("infiniband", "instance_type")
    assert links[("alpha", "8x H100 eth")] == ("ethernet", "instance_type")
    assert links[("beta", "gpu-h100-8")] == ("infiniband", "product_line")
    # never by GPU family: the same GPU on another product line of the provider stays unknown
    # (CoreWeave's H100 PCIe offers were once labelled with its HGX H100 pools' InfiniBand)
    assert links[("beta", "gpu-h100-pcie-8")] == (None, None)
    assert links[("beta", "gpu-a10-1")] == (None, None)
    assert links[("gamma", "8x H100")] == (None, None)
    assert len(links) == len(offers)


def test_a_product_line_row_without_a_source_is_refused(warehouse_path):
    with pytest.raises(WarehouseError, match="fabric_product_lines"):
        with_product_lines(warehouse_path, ["beta,gpu-h100-8,HGX H100,"])
