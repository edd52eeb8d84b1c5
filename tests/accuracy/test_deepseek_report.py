"""DeepSeek-V3's own pre-training run, scored blind from its technical report: 180K H800 GPU
hours per trillion tokens at the report's layout, batch, blockwise FP8, one MTP depth and
DualPipe's all-to-all overlap, on H800 (H100's export variant with NVLink cut to 400 GB/s)."""

from __future__ import annotations

import csv

import pytest

from fabricscope.accuracy.held_out import blind_cases
from fabricscope.accuracy.published_tables import DEEPSEEK_V3_REPORT, deepseek_v3_report_cases
from fabricscope.accuracy.validation import score
from fabricscope.model.error_bands import band_for
from fabricscope.model.generations import generation_of
from fabricscope.model.workload import Fp8Recipe, Precision
from fabricscope.rank import catalog


def test_the_report_row_is_read_as_it_says_and_scored_blind():
    with DEEPSEEK_V3_REPORT.open(newline="", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert "180K H800 GPU hours" in row["quote_throughput"]
    assert "16-way Pipeline Parallelism" in row["quote_layout"]
    assert "recompute all RMSNorm operations" in row["quote_recompute"]
    (case,) = deepseek_v3_report_cases()[0]
    assert case.published_tokens_per_s_per_gpu == pytest.approx(1e12 / (180_000 * 3600))
    w = case.workload
    assert (w.precision, w.fp8_recipe) == (Precision.FP8, Fp8Recipe.BLOCKWISE)
    assert w.mtp_layers == 1 and w.ep_comm_overlap and w.moe is not None
    assert w.moe.expert_parallel == 64 and w.batch_sequences == 15360 and w.seq_len == 4096
    assert case.layout is not None and set(case.layout.tp) == {1} and set(case.layout.pp) == {16}
    assert case.hardware["gpu_model"] == "H800-SXM-80GB" and case.n_gpus == 2048
    assert case.run_id in {c.run_id for c in blind_cases()}
    (scored,) = score([case])
    assert scored.predicted_timing > 0 and scored.layout.startswith("tp=1,pp=16,dp=128")


def test_h800_is_h100s_part_with_its_nvlink_cut():
    specs = catalog.gpu_specs()
    h800, h100 = specs["H800-SXM-80GB"], specs["H100-SXM-80GB"]
    assert (h800.bf16_dense_tflops, h800.fp8_dense_tflops) == (989.5, 1979)
    assert h800.scaleup_gbps_per_gpu == 400 < h100.scaleup_gbps_per_gpu == 900
    # the matmul ceilings carried from the same part, said so in their source
    assert h800.gemm_ceiling_bf16 == h100.gemm_ceiling_bf16
    assert catalog.resolve_gpu("NVIDIA H800") == "H800-SXM-80GB"
    assert generation_of("H800-SXM-80GB") == "hopper"
    (case,) = deepseek_v3_report_cases()[0]
    band = band_for("H800-SXM-80GB", case.workload)
    assert band is not None and band.cell["generation"] == "hopper"
