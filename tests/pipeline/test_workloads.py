"""Named architectures: each a sourced model shape, its size the one its name says."""

from __future__ import annotations

import re

import pytest

from pipeline.model.workload import Workload
from pipeline.workloads import SHAPE_FIELDS, architectures, presets


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
        size = re.fullmatch(r"(\d+)b", name.split("-")[-1])
        if size and entry["fields"].get("params_billion") is None:
            # the parameter count derived from the shape is the one the name rounds (Nemotron-3
            # "8B" has 8.5B: 2.1B of them in its untied 256k-token embeddings)
            assert workload.total_params / 1e9 == pytest.approx(float(size[1]), rel=0.08), name
