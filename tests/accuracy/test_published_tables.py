"""NVIDIA's Megatron-Bridge, NeMo 24.07 and NeMo AutoModel tables and torchtitan's published
runs as calibration cases (fixtures/published_runs)."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest

from bench import model_docs
from fabricscope.accuracy.held_out import blind_cases
from fabricscope.accuracy.published_tables import (
    AUTOMODEL,
    MEGATRON_BRIDGE,
    NEMO_2407,
    NEMO_LONG_SEQUENCE,
    NEMO_LONG_SEQUENCE_EARLIER,
    NVFP4_LAYER_PRECISION,
    NVFP4_NOTE,
    TORCHTITAN,
    WITHOUT_CP_GAP,
    _earlier_printing,
    _Skip,
    _throughput,
    _unpaired,
    automodel_cases,
    benchmark_recipes,
    calibration_set,
    deepseek_v3_report_cases,
    megatron_bridge_cases,
    nemo_2407_cases,
    nemo_llama_flops_per_token,
    nemo_long_sequence_cases,
    torchtitan_cases,
)
from fabricscope.accuracy.validation import (
    BLIND_END,
    BLIND_START,
    DOCS_FILE,
    CalibrationCase,
    score,
)
from fabricscope.model.scaling import (
    RECOMPUTE_MODES,
    TORCHTITAN_FP8_GAIN,
    ModelConstants,
    _high_precision_flops_step,
    _model_flops_step,
)
from fabricscope.model.workload import Dispatcher, Fp8Recipe, Precision, Recompute, Stack
from fabricscope.model.workloads import preset


def test_every_row_is_a_case_or_skipped_with_its_reason():
    with MEGATRON_BRIDGE.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cases, skipped = megatron_bridge_cases()
    # four rows of release 25.11 print two recipes' runs in one cell: eight runs
    paired = [r for r in rows if r["precision"] == "FP8-CS (FP8-MX)"]
    assert len(paired) == 4
    assert len(cases) + len(skipped) == len(rows) + len(paired) and len(rows) == 260
    assert all(row.reason for row in skipped)
    reasons = {row.reason for row in skipped}
    # context-parallel rows are scored with their cp
    assert any(c.layout is not None and set(c.layout.cp) == {2} for c in cases)
    # NVFP4 is a precision of its own since 2026-12-05, and a recipe's precision mix by layer
    # and module a workload's layer_precision since 2026-12-06: no NVFP4 row is left out
    assert not {r for r in reasons if "NVFP4" in r}
    assert any(r.startswith("precision not printed (release 25.09): ") for r in reasons)
    # DeepSeek-V3 by its preset's architecture, each row with its own expert-parallel size;
    # the variants the model cannot represent are left out, saying why
    deepseek = [c for c in cases if c.workload.moe is not None]
    assert len(deepseek) >= 20
    assert {c.workload.moe.expert_parallel for c in deepseek} >= {8, 32, 64}
    # its multi-token prediction row with DeepSeek-V3's one depth (arXiv:2412.19437 4.2)
    mtp = [c for c in cases if c.workload.name.startswith("DeepSeekV3 (w/ MTP)")]
    assert len(mtp) == 1 and mtp[0].workload.mtp_layers == 1
    assert not mtp[0].workload.mtp_shared_layer
    assert any("MTP depth D to 1" in note for note in mtp[0].assumptions)
    # Nemotron 3 Super: LatentMoE and 2 MTP depths of one block; its 13 MXFP8 rows (DGX
    # B300's since gpus.csv states the GPU) and 13 NVFP4 rows scored, the NVFP4 ones with their
    # recipe's layers and modules in BF16 and MXFP8
    supers = [c for c in cases if c.workload.name.startswith("Nemotron_3_Super")]
    assert len(supers) == 26
    assert {c.workload.precision for c in supers} == {Precision.FP8, Precision.NVFP4}
    assert all(c.workload.moe is not None and c.workload.moe.latent_size == 1024 for c in supers)
    assert all((c.workload.mtp_layers, c.workload.mtp_shared_layer) == (2, True) for c in supers)
    nvfp4 = [c for c in supers if c.workload.precision is Precision.NVFP4]
    assert len(nvfp4) == 13
    releases = NVFP4_LAYER_PRECISION["Nemotron_3_Super"]
    for case in nvfp4:
        release = case.run_id.split("_")[1]
        stated, why = releases[release]
        assert case.workload.layer_precision is not None
        assert case.workload.layer_precision.model_dump(mode="json") == {
            "bf16_first_layers": 0,
            **stated,
        }
        assert any(why in note for note in case.assumptions)
    assert not {r.reason for r in skipped if "Nemotron_3_Super" in r.run_id}
    assert not any("DGX-B300" in r for r in reasons)
    assert not any("not modelled" in r and ("MTP" in r or "LatentMoE" in r) for r in reasons)
    # Qwen3's heads are 128 wide whatever the hidden size: scored with their head_dim
    qwen = [c for c in cases if c.workload.head_dim == 128 and c.workload.mamba is None]
    assert {c.workload.name.split()[0] for c in qwen} == {"Qwen3_30B_a3B", "Qwen3_235B_a22B"}
    assert all(c.workload.q_dim == c.workload.heads * 128 for c in qwen)
    # token dropping at capacity factor 1.0, padded to it, is the balanced routing the model
    # assumes: a token-drop row is left out only where release 25.09's missing precision
    # cannot be told from its layout's configurations
    dropped = {r.reason for r in skipped if "(tokendrop)" in r.run_id}
    assert dropped and all(r.startswith("precision not printed (release 25.09): ") for r in dropped)
    assert any("(tokendrop)" in c.run_id for c in cases)
    # GPT-OSS by its architecture: a 128-token window on every other layer
    oss = [c for c in cases if c.workload.name.startswith("GPT OSS 120B")]
    assert len(oss) >= 20
    assert all(c.workload.attention_window == 128 for c in oss)
    assert all(c.workload.windowed_layers == 18 for c in oss)
    assert not any(r.startswith("GPT OSS") for r in reasons)
    assert len({case.run_id for case in cases}) == len(cases)


def test_a_row_maps_its_own_cells():
    cases = {case.run_id: case for case in megatron_bridge_cases()[0]}
    # 26.04.01, LLAMA3_70B on DGX-H100 in FP8: 64 GPUs, gbs 256, mbs 1, 8192 tokens,
    # tp 4, pp 8, cp 1, vp 5, 1664 tokens/s/GPU
    h100 = cases["mbridge_26.04.01_LLAMA3_70B_DGX-H100_FP8_64gpu_r7"]
    assert h100.published_tokens_per_s_per_gpu == 1664
    assert (h100.workload.seq_len, h100.workload.batch_sequences) == (8192, 256)
    assert h100.workload.precision is Precision.FP8 and h100.workload.layers == 80
    assert h100.layout is not None and h100.layout.given
    assert set(h100.layout.tp) == {4} and set(h100.layout.pp) == {8}
    assert set(h100.layout.virtual) == {5} and set(h100.layout.micro_batch) == {1}
    assert h100.hardware["gpu_model"] == "H100-SXM-80GB" and h100.hardware["gpu_count"] == 64
    # a DGX GB200 row: the NVL72 domain and FSDP over its 64 GPUs
    gb200 = cases["mbridge_26.04.01_LLAMA3_70B_DGX-GB200_FP8_64gpu_r4"]
    assert gb200.hardware["nvlink_domain_gpus"] == 72
    assert gb200.workload.zero_stage == 3
    assert any("reference design assumed" in note for note in gb200.assumptions)


def test_the_blind_rows_score_and_the_documented_block_is_the_generated_one():
    cases, _ = megatron_bridge_cases()
    assert all(s.predicted_timing > 0 for s in score(cases))
    text = DOCS_FILE.read_text(encoding="utf-8")
    documented = text[text.index(BLIND_START) : text.index(BLIND_END) + len(BLIND_END)]
    assert documented == model_docs.blind(), (
        "docs/MODEL.md is out of date: run python -m bench.model_docs"
    )
    assert f"{len(cases)} rows scored with `ModelConstants()`, none of them fitted on" in documented
    auto, _ = automodel_cases()
    assert f"{len(auto)} rows scored with `ModelConstants()`, none of them fitted on" in documented


def test_nemo_2407_maps_every_pre_training_row_by_its_named_architecture():
    with NEMO_2407.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cases, skipped = nemo_2407_cases()
    assert len(cases) + len(skipped) == len(rows) == 18
    assert len(cases) == 12  # every pre-training row; the six fine-tuning rows skipped
    assert {row.reason for row in skipped} == {
        "Finetuning: fine-tuning on packed SQuAD inputs (attention within each sample) and "
        "unstated LoRA adapters: not scored"
    }
    by_run = {case.run_id: case for case in cases}
    # | LLAMA2-70B | 64 | 128 | 1 | 4096 | 4 | 4 | 1 | 20 | 1728 | ...: the table's FP8
    llama2 = by_run["nemo2407_NeMo24.07_LLAMA2-70B_DGX-H100_FP8_64gpu_r7"]
    assert llama2.published_tokens_per_s_per_gpu == 1728
    w = llama2.workload
    assert (w.layers, w.hidden_size, w.heads, w.kv_heads, w.ffn_size) == (80, 8192, 64, 8, 28672)
    assert (w.vocab_size, w.seq_len, w.batch_sequences, w.micro_batch_size) == (32000, 4096, 128, 1)
    assert w.precision is Precision.FP8
    assert llama2.layout is not None and set(llama2.layout.virtual) == {20}
    assert set(llama2.layout.tp) == {4} and set(llama2.layout.pp) == {4}
    assert any("architecture llama2-70b" in note for note in llama2.assumptions)
    # Nemotron-340B is Nemotron-4's 340B: 96 layers of 18432, 8 KV heads, untied 256k vocab
    nemotron = by_run["nemo2407_NeMo24.07_Nemotron-340B_DGX-H100_FP8_128gpu_r10"]
    assert (nemotron.workload.layers, nemotron.workload.vocab_size) == (96, 256000)
    assert all(s.predicted_timing > 0 for s in score(cases))


def test_automodel_rows_read_the_heading_and_the_printed_numbers():
    with AUTOMODEL.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cases, skipped = automodel_cases()
    assert len(cases) + len(skipped) == len(rows) == 16
    by_run = {case.run_id: case for case in cases}
    # | Llama3 70B | 64 | 128 | 1 | 1 | 4 | 8192 | 1 | 1 | 2 | - | - | 32 | TE + fsdp2_prefetch
    # | 18.90 | 389 | 866.77 |: "DGX-H100, Precision: BF16" in the heading, FSDP over 32
    llama = by_run["automodel_cb9765441e51_Llama3 70B_DGX-H100_BF16_64gpu_r10"]
    assert llama.published_tokens_per_s_per_gpu == 866.77
    assert llama.workload.precision is Precision.BF16 and llama.workload.zero_stage == 3
    assert llama.layout is not None and set(llama.layout.cp) == {2}
    assert llama.hardware["gpu_model"] == "H100-SXM-80GB"
    assert any("NeMo AutoModel" in note for note in llama.assumptions)
    # AutoModel builds its models in BF16 and keeps no FP32 master copy: every row says so
    assert all(case.workload.bf16_weights for case in cases)
    assert not any(case.workload.bf16_weights for case in megatron_bridge_cases()[0])
    # "4,497"-style cells read with their thousands separators; DeepSeek-V3 with its EP
    deepseek = by_run["automodel_cb9765441e51_DeepSeek V3 671B_DGX-H100_BF16_256gpu_r5"]
    assert deepseek.published_tokens_per_s_per_gpu == 1002
    assert deepseek.workload.moe is not None and deepseek.workload.moe.expert_parallel == 64
    # the pre-training rows' recompute is their benchmark configuration's: every block
    # checkpointed (activation_checkpointing: true)
    full, none = (RECOMPUTE_MODES.index(kind) for kind in (Recompute.FULL, Recompute.NONE))
    assert deepseek.layout is not None and set(deepseek.layout.recompute) == {full}
    assert any("deepseek_v3_te_deepep.yaml @cb9765441e51" in n for n in deepseek.assumptions)
    assert llama.layout is not None and set(llama.layout.recompute) == {full}
    reasons = {row.reason for row in skipped}
    # the LoRA rows of models whose benchmark configuration is read are scored, Qwen2.5's
    # with its own: rank 16 on the seven projections, the 32B's with every block recomputed
    assert not any("fine-tuning" in reason for reason in reasons)
    qwen = by_run["automodel_cb9765441e51_Qwen2.5 32B 2-node_DGX-H100_BF16_16gpu_r6_lora"]
    assert qwen.workload.lora is not None and qwen.workload.lora.rank == 16
    assert (qwen.workload.layers, qwen.workload.ffn_size, qwen.workload.kv_heads) == (64, 27648, 8)
    assert qwen.layout is not None and set(qwen.layout.recompute) == {full}
    seven = by_run["automodel_cb9765441e51_Qwen2.5 7B_DGX-H100_BF16_1gpu_r2_lora"]
    assert (seven.workload.hidden_size, seven.workload.vocab_size) == (3584, 152064)
    # Nemotron 3 Super's release-26.02 row: LatentMoE, no multi-token prediction (AutoModel's
    # came later); Ultra's row is scored (NVIDIA's aiconfigurator holds its configuration)
    nemotron = by_run[
        "automodel_cb9765441e51_Nemotron V3 Super 120B (26.02)_DGX-H100_BF16_64gpu_r1"
    ]
    assert nemotron.workload.moe is not None and nemotron.workload.moe.latent_size == 1024
    assert nemotron.workload.mtp_layers == 0 and not nemotron.workload.mtp_shared_layer
    assert not any(r.startswith("Nemotron V3 Ultra") for r in reasons)
    # rows older than their configuration's present form are read as their run stood: the
    # GPT-OSS rows print no expert-parallel size; the 20B's configuration when the table
    # published it (2025-10-06) ran EP 8 with every block checkpointed (dropped 2025-11-10);
    # the 120B's shape (EP 64, no checkpointing) and DeepSeek-V3's 1,024-GPU configuration
    # (checkpointed then) came two days later
    oss = by_run["automodel_cb9765441e51_GPT-OSS 20B_DGX-H100_BF16_8gpu_r8"]
    assert oss.workload.moe is not None and oss.workload.moe.expert_parallel == 8
    assert any("gptoss_20b_te_deepep.yaml @89e3a9fdd604" in n for n in oss.assumptions)
    assert oss.layout is not None and set(oss.layout.recompute) == {full}
    big = by_run["automodel_cb9765441e51_GPT-OSS 120B_DGX-H100_BF16_64gpu_r9"]
    assert big.workload.moe is not None and big.workload.moe.expert_parallel == 64
    assert big.layout is not None and set(big.layout.recompute) == {none}
    wide = by_run["automodel_cb9765441e51_DeepSeek V3 671B_DGX-H100_BF16_1024gpu_r4"]
    assert any("deepseek_v3_te_deepep_1024.yaml @2c236e081e49" in n for n in wide.assumptions)
    assert wide.layout is not None and set(wide.layout.recompute) == {full}
    assert not skipped
    # blind: no AutoModel row is fitted on
    assert not {c.run_id for c in cases} & {c.run_id for c in calibration_set()[0]}


def _figure(row: dict[str, str]) -> float:
    return float(row["tokens_sec_gpu"].replace(",", ""))


def test_torchtitan_runs_give_the_pytorch_stack_factors_and_are_scored_blind():
    """The eager and FP8 factors of a PyTorch stack are torchtitan's own ratios on one system
    (recorded rows, not typed figures); the rows scored are another system's, blind."""
    with TORCHTITAN.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:  # each row is its table line, cell for cell
        assert row["tokens_sec_gpu"] in row["source_row_raw"].split(" | ")
    grand_teton = [r for r in rows if r["system"] == "Grand Teton"]
    eager, fp8 = [], []
    for table in ("1", "3"):
        eager_bf16, compiled_bf16, compiled_fp8 = (
            _figure(r) for r in grand_teton if r["table_index"] == table
        )
        eager.append(eager_bf16 / compiled_bf16)
        fp8.append(compiled_fp8 / compiled_bf16)
    c = ModelConstants()
    assert sum(eager) / 2 == pytest.approx(c.eager_efficiency_factor, abs=5e-4)
    assert sum(fp8) / 2 == pytest.approx(TORCHTITAN_FP8_GAIN, rel=1e-12)
    # the PyTorch FP8 factor is the one at which the model's FP8 gain on torchtitan's job (the
    # linear layers FP8, attention and the embeddings BF16) is the gain it measured
    job = preset("llama3-8b")
    high = _high_precision_flops_step(job) / _model_flops_step(job)
    solved = (1 - high) / (1402.6 / 794.5 * (1 / TORCHTITAN_FP8_GAIN - high))
    assert c.fsdp_fp8_efficiency_factor == pytest.approx(solved, abs=1e-4)

    cases, skipped = torchtitan_cases()
    assert len(cases) + len(skipped) == len(rows) == 8
    assert {s.reason.split(":")[0] for s in skipped} == {"system Grand Teton"}
    assert all("peak is not published" in s.reason for s in skipped)
    assert [case.n_gpus for case in cases] == [32, 64]
    for case in cases:
        job = case.workload
        assert job.stack is Stack.FSDP and job.precision is Precision.FP8
        assert (
            job.zero_stage == 3 and job.seq_len == 8192 and job.batch_sequences == 2 * case.n_gpus
        )
        assert case.hardware["gpu_model"] == "H200-SXM-141GB"
        assert case.layout is not None
        assert set(case.layout.recompute) == {RECOMPUTE_MODES.index(Recompute.SELECTIVE)}
    scores = score(cases)
    # within 10% blind with the PyTorch FP8 factor
    assert all(s.timing_error_percent < 10 for s in scores)

    def megatron(case: CalibrationCase, recompute: Recompute) -> CalibrationCase:
        assert case.layout is not None
        index = RECOMPUTE_MODES.index(recompute)
        layout = replace(case.layout, recompute=np.full_like(case.layout.recompute, index))
        stack = case.workload.model_copy(update={"stack": Stack.MEGATRON})
        return replace(case, workload=stack, layout=layout)

    # torchtitan's selective checkpointing saves the attention output and costs no FLOPs, so
    # Megatron without recompute isolates the FP8 factor: its fitted one is 5-8% faster
    none = score([megatron(case, Recompute.NONE) for case in cases])
    assert all(
        m.predicted_timing > 1.05 * s.predicted_timing for m, s in zip(none, scores, strict=True)
    )
    # and Megatron's own selective recompute runs the core attention's forward again
    selective = score([megatron(case, Recompute.SELECTIVE) for case in cases])
    assert all(
        m.predicted_timing < 0.95 * n.predicted_timing for m, n in zip(selective, none, strict=True)
    )
    assert not {c.run_id for c in cases} & {c.run_id for c in calibration_set()[0]}


