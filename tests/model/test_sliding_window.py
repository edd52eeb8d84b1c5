"""Sliding-window (banded) attention: GPT-OSS's 128-token window on every other layer."""

from __future__ import annotations

import pytest

from fabricscope.model.scaling import LayoutGrid, estimate
from fabricscope.model.workload import Recompute, Workload
from fabricscope.model.workloads import architectures
from fabricscope.rank.catalog import profiles
from tests.model.test_scaling import _long_context


def _job(seq_len: int, **window: float) -> Workload:
    """Llama 3 70B at ``seq_len`` tokens (test_scaling's long-context job), with a window."""
    return Workload.model_validate({**_long_context(seq_len).model_dump(), **window})


def test_a_window_counts_the_keys_each_query_attends_to():
    """A causal band of w keys is 2w - w^2/s on the unmasked count a full layer's s is on;
    a window as long as the sequence is full attention."""
    s, w = 8192, 128
    full, banded = _job(s), _job(s, attention_window=w, window_layer_fraction=0.5)
    per_layer = full.attention_flops_per_token / full.layers
    assert _job(s, attention_window=s).attention_flops_per_token == full.attention_flops_per_token
    assert _job(s, attention_window=4 * s).attention_flops_per_token == pytest.approx(
        full.attention_flops_per_token
    )
    expected = full.layers / 2 * per_layer * (1 + (2 * w - w * w / s) / s)
    assert banded.attention_flops_per_token == pytest.approx(expected)
    assert banded.attention_flops_per_token < 0.52 * full.attention_flops_per_token


def test_gpt_oss_is_stated_with_its_window_on_half_its_layers():
    shape = architectures()["gpt-oss-120b"]
    job = Workload(name="gpt-oss", tokens=1e12, global_batch_size=1280, **shape["fields"])
    assert (job.attention_window, job.windowed_layers) == (128, 18)
    assert job.total_params / 1e9 == pytest.approx(116.8, rel=0.01)  # the model card's total
    assert "openai/gpt-oss" in shape["source"] and "window_attn_skip_freq 2" in shape["source"]


def _h100(count: int, fabric: str, gbps: float):
    return profiles(
        [
            {
                "gpu_model": "H100-SXM-80GB",
                "gpu_count": count,
                "gpus_per_node": 8,
                "fabric_class": fabric,
                "fabric_gbps_per_gpu": gbps,
            }
        ]
    )


def test_a_window_shortens_compute_and_the_context_parallel_exchange():
    """Banded layers do a fraction of the attention and need only the band's keys and
    values from the neighbouring chunk, not the ring's every chunk."""
    full = _job(32768)
    banded = _job(32768, attention_window=128, window_layer_fraction=0.5)
    hw = _h100(256, "ethernet", 25.0)
    rows = {
        name: estimate(job, hw, LayoutGrid.partial(job, 8, 4, 1, Recompute.NONE, 1, cp=8)).row(0)
        for name, job in (("full", full), ("banded", banded))
    }
    assert rows["banded"]["compute_s"] < rows["full"]["compute_s"]
    assert 0.0 < rows["banded"]["cp_comm_s"] < 0.6 * rows["full"]["cp_comm_s"]


def test_a_window_without_context_parallelism_exchanges_nothing():
    banded = _job(32768, attention_window=128, window_layer_fraction=0.5)
    layout = LayoutGrid.partial(banded, 8, 4, 1, Recompute.NONE, 1)
    assert estimate(banded, _h100(256, "ethernet", 25.0), layout).row(0)["cp_comm_s"] == 0.0
