"""FP8 recipes (Workload.fp8_recipe): the per-tensor ones (tensorwise, delayed) at the FP8
factors measured and fitted on them, rowwise at torchao's measured ratio to tensorwise per GPU
generation (TORCHAO_H100, TORCHAO_B200), the linear layers only. MXFP8 runs at tensorwise's
rate: its measured cost worsened the held-out figures (docs/MODEL.md, Known limits); blockwise
at Transformer Engine's measured GEMM time ratio per GPU generation."""

from __future__ import annotations

import pytest

from fabricscope.model.hardware import HardwareProfiles
from fabricscope.model.scaling import (
    TE_GEMM_B300_REVIEW_MS,
    TE_GEMM_H200_MS,
    TORCHAO_B200,
    TORCHAO_H100,
    TORCHTITAN_FP8_FACTOR,
    Estimate,
    LayoutGrid,
    ModelConstants,
    _high_precision_flops_step,
    _model_flops_step,
    estimate,
)
from fabricscope.model.workload import Fp8Recipe, Precision, Recompute, Stack, Workload
from fabricscope.model.workloads import preset
from fabricscope.rank import catalog

H100, B200, GB200, A100 = "H100-SXM-80GB", "B200-SXM-180GB", "GB200-NVL-186GB", "A100-SXM-80GB"
# the GPUs' measured matmul ceilings, TFLOP/s (gemm_ceilings.csv): FP8 over BF16
CEILING_RATIO = {H100: 1402.6 / 794.5, B200: 3432.5 / 1745.0}


def node(gpu: str) -> HardwareProfiles:
    return catalog.build(
        [{"gpu_model": gpu, "gpu_count": 8, "gpus_per_node": 8, "fabric_class": "none"}]
    )


def torchao_job(recipe: Fp8Recipe | None, stack: Stack = Stack.FSDP) -> Workload:
    """torchao's benchmark job: torchtitan's Llama3-8B, 8,192 tokens, batch 1 per GPU."""
    job = preset("llama3-8b")
    update: dict[str, object] = {
        "stack": stack,
        "global_batch_size": 8,
        "global_batch_tokens": None,
    }
    if recipe is not None:
        update |= {"precision": Precision.FP8, "fp8_recipe": recipe}
    return Workload.model_validate({**job.model_dump(), **update})


def run(job: Workload, gpu: str) -> Estimate:
    return estimate(job, node(gpu), LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE))


def solved(ratio: float, gpu: str, high: float) -> float:
    """The linear layers' rate over tensorwise's at which the model's compute falls from
    tensorwise by ``ratio`` (tensorwise over the recipe's throughput) on torchao's job."""
    rate = CEILING_RATIO[gpu] * TORCHTITAN_FP8_FACTOR
    return ((1 - high) / rate) / (ratio * (high + (1 - high) / rate) - high)


def test_recipe_factors_are_torchaos_measured_ratios_on_its_own_job():
    job = torchao_job(None)
    assert job.seq_len == 8192 and job.batch_sequences == 8
    high = _high_precision_flops_step(job) / _model_flops_step(job)
    c = ModelConstants()
    expected = {
        (H100, Fp8Recipe.ROWWISE): (TORCHAO_H100, "rowwise", c.rowwise_fp8_factor_hopper),
        (B200, Fp8Recipe.ROWWISE): (TORCHAO_B200, "rowwise", c.rowwise_fp8_factor_blackwell),
    }
    for (gpu, recipe), (table, column, factor) in expected.items():
        measured = table[column] / table["tensorwise"]
        assert factor == pytest.approx(solved(1 / measured, gpu, high), abs=1e-4)
        # the model reproduces the measured ratio on the job (compute: its FLOPs only)
        tensorwise = run(torchao_job(Fp8Recipe.TENSORWISE), gpu).compute_s[0]
        recipe_s = run(torchao_job(recipe), gpu).compute_s[0]
        assert tensorwise / recipe_s == pytest.approx(measured, rel=1e-3)
    # rowwise gained 10% over BF16 on H100 and 4% on B200: still faster than BF16 there
    for gpu in (H100, B200):
        bf16 = run(torchao_job(None), gpu).compute_s[0]
        assert run(torchao_job(Fp8Recipe.ROWWISE), gpu).compute_s[0] < bf16