def test_a_printed_figure_is_one_number_or_refused():
    assert _throughput({"t": "4,497"}, "t") == 4497
    assert _throughput({"t": "12472.87"}, "t") == 12472.87
    assert _throughput({"t": "-"}, "t") is None
    for two in ("37556 (36108)", "4,49", "1,2345"):
        with pytest.raises(_Skip, match="not one number"):
            _throughput({"t": two}, "t")


def test_fine_tuning_rows_are_scored_with_their_adapters_and_recompute():
    """Megatron-Bridge's SFT and LoRA rows and AutoModel's LoRA rows: SFT costed as
    pre-training, LoRA with the benchmark configuration's adapters (frozen base: 4 passes),
    AutoModel's 70B with the full recompute its configuration states."""
    mbridge = {c.run_id: c for c in megatron_bridge_cases()[0]}
    # | DGX-GB300 | 32 | FP8 | 32 | 1 | 4096 | 1 | 2 | 1 | 20 | n/a | 4819 | 2083 | (SFT)
    sft = mbridge["mbridge_26.06_LLAMA3_70B_DGX-GB300_FP8_32gpu_r1_sft"]
    assert sft.published_tokens_per_s_per_gpu == 4819 and sft.workload.lora is None
    assert any("full fine-tuning (SFT)" in note for note in sft.assumptions)
    # | DGX-H100 | 8 | FP8 | 32 | 1 | 4096 | 2 | 4 | 1 | 20 | n/a | 2643 | 735 | (LoRA)
    lora = mbridge["mbridge_26.06_LLAMA3_70B_DGX-H100_FP8_8gpu_r5_lora"]
    assert lora.workload.lora is not None
    assert (lora.workload.lora.rank, lora.workload.lora.matrices_per_layer) == (16, 4)
    assert lora.published_tokens_per_s_per_gpu == 2643
    auto = {c.run_id: c for c in automodel_cases()[0]}
    llama = auto["automodel_cb9765441e51_Llama3 70B_DGX-H100_BF16_8gpu_r3_lora"]
    assert llama.workload.lora is not None and llama.workload.lora.matrices_per_layer == 7
    full = RECOMPUTE_MODES.index(Recompute.FULL)
    assert llama.layout is not None and set(llama.layout.recompute) == {full}
    assert llama.workload.zero_stage == 3
    assert any("from the benchmark's configuration" in note for note in llama.assumptions)
    # FSDP shards the frozen base too: the 70B's bf16 weights (141 GB over TP 2 x FSDP 4)
    # fit an 80 GB H100, as they ran. The SFT row runs its release's configuration (no
    # recompute), which the memory model puts at 308 GB of a GB300's 288 (docs/MODEL.md,
    # Known limits): scored on its timing
    assert all(s.fits_memory for s in score([lora, llama]))
    assert any("release 26.06's benchmark configuration" in a for a in sft.assumptions)


