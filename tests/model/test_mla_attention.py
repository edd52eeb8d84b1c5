"""Multi-head latent attention (DeepSeek-V3, Kimi K2) costed at its heads' widths."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from fabricscope.model.serving import ServingWorkload, estimate_serving
from fabricscope.model.workload import Workload
from fabricscope.model.workloads import architectures, preset
from fabricscope.rank import catalog


def test_mla_scores_and_values_run_over_its_decompressed_heads():
    """DeepSeek-V3: 128 heads scoring over 128 + 64 (rotary) dims and multiplying by values
    of 128 (arXiv:2412.19437 section 4.2), where standard attention over the hidden size would
    be 128 heads of 56: 2.86 times the attention FLOPs."""
    job = preset("deepseek-v3")
    assert (job.mla_qk_head_dim, job.mla_v_head_dim, job.rope_head_dim) == (128, 128, 64)
    assert job.attention_width == (128 * (128 + 64) + 128 * 128) / 2
    standard = job.model_copy(update={"mla_qk_head_dim": None, "mla_v_head_dim": None})
    assert standard.attention_width == job.q_dim == 7168
    ratio = job.attention_flops_per_token / standard.attention_flops_per_token
    assert ratio == pytest.approx(20480 / 7168)
    # the matmuls over parameters do not move: MLA's projections are in the stated counts
    assert job.total_params == standard.total_params
    # Kimi K2's 64 heads, the same widths (Megatron-Bridge's KimiK2Provider)
    kimi = architectures()["kimi-k2"]["fields"]
    assert (kimi["mla_qk_head_dim"], kimi["mla_v_head_dim"], kimi["heads"]) == (128, 128, 64)


def test_mla_head_widths_need_mla():
    base = preset("llama3-8b").model_dump()
    with pytest.raises(ValidationError, match="mla_qk_head_dim and mla_v_head_dim are MLA's"):
        Workload.model_validate({**base, "mla_qk_head_dim": 128, "mla_v_head_dim": 128})
    deepseek = preset("deepseek-v3").model_dump()
    with pytest.raises(ValidationError, match="give both"):
        Workload.model_validate({**deepseek, "mla_v_head_dim": None})


def test_serving_prefill_attention_runs_over_mla_s_heads_too():
    """A served MLA model's prompt is processed as in training, over the decompressed heads
    (its decode attention over the latent is apart: test_serving)."""
    arch = preset("deepseek-v3")
    standard = arch.model_copy(update={"mla_qk_head_dim": None, "mla_v_head_dim": None})
    hardware = catalog.build([{"gpu_model": "H200-SXM-141GB", "gpu_count": 8, "gpus_per_node": 8}])
    ttft = {}
    for name, shape in (("mla", arch), ("standard", standard)):
        job = ServingWorkload(
            name=name, architecture=shape, input_tokens=32_000, output_tokens=100, weights="fp8"
        )
        ttft[name] = estimate_serving(job, hardware, layout=(8, 1)).row(0)["ttft_ms"]
    assert ttft["mla"] > ttft["standard"]
