"""Megatron-LM's theoretical memory formula as the memory model's reference."""

from __future__ import annotations

import pytest

from bench import megatron_memory
from fabricscope.accuracy.validation import DOCS_FILE
from fabricscope.model.workloads import preset


def test_the_transcription_gives_megatrons_terms_on_a_hand_checked_case():
    # Llama 3 8B, tp = pp = 1, dp 64, micro-batch 1, 8192 tokens: weights and the distributed
    # optimizer (6 + 12/64 bytes per parameter; untied embeddings twice, the vocabulary padded
    # to 128256), activations 8192 x 4096 x (18 + 4 x 3.5) per layer, the output layer
    w = preset("llama3-8b")
    h, f, s, layers, v = 4096, 14336, 8192, 32, 128256
    params = layers * (2 * h * h * (1 + 8 / 32) + 2 * h * f * 1.5) + 2 * h * v
    weights = params * (6 + 12 / 64)
    activations = s * h * (18 + 4 * f / h) * layers + 8 * s + s * h + s * h * 4 * (1 + v / h)
    assert megatron_memory.megatron_bytes(w, 1, 1, 64, 1, 1, 8) == pytest.approx(
        weights + activations, rel=1e-12
    )


def test_the_documented_gap_is_the_measured_one():
    ratios = [ours / reference for *_, ours, reference in megatron_memory.ratios()]
    assert len(ratios) == len(megatron_memory.CASES)
    stated = f"ours over Megatron's is {min(ratios):.2f}-{max(ratios):.2f}"
    text = " ".join(DOCS_FILE.read_text(encoding="utf-8").split())
    assert stated in text, f"docs/MODEL.md's known limits should say: {stated}"
    assert "| llama3-8b | 64 | 1 | 1 | 1 |" in "\n".join(megatron_memory.table())