def _label(case: CalibrationCase) -> str:
    """The precision label a blind case's run id carries (before the row index and, for a
    fine-tuning row, its task)."""
    return case.run_id.removesuffix("_sft").removesuffix("_lora").split("_")[-3]


def test_each_fp8_label_is_scored_with_its_recipe_and_says_so():
    """NeMo 24.07's FP8 is delayed scaling, Megatron-Bridge's FP8-CS and plain FP8 (26.02+)
    current scaling (tensorwise), its MXFP8 / FP8-MX MX blocks, torchtitan's Float8 tensorwise;
    each row's assumptions name the recipe. NVFP4 is a precision of its own, its rows say so."""
    expected = {
        "FP8-CS": Fp8Recipe.TENSORWISE,
        "FP8": Fp8Recipe.TENSORWISE,
        "MXFP8": Fp8Recipe.MXFP8,
        "FP8-MX": Fp8Recipe.MXFP8,
    }
    cases, _ = megatron_bridge_cases()
    seen = set()
    for case in cases:
        label = _label(case)
        if case.workload.precision is Precision.BF16:
            assert label == "BF16" and "BF16" in case.assumptions
            continue
        if case.workload.precision is Precision.NVFP4:
            assert label == "NVFP4"
            # Nemotron 3 Super's note goes on to the layers its recipe keeps off NVFP4
            assert any(a.startswith(NVFP4_NOTE) for a in case.assumptions)
            mixed = case.workload.layer_precision is not None
            assert mixed == ("Nemotron_3_Super" in case.run_id)
            assert case.workload.fp8_recipe is Fp8Recipe.TENSORWISE  # the default, unused
            continue
        seen.add(label)
        assert case.workload.fp8_recipe is expected[label], case.run_id
        note = f"precision {label}: FP8 recipe {expected[label].value} ("
        assert any(a.startswith(note) for a in case.assumptions), case.run_id
    assert seen == set(expected)
    nvfp4 = [c for c in cases if c.workload.precision is Precision.NVFP4]
    names = {c.workload.name.split()[0] for c in nvfp4}
    assert names == {"LLAMA3_70B", "LLAMA3.1_405B", "Nemotron_3_Super"}
    assert len(nvfp4) == 18 + 13
    # the 26.02+ plain FP8 rows include H100's, which cannot run MX blocks
    plain = [c for c in cases if _label(c) == "FP8"]
    assert any(c.hardware["gpu_model"] == "H100-SXM-80GB" for c in plain)
    for case in nemo_2407_cases()[0]:
        assert case.workload.fp8_recipe is Fp8Recipe.DELAYED
        assert any("FP8 recipe delayed (NeMo 24.07" in a for a in case.assumptions)
    for case in torchtitan_cases()[0]:
        assert case.workload.fp8_recipe is Fp8Recipe.TENSORWISE


