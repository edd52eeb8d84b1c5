"""The serving model's known answers: decode bound by reading the weights over HBM, the KV
cache sized from the architecture, a model too large for one node spreading over nodes and
then reading the fabric, one node the same on any fabric, and tighter latency targets never
raising the batch."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from fabricscope.model.serving import ServingConstants, ServingWorkload, estimate_serving
from fabricscope.model.workload import Workload
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
    ideal = ServingConstants(
        hbm_efficiency=1.0, decode_compute_efficiency=1.0, sequence_overhead_s=0.0
    )
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


def test_latent_attention_caches_one_latent_per_layer_shared_by_every_head():
    arch = preset("deepseek-v3")  # its preset states MLA's widths
    assert (arch.kv_lora_rank, arch.rope_head_dim) == (512, 64)
    job = ServingWorkload(name="r1", architecture=arch, input_tokens=1, output_tokens=1)
    assert job.kv_bytes_per_token == 61 * (512 + 64) * 2
    plain = arch.model_copy(update={"kv_lora_rank": None, "rope_head_dim": None})
    standard = job.model_copy(update={"architecture": plain})
    assert standard.kv_bytes_per_token == 2 * 61 * 128 * 56 * 2  # 128 heads of 7168 / 128
    # decode attention over the latent: 128 heads x (576 key + 512 value) x 2 per layer
    assert job.attention_flops_per_context_token == 2 * 61 * 128 * (576 + 512)


def test_the_kv_cache_takes_its_share_of_the_memory_the_weights_leave():
    job = ServingWorkload(
        name="70b", architecture=preset("llama3-70b"), input_tokens=1000, output_tokens=1000
    )
    result = estimate_serving(job, profiles((2, "none", 0.0)), layout=(2, 1)).row(0)
    weights_gb = job.weight_bytes / 2 / 1e9
    free_gb = 80 * 2**30 / 1e9 - weights_gb
    kv_gb = result["memory_gb_per_gpu"] - weights_gb
    assert 0 < kv_gb <= 0.9 * free_gb
    # the next batch up would not fit
    assert 2 * kv_gb > 0.9 * free_gb


def test_prefill_all_reduces_every_prompt_token_over_the_gpus_link():
    job = ServingWorkload(
        name="70b",
        architecture=preset("llama3-70b"),
        weights="fp8",
        input_tokens=4000,
        output_tokens=100,
    )
    nvlink = profiles((8, "none", 0.0))
    pcie = catalog.build(
        [
            {
                "gpu_model": H100,
                "gpu_count": 8,
                "gpus_per_node": 8,
                "fabric_class": "none",
                "fabric_gbps_per_gpu": 0.0,
                "intra_node": "pcie4",
            }
        ]
    )
    fast = estimate_serving(job, nvlink, layout=(8, 1)).row(0)
    slow = estimate_serving(job, pcie, layout=(8, 1)).row(0)
    # 2 all-reduces x 80 layers of 4000 x 8192 x 2 bytes, 7/8 of it each way, at 80% of
    # NVLink's bandwidth and 62.5% of PCIe's
    volume = 2 * 80 * 2 * 7 / 8 * 4000 * 8192 * 2
    extra_s = volume / (32e9 * 0.625) - volume / (450e9 * 0.8)
    # (the first token's decode step adds its own, smaller all-reduces)
    assert extra_s * 1e3 <= slow["ttft_ms"] - fast["ttft_ms"] <= 1.1 * extra_s * 1e3


def test_attention_data_parallel_splits_only_the_routed_experts():
    arch = preset("mixtral-8x7b")
    job = ServingWorkload(name="moe", architecture=arch, input_tokens=100, output_tokens=100)
    hardware = profiles((4, "none", 0.0))
    split = estimate_serving(job, hardware, layout=(4, 1)).row(0)
    dep_job = job.model_copy(update={"attention_data_parallel": True})
    dep = estimate_serving(dep_job, hardware, layout=(4, 1)).row(0)
    routed = arch.expert_params * 2 / 1e9  # bf16 bytes, in GB
    dense = arch.total_params * 2 / 1e9 - routed
    kv = lambda row: row["batch"] * 200 * job.kv_bytes_per_token / 4 / 1e9  # noqa: E731
    assert split["memory_gb_per_gpu"] - kv(split) == pytest.approx((dense + routed) / 4)
    assert dep["memory_gb_per_gpu"] - kv(dep) == pytest.approx(dense + routed / 4)
    assert dep["tokens_per_s_per_gpu"] <= split["tokens_per_s_per_gpu"]  # more to read
    # a dense model has no experts to split: the same either way
    plain = job.model_copy(update={"architecture": preset("llama3-8b")})
    one = estimate_serving(plain, hardware, layout=(4, 1)).row(0)
    plain_dep = plain.model_copy(update={"attention_data_parallel": True})
    other = estimate_serving(plain_dep, hardware, layout=(4, 1)).row(0)
    assert one["tokens_per_s_per_gpu"] == other["tokens_per_s_per_gpu"]


def test_the_runtimes_overhead_per_sequence_caps_a_replicas_tokens_per_second():
    job = ServingWorkload(
        name="8b", architecture=preset("llama3-8b"), input_tokens=100, output_tokens=1000
    )
    hardware = profiles((1, "none", 0.0))
    free = estimate_serving(job, hardware, ServingConstants(sequence_overhead_s=0.0)).row(0)
    slow = ServingConstants(sequence_overhead_s=1e-4)  # at most 10,000 tokens/s a replica
    capped = estimate_serving(job, hardware, slow).row(0)
    assert free["tokens_per_s_per_replica"] > 1e4 > capped["tokens_per_s_per_replica"]
    # each step costs the batch's overhead on top of the GPU's time
    assert capped["tpot_ms"] >= capped["batch"] * 1e-4 * 1e3


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
    with pytest.raises(ValidationError):  # a rotary width without MLA's latent
        Workload.model_validate({**preset("llama3-8b").model_dump(), "rope_head_dim": 64})
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
