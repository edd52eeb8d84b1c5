"""The serving model's known answers: decode bound by reading the weights over HBM, the KV
cache sized from the architecture, a model too large for one node spreading over nodes and
then reading the fabric, one node the same on any fabric, and tighter latency targets never
raising the batch."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from fabricscope.model.serving import ServingConstants, ServingWorkload, estimate_serving
from fabricscope.model.workloads import preset
from fabricscope.rank import catalog

H100 = "H100-SXM-80GB"
H100_HBM_BYTES_PER_S = 3.35e12  # gpus.csv: 3.35 TB/s


def profiles(*rows: tuple[int, str, float]):
    return catalog.build(
        [
            {
                "gpu_model": H100,
                "gpu_count": count,
                "gpus_per_node": 8,
                "fabric_class": fabric,
                "fabric_gbps_per_gpu": gbps,
            }
            for count, fabric, gbps in rows
        ]
    )


def test_decode_reads_every_weight_once_per_token_and_the_batchs_kv_cache():
    ideal = ServingConstants(hbm_efficiency=1.0, decode_compute_efficiency=1.0)
    arch = preset("llama3-8b")
    bound = 2 * arch.total_params / H100_HBM_BYTES_PER_S * 1e3  # ms per token at batch 1
    job = ServingWorkload(
        name="8b", architecture=arch, input_tokens=1, output_tokens=1000, tpot_ms=1.05 * bound
    )
    result = estimate_serving(job, profiles((1, "none", 0.0)), ideal).row(0)
    assert result["tp"] == 1 and result["batch"] >= 1
    kv = result["batch"] * (1000 / 2 + 1) * job.kv_bytes_per_token
    expected = (2 * arch.total_params + kv) / H100_HBM_BYTES_PER_S * 1e3
    assert result["tpot_ms"] == pytest.approx(expected, rel=0.01)
    assert bound <= result["tpot_ms"] <= 1.05 * bound


def test_kv_bytes_per_token_come_from_the_architecture():
    arch = preset("llama3-70b")  # 80 layers, 8 KV heads of 128
    job = ServingWorkload(name="70b", architecture=arch, input_tokens=1, output_tokens=1)
    assert job.kv_bytes_per_token == 2 * 80 * 8 * 128 * 2
    fp8 = job.model_copy(update={"kv_cache": "fp8", "weights": "fp8"})
    assert fp8.kv_bytes_per_token == job.kv_bytes_per_token / 2
    assert fp8.weight_bytes == pytest.approx(arch.total_params)


def test_a_model_too_large_for_one_node_spreads_over_nodes_and_reads_the_fabric():
    job = ServingWorkload(
        name="405b",
        architecture=preset("llama3-405b"),
        input_tokens=1000,
        output_tokens=200,
        tpot_ms=150,
    )
    hardware = profiles((8, "none", 0.0), (16, "infiniband", 400.0), (16, "ethernet", 12.5))
    result = estimate_serving(job, hardware)
    assert not result.fits[0]  # 810 GB of bf16 weights on 640 GB
    assert result.fits[1] and result.multi_node[1] and result.replica_gpus[1] == 16
    assert 0 < result.fabric_share[1] < result.fabric_share[2]
    assert result.tokens_per_s_per_gpu[2] < result.tokens_per_s_per_gpu[1]


def test_one_node_serves_the_same_on_every_fabric():
    job = ServingWorkload(
        name="70b",
        architecture=preset("llama3-70b"),
        input_tokens=2000,
        output_tokens=500,
        tpot_ms=60,
    )
    hardware = profiles((8, "infiniband", 400.0), (8, "ethernet", 12.5), (8, "none", 0.0))
    result = estimate_serving(job, hardware)
    for name in ("tokens_per_s_per_gpu", "tpot_ms", "ttft_ms", "batch", "tp"):
        values = getattr(result, name)
        assert values[0] == values[1] == values[2], name
    assert not result.multi_node.any() and (result.fabric_share == 0).all()


def test_tighter_latency_targets_never_raise_the_batch():
    arch = preset("llama3-70b")
    hardware = profiles((8, "none", 0.0))
    batches, rates = [], []
    for target in (200.0, 100.0, 60.0, 40.0, 30.0, 25.0):
        job = ServingWorkload(
            name="70b",
            architecture=arch,
            input_tokens=1000,
            output_tokens=300,
            tpot_ms=target,
        )
        result = estimate_serving(job, hardware).row(0)
        assert result["tpot_ms"] <= target
        batches.append(result["batch"])
        rates.append(result["tokens_per_s_per_gpu"])
    assert batches == sorted(batches, reverse=True) and batches[0] > batches[-1]
    assert rates == sorted(rates, reverse=True)


def test_the_load_sets_the_replicas_and_gpus_needed():
    job = ServingWorkload(
        name="8b",
        architecture=preset("llama3-8b"),
        input_tokens=500,
        output_tokens=200,
        requests_per_s=50.0,
        tpot_ms=50,
    )
    result = estimate_serving(job, profiles((8, "none", 0.0))).row(0)
    per_replica_requests = result["tokens_per_s_per_replica"] / 200
    assert result["gpus_needed"] == np.ceil(50 / per_replica_requests) * result["replica_gpus"]


def test_a_bad_serving_workload_is_refused():
    with pytest.raises(ValidationError):
        ServingWorkload(name="x", architecture=preset("llama3-8b"), input_tokens=0, output_tokens=1)
    with pytest.raises(ValidationError):
        ServingWorkload(
            name="x",
            architecture=preset("llama3-8b"),
            input_tokens=1,
            output_tokens=1,
            weights="fp16",
        )
