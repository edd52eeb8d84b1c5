"""The dense FP4 peak (gpus.csv fp4_dense_tflops) in the hardware profiles (peak_fp4: FP8's,
then BF16's, where a GPU has no FP4 figure), and the peak a prompt's matmuls run at per weight
precision. FP4 and int4 weights compute at the FP8 peak even on a GPU with FP4 tensor cores:
running FP4 weights at peak_fp4 was tried and left out (it worsened MLPerf held out, p90 62.2%
-> 91.2%; docs/MODEL.md, serving's "Tried and left out")."""

from __future__ import annotations

import pytest

from fabricscope.model.hardware import HardwareProfiles
from fabricscope.model.serving import ServingConstants, ServingWorkload, estimate_serving
from fabricscope.model.workloads import preset
from fabricscope.rank import catalog

B200 = "B200-SXM-180GB"  # gpus.csv: FP8 4,500, FP4 9,000 dense TFLOP/s
H100 = "H100-SXM-80GB"  # FP8 1,979, no FP4
A100 = "A100-SXM-80GB"  # BF16 312 only
PROMPT = 32_000
# every efficiency 1 of the datasheet peaks (not the measured matmul ceilings: tested apart)
IDEAL = ServingConstants(
    hbm_efficiency=1.0,
    decode_compute_efficiency=1.0,
    prefill_efficiency=1.0,
    sequence_overhead_s=0.0,
    at_matmul_ceiling=False,
)


def one_gpu(model: str) -> HardwareProfiles:
    return catalog.build(
        [{"gpu_model": model, "gpu_count": 1, "gpus_per_node": 8, "fabric_class": "none"}]
    )


def prefill_flops() -> float:
    arch = preset("llama3-8b")
    return 2 * arch.active_params * PROMPT + 2 * arch.layers * PROMPT**2 * arch.q_dim


def prefill_bound_ttft_ms(model: str, weights: str, peak_tflops: float) -> float:
    """The time to first token of one long prompt on one GPU, whose matmuls are nearly all of
    it, at batch 1: a TPOT target that a second sequence's prefill would break at
    ``peak_tflops`` (at another peak nothing fits, or a larger batch does)."""
    job = ServingWorkload(
        name="8b",
        architecture=preset("llama3-8b"),
        weights=weights,
        kv_cache="fp8",
        input_tokens=PROMPT,
        output_tokens=1,
        # batch 1's TPOT is one prefill and one step; a second sequence adds another prefill
        tpot_ms=1.5 * prefill_flops() / (peak_tflops * 1e12) * 1e3,
        latency_percentile="mean",
    )
    result = estimate_serving(job, one_gpu(model), IDEAL, layout=(1, 1)).row(0)
    assert result["fits"] and result["batch"] == 1
    return result["ttft_ms"]


@pytest.mark.parametrize(
    ("model", "weights", "peak_tflops"),
    [
        (B200, "bf16", 2_250),
        (B200, "fp8", 4_500),
        (B200, "fp4", 4_500),  # FP8's: the FP4 peak is not read (left out, see above)
        (B200, "int4", 4_500),
        (H100, "fp4", 1_979),  # no FP4 tensor cores: FP8's
        (A100, "fp4", 312),  # neither FP4 nor FP8: BF16's
    ],
)
def test_a_prompt_is_bound_by_the_peak_of_its_weights_precision(
    model: str, weights: str, peak_tflops: float
) -> None:
    bound_ms = prefill_flops() / (peak_tflops * 1e12) * 1e3
    # the prompt's FLOPs at the peak, plus one decode step (under 1% of it here)
    assert bound_ms <= prefill_bound_ttft_ms(model, weights, peak_tflops) <= 1.01 * bound_ms


def test_peak_fp4_falls_back_to_fp8_then_bf16_where_gpus_csv_has_no_fp4_figure():
    assert one_gpu(B200).peak_fp4[0] == 9_000e12
    assert one_gpu(H100).peak_fp4[0] == one_gpu(H100).peak_fp8[0] == 1_979e12
    assert one_gpu(A100).peak_fp4[0] == one_gpu(A100).peak_bf16[0] == 312e12
