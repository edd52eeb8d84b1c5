"""NVFP4 training (Precision.NVFP4): the linear layers at FP8's rate times Transformer Engine's
measured NVFP4 gain on a GPU with FP4 tensor cores (Blackwell Ultra's, Blackwell's), FP8's
rate on a GPU without them (BF16's without FP8 either); attention, the embeddings and the
output layer in BF16 as in an FP8 job."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from fabricscope.model.error_bands import band_for, job_cell, precision_notes
from fabricscope.model.hardware import HardwareProfiles
from fabricscope.model.scaling import (
    NEMO_NVFP4_B200,
    TE_GEMM_B300_MS,
    Estimate,
    LayoutGrid,
    ModelConstants,
    _high_precision_flops_step,
    _model_flops_step,
    estimate,
)
from fabricscope.model.workload import Fp8Recipe, Precision, Recompute, Workload
from fabricscope.model.workloads import preset
from fabricscope.rank import catalog

H100, A100 = "H100-SXM-80GB", "A100-SXM-80GB"
B200, GB200, GB300 = "B200-SXM-180GB", "GB200-NVL-186GB", "GB300-NVL-288GB"


def node(gpu: str) -> HardwareProfiles:
    return catalog.build(
        [{"gpu_model": gpu, "gpu_count": 8, "gpus_per_node": 8, "fabric_class": "none"}]
    )


def job(precision: Precision) -> Workload:
    return Workload.model_validate(
        {**preset("llama3-70b").model_dump(), "precision": precision}
        | {"global_batch_size": 64, "global_batch_tokens": None}
    )


def run(workload: Workload, gpu: str) -> Estimate:
    return estimate(workload, node(gpu), LayoutGrid.partial(workload, 8, 1, 1, Recompute.NONE))


def test_the_gain_is_transformer_engines_measured_gemm_time_ratio():
    c = ModelConstants()
    measured = TE_GEMM_B300_MS["fp8_current"] / TE_GEMM_B300_MS["nvfp4"]
    assert c.nvfp4_gain_blackwell_ultra == pytest.approx(measured, abs=1e-4)
    # the profile's own sum of its 24 layers' fprop, dgrad and wgrad times (ms)
    assert TE_GEMM_B300_MS["nvfp4"] == pytest.approx(24 * 6.453, abs=0.01)
    assert TE_GEMM_B300_MS["fp8_current"] == pytest.approx(24 * 9.147, abs=0.01)


def nemo_job(precision: Precision) -> Workload:
    """The independent NeMo run's job: Llama3-8B, global batch 128 of 8,192 tokens,
    micro-batch 2 (its FP8 is delayed scaling)."""
    update: dict[str, object] = {
        "precision": precision,
        "global_batch_size": 128,
        "global_batch_tokens": None,
        "micro_batch_size": 2,
    }
    if precision is Precision.FP8:
        update["fp8_recipe"] = Fp8Recipe.DELAYED
    return Workload.model_validate({**preset("llama3-8b").model_dump(), **update})


def test_blackwells_gain_reproduces_the_measured_nemo_step_on_8_b200():
    fp8, nvfp4 = (
        estimate(w, node(B200), LayoutGrid.partial(w, 1, 1, 1, Recompute.NONE))
        for w in (nemo_job(Precision.FP8), nemo_job(Precision.NVFP4))
    )
    assert nemo_job(Precision.NVFP4).seq_len == 8192
    measured = NEMO_NVFP4_B200["nvfp4"] / NEMO_NVFP4_B200["fp8_delayed"]
    assert fp8.step_time_s[0] / nvfp4.step_time_s[0] == pytest.approx(measured, rel=1e-3)
    # a linear-layer gain near Transformer Engine's GEMM-level one on B300 (1.42)
    assert 1.3 < ModelConstants().nvfp4_gain_blackwell < 1.6


@pytest.mark.parametrize(
    ("gpu", "gain"),
    [
        (GB300, ModelConstants().nvfp4_gain_blackwell_ultra),
        (B200, ModelConstants().nvfp4_gain_blackwell),
        (GB200, ModelConstants().nvfp4_gain_blackwell),
    ],
)
def test_only_the_linear_layers_take_the_gain_on_fp4_tensor_cores(gpu: str, gain: float):
    fp8, nvfp4, bf16 = (run(job(p), gpu) for p in (Precision.FP8, Precision.NVFP4, Precision.BF16))
    workload = job(Precision.NVFP4)
    linear = 1.0 - _high_precision_flops_step(workload) / _model_flops_step(workload)
    assert 0.7 < linear < 0.95
    # the BF16 part r (attention, embeddings, output layer) is the same in all three jobs;
    # the linear layers take t at FP8's rate, t x R at BF16's and t / gain at NVFP4's
    hw, c = node(gpu), ModelConstants()
    rate = (
        hw.peak_fp8[0]
        * hw.gemm_ceiling_fp8[0]
        * c.fp8_efficiency_factor
        / (hw.peak_bf16[0] * hw.gemm_ceiling_bf16[0])
    )
    fp8_s, nvfp4_s, bf16_s = (e.compute_s[0] for e in (fp8, nvfp4, bf16))
    t = (bf16_s - fp8_s) / (rate - 1.0)
    r = fp8_s - t
    assert 0.0 < r < 0.5 * t
    assert nvfp4_s == pytest.approx(t / gain + r, rel=1e-9)
    # the utilisation is stated against the FP4 peak
    assert nvfp4.mfu[0] < fp8.mfu[0]


@pytest.mark.parametrize(("gpu", "like"), [(H100, Precision.FP8), (A100, Precision.BF16)])
def test_without_fp4_tensor_cores_the_job_runs_the_best_precision_the_gpu_has(
    gpu: str, like: Precision
):
    nvfp4, other = run(job(Precision.NVFP4), gpu), run(job(like), gpu)
    assert nvfp4.compute_s[0] == pytest.approx(other.compute_s[0], rel=1e-12)


def test_four_bit_spellings_other_than_nvfp4_are_refused_with_why():
    base = preset("llama3-8b").model_dump()
    assert Workload.model_validate({**base, "precision": "NVFP4"}).precision is Precision.NVFP4
    for spelling, why in (("fp4", "say which 4-bit recipe"), ("mxfp4", "MXFP4 training")):
        with pytest.raises(ValidationError, match=why):
            Workload.model_validate({**base, "precision": spelling})
    with pytest.raises(ValidationError, match="needs precision fp8"):
        Workload.model_validate({**base, "precision": "nvfp4", "fp8_recipe": Fp8Recipe.ROWWISE})
    assert Workload.model_validate({**base, "precision": "nvfp4"}).precision_label == "nvfp4"


def test_an_nvfp4_jobs_band_is_the_precision_it_runs_on_the_gpu():
    nvfp4 = job(Precision.NVFP4)
    assert job_cell(nvfp4, "blackwell")["precision"] == "nvfp4"
    assert job_cell(nvfp4, "hopper")["precision"] == "fp8"
    assert job_cell(nvfp4, "ampere")["precision"] == "bf16"
    assert band_for(H100, nvfp4) == band_for(H100, job(Precision.FP8))


def test_the_notes_name_the_gpus_an_nvfp4_job_runs_another_precision_on():
    nvfp4 = job(Precision.NVFP4)
    gpus = [GB300, H100, A100, B200, H100, None]
    assert precision_notes(nvfp4, gpus) == [
        f"nvfp4 runs on Blackwell's FP4 tensor cores only: costed as bf16 on {A100}",
        f"nvfp4 runs on Blackwell's FP4 tensor cores only: costed as fp8 on {H100}",
    ]
    assert precision_notes(nvfp4, [GB300, B200]) == []
    assert precision_notes(job(Precision.FP8), gpus) == []
