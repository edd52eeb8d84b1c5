"""Azure ND-series InfiniBand: a node description and the ND MI300X v5 size-series page."""

from __future__ import annotations

from fabricscope.scrapers.spiders.base import DocsFabricSpider, DocsFact


class AzureDocsSpider(DocsFabricSpider):
    name = "azure_docs"
    start_urls = [
        # third-party notes on the VM (Glenn Lockwood), citing Microsoft Learn's size page
        "https://glennklockwood.com/garden/nodes/azure-nd-h100-v5",
        "https://github.com/MicrosoftDocs/azure-docs/blob/main/articles/virtual-machines/sizes/"
        "gpu-accelerated/nd-mi300x-v5-series.md",
    ]
    refresh_cron = "47 3 * * *"
    item_attributes = {"provider": "azure", "obtained_by": "scraped"}
    # VM size names as the Azure Retail Prices API spells them (armSkuName), so facts join offers
    facts = (
        DocsFact(
            "Standard_ND96isr_H100_v5",
            r"Each VM has.{0,400}?8x 400G ConnectX-7 NDR InfiniBand HCAs",
            {
                "fabric_class": "infiniband",
                "fabric_product": "8x 400G ConnectX-7 NDR InfiniBand HCAs",
                "fabric_gbps_per_node": 3200,  # 8 x 400G per VM (the whole node)
                "source_grade": "third_party",  # a personal site, however well it cites
            },
        ),
        DocsFact(
            "Standard_ND96isr_MI300X_v5",  # the series' only size, in the page's size table
            r"Infiniband: Supported, GPUDirect RDMA, 8x400 Gigabit NDR",
            {
                "fabric_class": "infiniband",
                "fabric_product": "8x400 Gigabit NDR InfiniBand",
                "fabric_gbps_per_node": 3200,  # 8 x 400 Gigabit
                "rdma": "yes",
                "gpudirect_rdma": "yes",
                "source_grade": "provider",  # Microsoft's own docs repository
            },
        ),
    )