def test_per_tensor_recipes_leave_every_prediction_as_it_was():
    """tensorwise (the default) and delayed run at the stack's FP8 factor, as before recipes."""
    assert Workload.model_fields["fp8_recipe"].default is Fp8Recipe.TENSORWISE
    for stack in (Stack.MEGATRON, Stack.FSDP):
        for gpu in (H100, GB200):
            delayed = run(torchao_job(Fp8Recipe.DELAYED, stack), gpu)
            tensorwise = run(torchao_job(Fp8Recipe.TENSORWISE, stack), gpu)
            assert delayed.step_time_s[0] == tensorwise.step_time_s[0]
    # with the rowwise and blockwise factors 1, every recipe is tensorwise: nothing else moves
    ones = ModelConstants(
        rowwise_fp8_factor_hopper=1.0,
        rowwise_fp8_factor_blackwell=1.0,
        blockwise_fp8_factor_hopper=1.0,
        blockwise_fp8_factor_blackwell=1.0,
    )
    for recipe in Fp8Recipe:
        job = torchao_job(recipe, Stack.MEGATRON)
        layout = LayoutGrid.partial(job, 1, 1, 1, Recompute.NONE)
        tensorwise = torchao_job(Fp8Recipe.TENSORWISE, Stack.MEGATRON)
        assert (
            estimate(job, node(B200), layout, ones).step_time_s[0]
            == estimate(tensorwise, node(B200), layout).step_time_s[0]
        )


def test_rowwise_takes_its_generations_factor_and_mxfp8_runs_as_tensorwise():
    assert node(B200).blackwell[0] == node(GB200).blackwell[0] == 1.0
    assert node(H100).blackwell[0] == node(A100).blackwell[0] == 0.0
    c = ModelConstants()
    assert c.rowwise_fp8_factor_blackwell < c.rowwise_fp8_factor_hopper < 1.0
    tensorwise = torchao_job(Fp8Recipe.TENSORWISE)
    for gpu in (H100, B200, GB200):
        mx = run(torchao_job(Fp8Recipe.MXFP8), gpu).step_time_s[0]
        assert mx == run(tensorwise, gpu).step_time_s[0]
    # on a GPU without FP8 an FP8 job runs BF16 whatever its recipe
    bf16 = run(torchao_job(None), A100).step_time_s[0]
    for recipe in Fp8Recipe:
        assert run(torchao_job(recipe), A100).step_time_s[0] == pytest.approx(bf16)


def test_blockwise_takes_transformer_engines_measured_gemm_time_ratio_per_generation():
    c = ModelConstants()
    hopper = TE_GEMM_H200_MS["fp8_current"] / TE_GEMM_H200_MS["fp8_blockwise"]
    blackwell = TE_GEMM_B300_REVIEW_MS["mxfp8"] / TE_GEMM_B300_REVIEW_MS["fp8_blockwise"]
    assert c.blockwise_fp8_factor_hopper == pytest.approx(hopper, abs=1e-4)
    assert c.blockwise_fp8_factor_blackwell == pytest.approx(blackwell, abs=1e-4)
    # the linear layers only: the FP8 job's linear time over the blockwise job's is the factor
    for gpu, factor in (
        (H100, c.blockwise_fp8_factor_hopper),
        (B200, c.blockwise_fp8_factor_blackwell),
    ):
        bf16, tensorwise, blockwise = (
            run(torchao_job(r, Stack.MEGATRON), gpu).compute_s[0]
            for r in (None, Fp8Recipe.TENSORWISE, Fp8Recipe.BLOCKWISE)
        )
        assert bf16 > blockwise > tensorwise
        # linear time t at tensorwise's rate, the BF16 part r the same in both FP8 jobs
        hw = node(gpu)
        rate = (
            hw.peak_fp8[0]
            * hw.gemm_ceiling_fp8[0]
            * c.fp8_efficiency_factor
            / (hw.peak_bf16[0] * hw.gemm_ceiling_bf16[0])
        )
        t = (bf16 - tensorwise) / (rate - 1.0)
        assert blockwise == pytest.approx(tensorwise + t * (1.0 / factor - 1.0), rel=1e-9)


def test_a_recipe_needs_fp8_and_its_spellings_are_read():
    base = preset("llama3-8b").model_dump()
    with pytest.raises(ValueError, match="needs precision fp8"):
        Workload.model_validate({**base, "fp8_recipe": "rowwise"})
    spelled = {
        "current": "tensorwise",
        "FP8-CS": "tensorwise",
        "fp8-mx": "mxfp8",
        "fp8_sc": "blockwise",
        "FP8-SC": "blockwise",
    }
    for spelling, recipe in spelled.items():
        job = Workload.model_validate({**base, "precision": "fp8", "fp8_recipe": spelling})
        assert job.fp8_recipe is Fp8Recipe(recipe)


def test_a_summary_names_a_recipe_other_than_the_default():
    from fabricscope.procurement.shortlist import _training_workload_lines

    assert torchao_job(None).precision_label == "bf16"
    assert torchao_job(Fp8Recipe.TENSORWISE).precision_label == "fp8"  # as before recipes
    rowwise = torchao_job(Fp8Recipe.ROWWISE)
    assert rowwise.precision_label == "fp8 (rowwise)"
    assert "fp8 (rowwise), ZeRO stage" in _training_workload_lines(rowwise)[1]