def test_bridge_rows_run_the_settings_of_their_release_s_configuration_of_their_layout():
    """A Megatron-Bridge row whose release shipped a performance configuration of its layout
    (TP, PP, CP, virtual stages, EP, global and micro-batch) runs that configuration's
    recompute and TP overlap (fixtures/published_runs/megatron_bridge_release_recipes.csv);
    a row whose release has none of its layout searches recompute and assumes no overlap,
    saying why."""
    recipes = benchmark_recipes()
    assert sum(len(v) for v in recipes.values()) == 1664
    # the variants of one layout (V1, V2...) agree on every setting the harness reads
    for variants in recipes.values():
        by_layout: dict[tuple[int | None, ...], set[tuple[object, ...]]] = {}
        for r in variants:
            settings = (
                r.recompute,
                r.method,
                r.recompute_layers,
                r.modules,
                r.cpu_offload_layers,
                r.tp_comm_overlap,
                r.ep_comm_overlap,
            )
            by_layout.setdefault(r.layout, set()).add(settings)
        assert all(len(s) == 1 for s in by_layout.values())
    cases = {c.run_id: c for c in megatron_bridge_cases()[0]}
    none = RECOMPUTE_MODES.index(Recompute.NONE)
    # 26.04.01 (v0.4.2): Llama 3 70B on 64 H100 in FP8-CS, TP4 PP8 VP5 GBS 256, no recompute,
    # userbuffers TP overlap
    h100 = cases["mbridge_26.04.01_LLAMA3_70B_DGX-H100_FP8_64gpu_r7"]
    assert h100.layout is not None and set(h100.layout.recompute) == {none}
    assert h100.workload.tp_comm_overlap
    assert any("release 26.04.01's benchmark configuration" in a for a in h100.assumptions)
    # 25.11 (v0.2.0) ran the same model at GBS 128, as its own configuration says
    older = cases["mbridge_25.11_LLAMA3_70B_DGX-H100_FP8-CS_64gpu_r2"]
    assert any("release 25.11's benchmark configuration" in a for a in older.assumptions)
    # 25.11's Llama 3.1 405B on 256 GB200: no configuration of 256 GPUs in that release
    unmatched = cases["mbridge_25.11_LLAMA3.1_405B_DGX-GB200_FP8-CS_256gpu_r3"]
    assert unmatched.layout is not None and len(set(unmatched.layout.recompute)) > 1
    assert not unmatched.workload.tp_comm_overlap
    assert any("none of the row's layout" in a for a in unmatched.assumptions)
    # GB200's 70B offloads 40 layers' activations to the host instead of recomputing
    gb200 = cases["mbridge_26.04.01_LLAMA3_70B_DGX-GB200_FP8_64gpu_r4"]
    assert gb200.layout is not None and set(gb200.layout.recompute) == {none}
    assert any("CPU offloading of 40 layers' activations" in a for a in gb200.assumptions)
    assert not gb200.workload.tp_comm_overlap  # TP 1: nothing to overlap
    # 26.06's DeepSeek-V3 on GB300 sets selective recompute of an empty module list: none
    empty = cases["mbridge_26.06_DeepSeekV3_DGX-GB300_MXFP8_256gpu_r1"]
    assert empty.layout is not None and set(empty.layout.recompute) == {none}
    assert any("selective of no modules" in a for a in empty.assumptions)
    # the MoE configurations' all-to-all overlap is read but not applied (MODEL.md)
    moe = [c for c in cases.values() if c.workload.moe is not None]
    overlapped = [c for c in moe if any("not applied" in a for a in c.assumptions)]
    assert overlapped and not any(c.workload.ep_comm_overlap for c in moe)
    # 215 of the 245 scored rows find their release's configuration (release 25.11's and
    # 26.02.01's others do not: run with settings their scripts do not state)
    matched = [
        c for c in cases.values() if any("s benchmark configuration " in a for a in c.assumptions)
    ]
    assert (len(matched), len(cases)) == (218, 248)


