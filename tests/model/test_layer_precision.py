"""A mixed-precision recipe's exceptions by layer and module (Workload.layer_precision): the
first and last layers whole in BF16, modules in BF16 in every layer, an nvfp4 job's modules in
FP8; and an nvfp4 job's multi-token-prediction block in BF16, as Megatron-Core runs it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from fabricscope.model.error_bands import precision_notes
from fabricscope.model.scaling import (
    Estimate,
    LayoutGrid,
    _high_precision_flops_step,
    estimate,
)
from fabricscope.model.workload import Recompute, Workload
from fabricscope.model.workloads import architectures, preset
from fabricscope.rank import catalog

GB300 = "GB300-NVL-288GB"
# Nemotron 3 Super's NVFP4 recipe (Megatron-Bridge @v0.4.0-v0.5.1: the last 14 of 88 layers,
# te_quant.cfg's modules)
SUPER_NVFP4 = {
    "bf16_last_layers": 14,
    "bf16_modules": ["attention", "latent", "mtp"],
    "fp8_modules": ["mamba_out"],
}


def node(gpu: str = GB300):
    return catalog.build(
        [{"gpu_model": gpu, "gpu_count": 8, "gpus_per_node": 8, "fabric_class": "none"}]
    )


def dense(precision: str, layer_precision: dict[str, Any] | None = None) -> Workload:
    return Workload.model_validate(
        {**preset("llama3-70b").model_dump(), "precision": precision}
        | {"global_batch_size": 64, "global_batch_tokens": None}
        | {"layer_precision": layer_precision}
    )


def super_(precision: str = "nvfp4", layer_precision: dict[str, Any] | None = None) -> Workload:
    fields = dict(architectures()["nemotron-3-super"]["fields"])
    fields["moe"] = {**fields["moe"], "expert_parallel": 8}
    return Workload.model_validate(
        fields
        | {"name": "super", "tokens": 1e12, "global_batch_size": 64, "precision": precision}
        | {"layer_precision": layer_precision}
    )


def run(workload: Workload) -> Estimate:
    return estimate(workload, node(), LayoutGrid.partial(workload, 8, 1, 1, Recompute.NONE))


def test_every_layer_in_bf16_runs_as_a_bf16_job():
    layers = dense("bf16").layers
    whole = dense("nvfp4", {"bf16_first_layers": 30, "bf16_last_layers": layers - 30})
    assert run(whole).compute_s[0] == pytest.approx(run(dense("bf16")).compute_s[0], rel=1e-12)
    # and the linear layers' weights in BF16 are every layer's (the embeddings are apart)
    linear = whole.active_params - whole.embedding_params
    assert whole.linear_params_bf16 == pytest.approx(linear, rel=1e-12)


def test_every_module_in_fp8_runs_an_nvfp4_job_as_an_fp8_one():
    fp8 = run(dense("fp8")).compute_s[0]
    every = dense("nvfp4", {"fp8_modules": ["attention", "mlp"]})
    assert run(every).compute_s[0] == pytest.approx(fp8, rel=1e-12)
    assert run(dense("nvfp4")).compute_s[0] < fp8


def test_the_last_layers_share_of_a_dense_model_is_theirs():
    job = dense("fp8", {"bf16_last_layers": 4})
    linear = job.active_params - job.embedding_params
    assert job.linear_params_bf16 == pytest.approx(linear * 4 / job.layers, rel=1e-12)
    assert job.linear_params_fp8 == 0.0
    # the BF16 share of the step grows by those layers' matrix FLOPs
    extra = _high_precision_flops_step(job) - _high_precision_flops_step(dense("fp8"))
    assert extra == pytest.approx(6.0 * job.linear_params_bf16 * job.batch_tokens, rel=1e-12)


def test_a_hybrids_last_layers_are_the_ones_its_pattern_ends_with():
    plain = super_(layer_precision={"bf16_last_layers": 14})
    h = plain.hidden_size
    assert plain.mamba is not None and plain.moe is not None
    mamba = plain.mamba
    # Nemotron 3 Super's pattern ends ...EMEM*EMEMEMEME: 6 Mamba-2, 7 MoE, 1 attention
    assert plain.mamba.pattern is not None and plain.mamba.pattern[-14:] == "EMEM*EMEMEMEME"
    per_mamba = h * mamba.in_proj_width + mamba.inner * h
    per_moe = (
        plain.moe.top_k * 2 * 1024 * 2688  # routed experts on the 1024-wide latent
        + 2 * 2 * h * 2688  # two shared experts' two matrices
        + 2 * h * 1024  # the latent down- and up-projections
    )
    per_attention = plain._attention_params_per_layer
    per_mtp_depth = per_attention + per_moe + 2 * h * h
    # the nvfp4 job's 2 multi-token-prediction depths run in BF16 whole
    expected = 6 * per_mamba + 7 * per_moe + per_attention + 2 * per_mtp_depth
    assert plain.linear_params_bf16 == pytest.approx(expected, rel=1e-12)
    # in an fp8 job the MTP block runs FP8 (Megatron-Core's MTP takes the FP8 context)
    fp8 = super_("fp8", {"bf16_last_layers": 14})
    assert fp8.linear_params_bf16 == pytest.approx(expected - 2 * per_mtp_depth, rel=1e-12)


def test_the_release_recipe_moves_modules_in_the_other_layers():
    job = super_(layer_precision=SUPER_NVFP4)
    assert job.mamba is not None and job.moe is not None
    h = job.hidden_size
    last = super_(layer_precision={"bf16_last_layers": 14}).linear_params_bf16
    # the other 7 attention layers' projections and the other 33 MoE layers' latent ones
    others = 7 * job._attention_params_per_layer + 33 * 2 * h * 1024
    assert job.linear_params_bf16 == pytest.approx(last + others, rel=1e-12)
    # the other 34 Mamba-2 layers' output projections in FP8
    assert job.linear_params_fp8 == pytest.approx(34 * job.mamba.inner * h, rel=1e-12)
    last_only = super_(layer_precision={"bf16_last_layers": 14})
    times = [run(w).compute_s[0] for w in (super_(), last_only, job, super_("bf16"))]
    # each exception slows the NVFP4 job; all of them leave it faster than BF16 (a fifth of
    # its linear FLOPs in BF16: about as fast as the FP8 job, as NVIDIA's 26.06 tables show,
    # 9,900 against 9,652 tokens/s per GB300)
    assert times[0] < times[1] < times[2] < times[3]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"precision": "bf16", "layer_precision": {"bf16_last_layers": 2}}, "needs precision"),
        (
            {"precision": "fp8", "layer_precision": {"fp8_modules": ["attention"]}},
            "fp8_modules needs precision nvfp4",
        ),
        ({"layer_precision": {"bf16_modules": ["latent"]}}, "does not have"),
        ({"layer_precision": {"bf16_modules": ["mamba_in"]}}, "does not have"),
        ({"layer_precision": {"bf16_first_layers": 60, "bf16_last_layers": 30}}, "of 80"),
        (
            {"layer_precision": {"bf16_modules": ["mlp"], "fp8_modules": ["mlp"]}},
            "cannot be both",
        ),
        ({"layer_precision": {"bf16_modules": ["router"]}}, "bf16_modules"),
    ],
)
def test_a_layer_precision_the_job_cannot_run_is_refused_saying_why(change, message):
    fields = {**dense("nvfp4").model_dump(), **change}
    with pytest.raises(ValidationError, match=message):
        Workload.model_validate(fields)


def test_a_hybrid_names_its_layers_order_for_first_or_last_layers():
    fields = super_().model_dump()
    fields["mamba"] = {**fields["mamba"], "pattern": None}
    # modules need no order
    Workload.model_validate(fields | {"layer_precision": {"bf16_modules": ["attention"]}})
    with pytest.raises(ValidationError, match=r"need mamba\.pattern"):
        Workload.model_validate(fields | {"layer_precision": {"bf16_last_layers": 2}})
    wrong = {**fields["mamba"], "pattern": "M*Q"}
    with pytest.raises(ValidationError, match="'Q' is not a layer"):
        Workload.model_validate(fields | {"mamba": wrong})
    short = {**super_().model_dump()["mamba"]}
    short["pattern"] = short["pattern"][:-1]  # one MoE layer fewer than layers says
    with pytest.raises(ValidationError, match="MLP and MoE layers"):
        Workload.model_validate(fields | {"mamba": short})


def test_a_summary_names_the_layers_off_the_jobs_precision():
    assert super_(layer_precision=SUPER_NVFP4).precision_label == (
        "nvfp4 (last 14 layers, attention, latent, mtp in bf16; mamba_out in fp8)"
    )
    one = Workload.model_validate(
        {**dense("fp8", {"bf16_first_layers": 1}).model_dump(), "fp8_recipe": "rowwise"}
    )
    assert one.precision_label == "fp8 (rowwise; first 1 layer in bf16)"
    assert dense("nvfp4").precision_label == "nvfp4"


def test_the_estimate_says_how_much_runs_off_the_jobs_precision():
    job = super_(layer_precision=SUPER_NVFP4)
    linear = job.active_params - job.embedding_params + 2 * job.mtp_block_params_active
    bf16, fp8 = 100 * job.linear_params_bf16 / linear, 100 * job.linear_params_fp8 / linear
    assert (round(bf16), round(fp8)) == (24, 9)
    assert precision_notes(job, [GB300]) == [
        f"precision {job.precision_label}: of the linear layers' weights a token passes, "
        f"{bf16:.0f}% in BF16 and {fp8:.0f}% in FP8"
    ]
    # an nvfp4 job's MTP block alone, said so; nothing for a job with every layer at its own
    (alone,) = precision_notes(super_(), [GB300])
    assert alone.startswith("precision nvfp4, its multi-token-prediction block in BF16")
    assert precision_notes(super_("fp8"), [GB300]) == []
    assert precision_notes(dense("nvfp4"), [GB300]) == []


@pytest.mark.parametrize(
    ("precision", "layer_precision", "passes"),
    [
        # 40 MoE layers and 2 multi-token-prediction depths, each with a MoE layer
        ("bf16", None, {"bf16": 42.0}),
        # an nvfp4 job's MTP block runs in BF16 whatever it says
        ("nvfp4", None, {"nvfp4": 40.0, "bf16": 2.0}),
        # the recipe's last 14 layers hold 7 MoE layers
        ("nvfp4", SUPER_NVFP4, {"nvfp4": 33.0, "bf16": 9.0}),
        ("nvfp4", {"fp8_modules": ["experts"]}, {"fp8": 40.0, "bf16": 2.0}),
        # an fp8 job's MTP block runs in FP8 unless its module is kept in BF16
        ("fp8", {"bf16_last_layers": 14}, {"fp8": 35.0, "bf16": 7.0}),
        ("fp8", {"bf16_modules": ["experts"]}, {"bf16": 42.0}),
    ],
)
def test_the_routed_experts_precision_by_moe_layer(precision, layer_precision, passes):
    job = super_(precision, layer_precision)
    assert {p.value: n for p, n in job.routed_expert_passes.items()} == passes
    assert sum(job.routed_expert_passes.values()) == job.moe_layer_passes
    assert dense("fp8").routed_expert_passes == {}
