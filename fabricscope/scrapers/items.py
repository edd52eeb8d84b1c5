"""What spiders yield: raw fields as the source shows them, before any normalisation.

Pipelines turn a ``RawOffer`` into a :class:`fabricscope.warehouse.models.Offer` and a
``RawFabricFact`` into a :class:`fabricscope.warehouse.models.FabricFact`. Spiders fill what
the page says and leave the rest to the spider's ``item_attributes`` and the
pipelines (unit conversion, GPU names, USD, per-GPU prices).
"""

from __future__ import annotations

import scrapy


class RawOffer(scrapy.Item):
    provider = scrapy.Field()
    instance_type = scrapy.Field()
    region = scrapy.Field()
    zones = scrapy.Field()  # availability zones collapsed into this regional offer
    gpu_name = scrapy.Field()  # as published, e.g. "NVIDIA H100 SXM"; mapped by a pipeline
    gpu_count = scrapy.Field()
    gpu_memory_gb = scrapy.Field()
    vcpus = scrapy.Field()
    ram_gb = scrapy.Field()
    pricing_tier = scrapy.Field()
    price_basis = scrapy.Field()
    price = scrapy.Field()  # number or text such as "$2.99 / GPU / hr"; "Contact sales" is no price
    currency = scrapy.Field()
    availability = scrapy.Field()
    source_url = scrapy.Field()
    obtained_by = scrapy.Field()
    # set by the pipelines
    gpu_model = scrapy.Field()
    price_usd_per_hour = scrapy.Field()
    price_usd_per_gpu_hour = scrapy.Field()


class RawFabricFact(scrapy.Item):
    provider = scrapy.Field()
    instance_type = scrapy.Field()
    gpu_name = scrapy.Field()
    fabric_class = scrapy.Field()
    fabric_product = scrapy.Field()
    fabric_gbps_per_node = scrapy.Field()
    fabric_gbps_per_gpu = scrapy.Field()
    rdma = scrapy.Field()
    gpudirect_rdma = scrapy.Field()
    multi_node = scrapy.Field()
    max_cluster_gpus = scrapy.Field()
    topology = scrapy.Field()
    intra_node_link = scrapy.Field()
    published_benchmark_url = scrapy.Field()
    source_url = scrapy.Field()
    evidence = scrapy.Field()
    source_date = scrapy.Field()
    obtained_by = scrapy.Field()
    source_grade = scrapy.Field()  # provider | measured | third_party
    gpu_model = scrapy.Field()  # set by the pipelines


RawItem = RawOffer | RawFabricFact