def test_a_moe_row_runs_the_token_dispatcher_its_configuration_or_table_names():
    """The release configuration's moe_token_dispatcher_type (flex: its backend; alltoall:
    NCCL's, whatever backend is also set); NeMo AutoModel's kernel_optimizations column; the
    DeepSeek-V3 report's own kernels; NCCL's all-to-all where nothing says."""
    cases = {c.run_id: c for c in megatron_bridge_cases()[0]}

    def dispatcher(case: CalibrationCase) -> Dispatcher:
        assert case.workload.moe is not None
        return case.workload.moe.dispatcher

    # GPT-OSS-120B's GB300 configuration names deepep as the backend of an alltoall dispatcher
    gpt_oss = cases["mbridge_26.04.01_GPT OSS 120B_DGX-GB300_BF16_64gpu_r1"]
    assert dispatcher(gpt_oss) is Dispatcher.ALLTOALL
    assert "token dispatcher alltoall, from the benchmark configuration" in " ".join(
        gpt_oss.assumptions
    )
    assert dispatcher(cases["mbridge_26.04.01_DeepSeekV3_DGX-GB300_MXFP8_256gpu_r1"]) is (
        Dispatcher.HYBRIDEP
    )
    assert dispatcher(cases["mbridge_26.04.01_DeepSeekV3_DGX-B200_MXFP8_256gpu_r4"]) is (
        Dispatcher.DEEPEP
    )
    # release 25.11's B200 rows find no configuration of their layout: not stated, NCCL's
    unstated = cases["mbridge_25.11_Qwen3_30B_a3B_DGX-B200_FP8-MX_8gpu_r5"]
    assert dispatcher(unstated) is Dispatcher.ALLTOALL
    assert "token dispatcher not stated: NCCL's all-to-all assumed" in unstated.assumptions
    automodel = {c.run_id: c for c in automodel_cases()[0]}
    kimi = automodel["automodel_cb9765441e51_Kimi K2_DGX-H100_BF16_256gpu_r6"]
    assert dispatcher(kimi) is Dispatcher.DEEPEP
    assert "token dispatcher deepep, from the row" in kimi.assumptions
    (report,) = deepseek_v3_report_cases()[0]
    assert dispatcher(report) is Dispatcher.DEEPEP


