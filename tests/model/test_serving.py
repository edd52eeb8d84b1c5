"""The serving model's known answers: decode bound by reading the weights over HBM, the KV
cache sized from the architecture, a model too large for one node spreading over nodes and
then reading the fabric, one node the same on any fabric, and tighter latency targets never
raising the batch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from fabricscope.model.serving import (
    BATCHES,
    ServingConstants,
    ServingWorkload,
    estimate_serving,
    poisson_interruptions,
)
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
        name="8b",
        architecture=arch,
        input_tokens=1,
        output_tokens=1000,
        tpot_ms=1.05 * bound,
        latency_percentile="mean",
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


@pytest.mark.parametrize(("gpu", "ceiling"), [("MI300X-OAM-192GB", 668.4), (H100, 794.5)])
def test_compute_runs_at_the_gpus_measured_matmul_ceiling_not_its_datasheet_peak(gpu, ceiling):
    # an 8,192-token prompt of an 8B model on one GPU, a few sequences decoding (the TPOT
    # target): its time to first token is nearly all prefill, compute at the efficiency's
    # share of the matmuls' measured best (gemm_ceilings.csv, BF16 TFLOP/s) where the plain
    # roofline takes the datasheet peak
    spec = catalog.gpu_specs()[gpu]
    share = ceiling / spec.bf16_dense_tflops
    job = ServingWorkload(
        name="long prompt",
        architecture=preset("llama3-8b"),
        weights="bf16",
        input_tokens=8192,
        output_tokens=1000,
        tpot_ms=10.0,
        latency_percentile="mean",
    )
    hw = catalog.build([{"gpu_model": gpu, "gpu_count": 1, "gpus_per_node": 8}])
    at_ceiling = estimate_serving(job, hw, ServingConstants(), (1, 1)).row(0)
    at_peak = estimate_serving(job, hw, ServingConstants(at_matmul_ceiling=False), (1, 1)).row(0)
    slower = at_ceiling["ttft_ms"] / at_peak["ttft_ms"]
    assert 0.95 / share < slower <= 1.0 / share
    assert at_ceiling["tokens_per_s_per_gpu"] < at_peak["tokens_per_s_per_gpu"]


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
        assert result["tpot_ms"] <= result["tpot_ms_at_percentile"] <= target
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


def test_targets_hold_at_their_percentile_by_mlperfs_measured_ratios():
    c = ServingConstants()
    job = ServingWorkload(
        name="70b",
        architecture=preset("llama3-70b"),
        weights="fp8",
        input_tokens=1000,
        output_tokens=300,
        tpot_ms=40,
        ttft_ms=2000,
    )
    hardware = profiles((8, "none", 0.0))
    at = {
        q: estimate_serving(job.model_copy(update={"latency_percentile": q}), hardware).row(0)
        for q in ("mean", "p50", "p99")
    }
    for q, row in at.items():
        if q != "p99":
            assert row["tpot_ms_at_percentile"] == pytest.approx(
                row["tpot_ms"] * c.latency_ratio("tpot", q)
            )
        assert row["ttft_ms_at_percentile"] == pytest.approx(
            row["ttft_ms"] * c.latency_ratio("ttft", q)
        )
        assert row["tpot_ms_at_percentile"] <= 40
    # p99: a step's jitter plus the prompts arriving in a request's life at their p99, more
    # than the mean's share of them; at one length, step = TTFT - prefill and
    # TPOT = step + b x prefill / output give the prefill
    row = at["p99"]
    b, out = row["batch"], 300
    prefill = (row["ttft_ms"] - row["tpot_ms"]) / (1.0 - b / out)
    step = row["ttft_ms"] - prefill
    burst = float(poisson_interruptions(b, [np.array(prefill)], [1.0]))
    assert row["tpot_ms_at_percentile"] == pytest.approx(step * c.tpot_step_p99_ratio + burst / out)
    assert burst > b * prefill
    # a p99 target leaves less room than a mean one: never a larger batch, never more tokens
    assert at["p99"]["batch"] <= at["mean"]["batch"]
    assert at["p99"]["tokens_per_s_per_gpu"] < at["mean"]["tokens_per_s_per_gpu"]
    assert c.latency_ratio("ttft", "p99") > c.latency_ratio("tpot", "p99") > 1.0


def test_a_mix_of_lengths_is_read_by_its_means_and_its_longest_prompt():
    arch = preset("llama3-70b")
    single = ServingWorkload(
        name="one", architecture=arch, input_tokens=1000, output_tokens=200, requests_per_s=3
    )
    as_mix = ServingWorkload(
        name="one",
        architecture=arch,
        mix=[{"input_tokens": 1000, "output_tokens": 200, "share": 1.0}],
        requests_per_s=3,
    )
    hardware = profiles((8, "none", 0.0))
    assert estimate_serving(single, hardware).row(0) == estimate_serving(as_mix, hardware).row(0)

    mix = ServingWorkload(
        name="mix",
        architecture=arch,
        mix=[
            {"input_tokens": 500, "output_tokens": 100, "share": 0.75},
            {"input_tokens": 8000, "output_tokens": 1000, "share": 0.25},
        ],
        requests_per_s=4,
    )
    assert (mix.input_tokens, mix.output_tokens) == (2375, 325)
    assert mix.mean_output_tokens == pytest.approx(325.0)
    # a decoding sequence is a long one 250 / 325 of the time: it decodes 10x longer
    assert mix.decode_context_tokens == pytest.approx((75 * (500 + 50) + 250 * (8000 + 500)) / 325)
    assert mix.longest_context_tokens == 9000
    ttft = {}
    for name, prompt in (("short", 500), ("long", 8000)):
        alone = mix.model_copy(update={"mix": None, "input_tokens": prompt})
        ttft[name] = estimate_serving(alone, hardware, layout=(8, 1)).row(0)["ttft_ms"]
    mixed = estimate_serving(mix, hardware, layout=(8, 1)).row(0)
    # the mean TTFT lies between the two; the one the target is held to is the longest's
    assert ttft["short"] < mixed["ttft_ms"] < ttft["long"]
    assert mixed["ttft_ms_at_percentile"] > ttft["long"]


def test_a_mix_is_refused_when_its_shares_or_lengths_disagree():
    arch = preset("llama3-8b")
    kinds = [
        {"input_tokens": 100, "output_tokens": 10, "share": 0.5},
        {"input_tokens": 300, "output_tokens": 30, "share": 0.4},
    ]
    with pytest.raises(ValidationError, match=r"sum to 0\.9"):
        ServingWorkload(name="x", architecture=arch, mix=kinds)
    kinds[1]["share"] = 0.5
    with pytest.raises(ValidationError, match="not the mix's mean"):
        ServingWorkload(name="x", architecture=arch, mix=kinds, input_tokens=100)
    job = ServingWorkload(name="x", architecture=arch, mix=kinds, output_tokens_per_s=400)
    assert job.requests_per_s == pytest.approx(20.0)  # 400 tokens/s over 20 tokens each
    assert ServingWorkload.model_validate(job.model_dump()) == job  # round-trips


def test_experts_spread_over_nodes_talk_over_the_fabric():
    """DeepSeek-V3 in FP8 served attention data-parallel does not fit 8 H100s (each holds
    every weight but a share of the routed experts): it spreads its experts over two nodes
    on a fast fabric, and on a slow one prefers pipeline stages, which send less."""
    base = preset("deepseek-v3")
    job = ServingWorkload(
        name="v3",
        architecture=base,
        weights="fp8",
        kv_cache="fp8",
        input_tokens=1024,
        output_tokens=1024,
        tpot_ms=80,
        attention_data_parallel=True,
    )
    hardware = profiles((8, "none", 0.0), (16, "infiniband", 400.0), (16, "ethernet", 100.0))
    result = estimate_serving(job, hardware)
    assert not result.fits[0]
    assert result.expert_parallel_across[1] and result.tp[1] == 16 and result.pp[1] == 1
    assert result.multi_node[1] and result.fabric_share[1] > 0
    assert result.tokens_per_s_per_gpu[2] < result.tokens_per_s_per_gpu[1]
    ep = estimate_serving(job, hardware, layout=(16, 1))
    assert ep.expert_parallel_across[2]
    # the all-to-all's bytes over a quarter of the bandwidth: a larger share of each step
    assert ep.fabric_share[2] > ep.fabric_share[1]
    plain = job.model_copy(update={"attention_data_parallel": False})
    assert not estimate_serving(plain, hardware).expert_parallel_across.any()


def test_disaggregated_serving_hands_the_kv_cache_over_nvlink_or_the_fabric():
    job = ServingWorkload(
        name="70b",
        architecture=preset("llama3-70b"),
        weights="fp8",
        kv_cache="fp8",
        input_tokens=4000,
        output_tokens=300,
        tpot_ms=30,
        latency_percentile="mean",
    )
    hardware = profiles((8, "none", 0.0), (16, "infiniband", 400.0), (16, "ethernet", 25.0))
    together = estimate_serving(job, hardware, layout=(4, 1)).row(0)
    apart_job = job.model_copy(update={"disaggregated": True})
    apart = estimate_serving(apart_job, hardware, layout=(4, 1))
    # decoding no longer waits for prompts: a larger batch meets the same TPOT
    assert apart.batch[0] >= together["batch"]
    assert apart.tokens_per_s_per_gpu[0] > together["tokens_per_s_per_gpu"]
    # TP4 prefill and TP4 decode fit one 8-GPU node: NVLink, the fabric does not matter
    assert not apart.kv_over_fabric[0] and not apart.multi_node[0]
    kv_bytes = 4000 * job.kv_bytes_per_token
    assert apart.kv_transfer_ms[0] == pytest.approx(kv_bytes / (4 * 450e9 * 0.8) * 1e3, rel=0.2)
    # TP8 replicas fill a node: the KV cache crosses the fabric, faster on the faster one
    wide = estimate_serving(apart_job, hardware, layout=(8, 1))
    assert wide.kv_over_fabric[1] and wide.multi_node[1]
    assert 0 < wide.kv_transfer_ms[1] < wide.kv_transfer_ms[2]
    assert 0 < wide.fabric_share[1] < wide.fabric_share[2]
    assert wide.ttft_ms[1] < wide.ttft_ms[2]


def _poisson_p99(mean: float) -> int:
    """The exact 99th percentile of a Poisson count (its pmf summed in logs)."""
    k = np.arange(int(3 * mean + 50))
    log_pmf = -mean + k * np.log(mean) - np.array([math.lgamma(i + 1.0) for i in k])
    return int(k[np.searchsorted(np.cumsum(np.exp(log_pmf)), 0.99)])


@pytest.mark.parametrize("batch", [int(b) for b in BATCHES])
def test_the_prompts_interrupting_a_request_are_a_poisson_count_at_their_p99(batch):
    # one prompt length of 1 s: the sum is the count, within half a prompt of the exact
    # Poisson quantile at every batch the model tries
    one = float(poisson_interruptions(float(batch), [np.array(1.0)], [1.0]))
    assert abs(one - _poisson_p99(batch)) <= 0.5
    # a mix of lengths with the same mean has a longer tail (its variance is E[x^2])
    mixed = float(poisson_interruptions(float(batch), [np.array(0.5), np.array(1.5)], [0.5, 0.5]))
    assert mixed > one
