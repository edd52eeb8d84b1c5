"""The rules every layout keeps are stated once (scaling.LAYOUT_RULES): the search keeps only
layouts that hold them, and `--layout` refuses one that breaks them, in the rule's words."""

from __future__ import annotations

import numpy as np
import pytest

from fabricscope.cli import _layout
from fabricscope.model.hardware import HardwareError
from fabricscope.model.scaling import LAYOUT_RULES, estimate, layout_problem
from fabricscope.model.workloads import preset
from fabricscope.rank.catalog import profiles


def _rows(*counts: int) -> list[dict[str, object]]:
    return [
        {"gpu_model": "H100-SXM-80GB", "gpu_count": n, "gpus_per_node": 8,
         "fabric_class": "infiniband", "fabric_gbps_per_gpu": 400.0}
        for n in counts
    ]  # fmt: skip


LLAMA_70B = preset("llama3-70b")  # 64 heads, 80 layers, 8,192 tokens
BROKEN = [  # (layout, GPUs, what the refusal says): each breaks one rule
    ("tp=3,pp=1", 96, "tp=3 does not divide the 64 heads"),
    ("tp=8,pp=1,cp=3", 96, "cp=3 needs seq_len divisible by 2 x cp"),
    ("tp=8,pp=2,vpp=50", 64, "vpp=50 needs pp > 1 and at least one layer per chunk"),
    ("tp=8,pp=1,vpp=2", 64, "vpp=2 needs pp > 1"),
    ("tp=8,pp=3", 64, "tp*pp = 24 does not divide the profile's 64 GPUs"),
    ("tp=8,pp=2,cp=2", 48, "tp*pp*cp = 32 does not divide the profile's 48 GPUs"),
]


@pytest.mark.parametrize(("text", "gpus", "says"), BROKEN)
def test_a_layout_that_breaks_a_rule_is_refused_in_its_words(text, gpus, says):
    with pytest.raises(HardwareError, match=f"--layout {text!r}: {says}".replace("*", r"\*")):
        _layout(text, LLAMA_70B, _rows(gpus))


def test_flash_attention_is_needed_for_context_parallelism():
    job = LLAMA_70B.model_copy(update={"flash_attention": False})
    assert layout_problem(job, 64, 8, 1, cp=2) == (
        "cp=2 runs on fused (flash) attention only; the workload says flash_attention false"
    )
    assert layout_problem(LLAMA_70B, 64, 8, 1, cp=2) is None


def test_a_layout_keeping_every_rule_has_no_problem():
    assert layout_problem(LLAMA_70B, 512, 8, 4, cp=2, vpp=5) is None
    # as published: Llama 3.1 405B on 256 GB200, 126 layers on 16 stages of 8 chunks, the
    # embedding and the loss each a layer of the first and last stage
    assert layout_problem(preset("llama3-405b"), 256, 4, 16, vpp=8) is None
    assert layout_problem(preset("llama3-405b"), 256, 4, 16, vpp=9) is not None


def test_every_published_layout_keeps_every_rule():
    """The rules are no stricter than what ran: every layout a published run states."""
    from fabricscope.accuracy.published_tables import calibration_set, megatron_bridge_cases

    for case in [*calibration_set()[0], *megatron_bridge_cases()[0]]:
        layout = case.layout
        if layout is None:
            continue
        for k in range(len(layout.tp)):
            found = layout_problem(
                case.workload, case.n_gpus, int(layout.tp[k]), int(layout.pp[k]),
                int(layout.cp[k]) if layout.cp is not None else 1, int(layout.virtual[k]),
            )  # fmt: skip
            assert found is None, (case.run_id, found)


@pytest.mark.parametrize("name", ["llama3-8b", "llama3-70b", "gpt3-175b", "mixtral-8x7b"])
def test_the_search_only_returns_layouts_that_keep_every_rule(name):
    job = preset(name)
    counts = (8, 24, 96, 384, 1000, 1536)
    result = estimate(job, profiles(_rows(*counts)))
    found = np.isfinite(result.step_time_s)
    assert found.any()
    for i in np.flatnonzero(found):
        layout = (int(result.tp[i]), int(result.pp[i]), int(result.cp[i]))
        vpp = int(result.virtual_stages[i])
        assert layout_problem(job, counts[i], *layout, vpp=vpp) is None, (counts[i], layout)


def test_every_rule_holds_over_arrays_as_it_does_for_one_layout():
    """The search's mask and the refusal read the same rule: one layout at a time, the array
    answer is the scalar one."""
    tps, pps, cps, vpps = np.meshgrid([1, 2, 3, 8], [1, 2, 3, 5], [1, 2, 3], [1, 2, 50])
    for rule in LAYOUT_RULES:
        mask = rule.holds(LLAMA_70B, 96, tps, pps, cps, vpps)
        for index in np.ndindex(tps.shape):
            one = (int(tps[index]), int(pps[index]), int(cps[index]), int(vpps[index]))
            assert bool(mask[index]) == bool(rule.holds(LLAMA_70B, 96, *one))