def test_a_moe_row_whose_configuration_runs_a_full_iteration_graph_fuses_its_experts():
    """26.06's full-iteration CUDA graph configurations set cutedsl_fused_grouped_mlp (and no
    other does): their rows run Transformer Engine's fused grouped MLP, the others the
    per-expert loop."""
    cases = {c.run_id: c for c in megatron_bridge_cases()[0]}
    fused = cases["mbridge_26.06_Qwen3_30B_a3B_DGX-GB300_MXFP8_8gpu_r1"]
    assert fused.workload.moe is not None and fused.workload.moe.fused_grouped_mlp
    assert any(
        "fused grouped MLP" in a and "QWEN3_30B_A3B_PRETRAIN_CONFIG_GB300_FP8_MX_V1" in a
        for a in fused.assumptions
    )
    looped = cases["mbridge_26.04.01_DeepSeekV3_DGX-GB300_MXFP8_256gpu_r1"]
    assert looped.workload.moe is not None and not looped.workload.moe.fused_grouped_mlp
    assert not any("fused grouped MLP" in a for a in looped.assumptions)
    graphs = [
        c for c in cases.values() if c.workload.moe is not None and c.workload.moe.fused_grouped_mlp
    ]
    assert graphs and all(
        c.workload.fp8_recipe.value == "mxfp8" and "26.06" in c.run_id for c in graphs
    )


