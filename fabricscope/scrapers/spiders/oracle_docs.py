"""OCI's blog post on OSU and NCCL benchmarks of its H100 cluster network (RDMA)."""

from __future__ import annotations

from fabricscope.scrapers.spiders.base import DocsFabricSpider, DocsFact


class OracleDocsSpider(DocsFabricSpider):
    name = "oracle_docs"
    start_urls = [
        "https://blogs.oracle.com/cloud-infrastructure/zettascale-osu-nccl-benchmark-h100-ai-workloads"
    ]
    refresh_cron = "53 3 * * *"
    # the provider's own blog
    item_attributes = {"provider": "oracle", "obtained_by": "scraped", "source_grade": "provider"}
    facts = (
        DocsFact(
            # H100 is named by the post's URL and title only; the text read names no fabric class,
            # so it stays unknown and nothing else is claimed
            "BM.GPU.H100.8",
            r"This blog will explain: - why non-blocking, lossless RDMA networks are essential for "
            r"scalable AI workloads\. "
            r"- The benchmark result of OCI['’]s AI infrastructure with OSU and NCCL tools\.",
            {
                "fabric_class": "unknown",
                # the post itself publishes OSU and NCCL results measured across nodes
                "published_benchmark_url": (
                    "https://blogs.oracle.com/cloud-infrastructure/"
                    "zettascale-osu-nccl-benchmark-h100-ai-workloads"
                ),
            },
        ),
    )
