"""Named architectures: each a sourced model shape, its size the one its name says."""

from __future__ import annotations

import re

import pytest

from fabricscope.model.workload import Workload
from fabricscope.model.workloads import SHAPE_FIELDS, architectures, presets


def test_every_architecture_is_a_sourced_shape_with_the_size_its_name_says():
    named = architectures()
    assert set(presets()) <= set(named)  # every preset's shape is an architecture too
    for name in ("llama2-7b", "llama2-70b", "nemotron4-340b", "opt-175b", "bloom-176b"):
        assert name in named
    for name, entry in named.items():
        assert entry["source"] and entry["description"], name
        assert set(entry["fields"]) <= SHAPE_FIELDS, name  # no training plan in a shape
        fields = {"seq_len": 2048, **entry["fields"]}
        workload = Workload(name=name, tokens=1e12, global_batch_size=1024, **fields)
        moe = re.search(r"-(\d+)b-a(\d+)b$", name)  # an MoE's total and active sizes
        if moe:
            assert workload.total_params / 1e9 == pytest.approx(float(moe[1]), rel=0.08), name
            assert workload.active_params / 1e9 == pytest.approx(float(moe[2]), rel=0.15), name
            continue
        size = re.fullmatch(r"(\d+)b", name.split("-")[-1])
        if size and entry["fields"].get("params_billion") is None:
            # the parameter count derived from the shape is the one the name rounds (Nemotron-3
            # "8B" has 8.5B: 2.1B of them in its untied 256k-token embeddings), or, as Qwen
            # names its models, the count outside the embeddings (Qwen2.5 "7B": 7.6B in all,
            # 6.5B without its two 152k-token embedding matrices)
            counts = (workload.total_params, workload.total_params - workload.embedding_params)
            assert any(n / 1e9 == pytest.approx(float(size[1]), rel=0.08) for n in counts), name


def test_a_head_width_apart_from_hidden_over_heads():
    qwen = architectures()["qwen3-235b-a22b"]["fields"]
    job = Workload(name="qwen3", tokens=1e12, global_batch_size=512, **qwen)
    # 64 heads of 128: queries 8,192 wide over a 4,096 hidden size; 4 KV heads of 128
    assert (job.head_width, job.q_dim, job.kv_dim) == (128, 8192, 512)
    # attention weights h x q (Q), q x h (O), 2 x h x kv (K, V) per layer
    attention = 94 * (2 * 4096 * 8192 + 2 * 4096 * 512)
    routed = 94 * 128 * 3 * 4096 * 1536
    assert job.total_params == attention + routed + 2 * 151936 * 4096
    # scores and values run over the query width: 12 l s (heads x head width)
    assert job.attention_flops_per_token == 12.0 * 94 * 4096 * 8192
    # without head_dim the head is hidden / heads wide, as before
    plain = job.model_copy(update={"head_dim": None, "moe": None, "ffn_size": 12288})
    assert (plain.head_width, plain.q_dim) == (64, 4096)


def test_heads_that_do_not_divide_the_hidden_size_need_a_head_width():
    fields = {"layers": 2, "hidden_size": 2880, "heads": 128, "seq_len": 4096}
    fields |= {"vocab_size": 1000, "tokens": 1e9, "global_batch_size": 8}
    with pytest.raises(ValueError, match="give head_dim"):
        Workload(name="odd", **fields)
    assert Workload(name="odd", head_dim=64, **fields).q_dim == 8192