def test_a_row_without_its_precision_runs_the_only_precision_its_layout_was_shipped_in():
    """Release 25.09 prints no precision: a row is scored as per-tensor FP8 when every
    configuration its release ships with the row's layout is a per-tensor FP8 one (the BF16
    configuration runs another layout); where the layout's configurations run BF16 as well,
    or none has it, the row stays out with that reason."""
    cases, skipped = megatron_bridge_cases()
    by_id = {c.run_id: c for c in cases}
    llama = by_id["mbridge_25.09_LLAMA3_70B_DGX-H100_FP8_64gpu_r2"]
    assert llama.workload.precision is Precision.FP8
    assert any(
        "per-tensor FP8, the only precision the release ships with the row's layout" in a
        and "perf_matrix.h100.num_gpus_64.fp8_cs" in a
        for a in llama.assumptions
    )
    assert len([c for c in cases if "_25.09_" in c.run_id]) == 3
    reasons = {s.run_id: s.reason for s in skipped if s.run_id.startswith("25.09 ")}
    assert reasons["25.09 LLAMA3.1_405B DGX-H100"].endswith(
        "its release ships its layout in BF16 as well as in FP8"
    )
    assert reasons["25.09 Qwen3_30B_a3B (tokendrop) DGX-B200"].endswith(
        "no configuration of its release has its layout"
    )


def test_a_row_its_table_marks_as_a_known_regression_is_left_out():
    _, skipped = megatron_bridge_cases()
    regressions = [s for s in skipped if "known issue" in s.reason]
    # 26.06.01's GPT-OSS 120B on GB300 and GB200 ([^gpt-oss-note]: cudnn-frontend issue 256)
    assert {s.run_id for s in regressions} == {
        "26.06.01 GPT OSS 120B DGX-GB300",
        "26.06.01 GPT OSS 120B DGX-GB200",
    }
    assert all("cudnn-frontend/issues/256" in s.reason for s in regressions)


def test_nemo_long_sequence_rows_are_cases_or_skipped_with_their_reason():
    with NEMO_LONG_SEQUENCE.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cases, skipped = nemo_long_sequence_cases()
    assert len(cases) + len(skipped) == len(rows) == 17
    # the nine Llama 2 7B rows on DGX H100, whose GPUs are TP x PP x DP x CP, are scored; the
    # eight Llama 3 8B rows on DGX B200 print 4x that many GPUs, and take the GPU count of
    # the table's earlier printing, where the same layouts and TFLOP/s have a consistent one
    assert len(cases) == 17 and not skipped
    b200 = [c for c in cases if c.hardware["gpu_model"] == "B200-SXM-180GB"]
    assert {c.workload.name.split(" ")[0] for c in b200} == {"LLAMA3-8B"} and len(b200) == 8
    assert sorted(c.n_gpus for c in b200) == [2, 4, 8, 16, 32, 64, 128, 256]
    for case in b200:
        assert case.layout is not None
        layout = case.layout.tp * case.layout.pp * case.layout.cp
        assert any(
            "earlier printing" in note and "@14d427f575ee" in note for note in case.assumptions
        )
        assert case.n_gpus % int(layout[0]) == 0
    # an earlier printing that disagrees (another TFLOP/s) fixes nothing
    with NEMO_LONG_SEQUENCE.open(newline="", encoding="utf-8") as handle:
        first_b200 = next(r for r in csv.DictReader(handle) if "B200" in r["section"])
    with NEMO_LONG_SEQUENCE_EARLIER.open(newline="", encoding="utf-8") as handle:
        earlier = list(csv.DictReader(handle))
    assert _earlier_printing(first_b200, earlier, (1, 1, 2, 1)) is not None
    other = [{**row, "tflops_gpu": "1,000"} for row in earlier]
    assert _earlier_printing(first_b200, other, (1, 1, 2, 1)) is None
    for case in cases:
        assert case.workload.precision is Precision.FP8
        assert case.workload.fp8_recipe is Fp8Recipe.DELAYED
        assert case.workload.micro_batch_size is None  # not printed: searched
        assert any("nemo/utils/flops_formulas.py" in note for note in case.assumptions)
        # the without-CP figure is either this layout's (CP 1) or of an unprinted layout
        assert any("without-CP figure" in note for note in case.assumptions)
    # blind: none of them is fitted on, and the held-out splits score them
    assert not {c.run_id for c in cases} & {c.run_id for c in calibration_set()[0]}
    assert {c.run_id for c in cases} <= {c.run_id for c in blind_cases()}
    assert all(s.predicted_timing > 0 for s in score(cases))


def test_a_nemo_long_sequence_row_maps_its_own_cells():
    by_run = {case.run_id: case for case in nemo_long_sequence_cases()[0]}
    # | 128 | 128 | 32 | 424 | 4 | 1 | 8 | 4 | 555 | 1.31 |: 128K tokens on 128 H100, batch 32,
    # TP 4, PP 1, DP 8, CP 4, 555 TFLOP/s per GPU with CP
    case = by_run["nemolongseq_NeMo24.03.01.framework_LLAMA2-7B_DGX-H100_FP8_128gpu_r6"]
    w = case.workload
    assert (w.seq_len, w.batch_sequences) == (128 * 1024, 32)
    assert (w.layers, w.hidden_size, w.heads, w.ffn_size, w.vocab_size) == (
        32,
        4096,
        32,
        11008,
        32000,
    )
    assert case.layout is not None and case.layout.given
    assert set(case.layout.tp) == {4} and set(case.layout.pp) == {1}
    assert set(case.layout.cp) == {4}
    assert case.hardware["gpu_count"] == 128 == 4 * 1 * 8 * 4
    # NeMo's count at 131072 tokens: 32 x 4096^2 x (12 + 12 + 18 x 11008/4096 + 12 x 32
    # + 6 x 32000 / (32 x 4096)) FLOPs per token
    per_token = 32 * 4096**2 * (12 + 12 + 18 * 11008 / 4096 + 12 * 32 + 6 * 32000 / (32 * 4096))
    assert nemo_llama_flops_per_token("llama2-7b", 128 * 1024) == pytest.approx(per_token)
    assert case.published_tokens_per_s_per_gpu == pytest.approx(555e12 / per_token)
    assert case.published_tokens_per_s_per_gpu == pytest.approx(2257.9, abs=0.1)
    assert WITHOUT_CP_GAP in case.assumptions  # CP 4: 424 unscored


def test_nemo_s_flops_count_reproduces_nemo_24_07_s_tflops_from_its_tokens():
    """NeMo 24.07's table prints both tokens/s and model TFLOP/s per GPU: NeMo's Llama FLOPs
    count, with which the long-sequence table's TFLOP/s are converted, gives one from the
    other within 1% on its Llama 2 7B and Llama 3 8B rows."""
    with NEMO_2407.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    shapes = {"LLAMA2-7B": "llama2-7b", "LLAMA3-8B": "llama3-8b"}
    # its pre-training rows (the fine-tuning rows' packed inputs are not this count's)
    llamas = [r for r in rows if r["section"] == "Pretraining" and r["model"] in shapes]
    assert [r["model"] for r in llamas] == ["LLAMA2-7B", "LLAMA3-8B"]
    for row in llamas:  # 16934 tokens/s -> 780 TFLOP/s; 12273 -> 711
        per_token = nemo_llama_flops_per_token(shapes[row["model"]], int(row["sequence_length"]))
        tflops = float(row["tokens_sec_gpu"]) * per_token / 1e12
        assert tflops == pytest.approx(float(row["model_tflop_sec_gpu"]), rel=0.01), row["model"]


def test_a_cell_with_two_recipes_runs_is_two_runs():
    # | LLAMA3_8B | 8 | FP8-CS (FP8-MX) | 128 | 2 | 8192 | 1 | 1 | 1 | n/a | 1 | 37556 (36108) |
    # 1933 (1858) |: 25.11's DGX-GB300 table, one layout, current scaling then MXFP8
    by_run = {case.run_id: case for case in megatron_bridge_cases()[0]}
    cs = by_run["mbridge_25.11_LLAMA3_8B_DGX-GB300_FP8-CS_8gpu_r1"]
    mx = by_run["mbridge_25.11_LLAMA3_8B_DGX-GB300_FP8-MX_8gpu_r1"]
    assert (cs.published_tokens_per_s_per_gpu, mx.published_tokens_per_s_per_gpu) == (37556, 36108)
    assert (cs.workload.fp8_recipe, mx.workload.fp8_recipe) == (
        Fp8Recipe.TENSORWISE,
        Fp8Recipe.MXFP8,
    )
    assert any("one of two runs" in note and "37556 (36108)" in note for note in mx.assumptions)
    # a row whose layout cell is paired, or whose recipes are not named, stays whole
    row = {"precision": "FP8-CS (FP8-MX)", "tokens_sec_gpu": "1 (2)", "cp": "1 (2)"}
    assert _unpaired(row) == [row]
    unnamed = {"precision": "", "tokens_sec_gpu": "31357 (29925)"}
    assert _unpaired(unnamed) == [unnamed]
