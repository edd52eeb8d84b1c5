"""Regenerate the validation sections of docs/MODEL.md: the model beside the naive baseline and
llm-analysis on the published runs (in-sample), the leave-one-family-out figures (one fit
per family: minutes), the scaling efficiency between sizes of one job, the blind tables, and
each GPU generation and stack held out (four coarser fits: about a minute), and from those
same fits the error bands every training estimate shows (fabricscope/model/error_bands.json).
``python -m bench.model_docs``; a test checks the file holds what this generates, the held-out
block by the inputs it states (tests/accuracy/test_validation.py).

The same blocks, from the same run, go into bench/results.md (``make bench`` generates them
there too, and writes them into docs/MODEL.md): the accuracy figures have one source, and
tests/bench/test_results.py fails when the two files disagree."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import llm_analysis_baseline
from fabricscope.accuracy.held_out import (
    SPLITS_END,
    SPLITS_START,
    blind_cases,
    held_out_splits,
    splits_section,
    write_bands,
)
from fabricscope.accuracy.published_tables import (
    automodel_cases,
    calibration_set,
    deepseek_v3_report_cases,
    megatron_bridge_cases,
    nemo_long_sequence_cases,
    torchtitan_cases,
)
from fabricscope.accuracy.scaling_pairs import (
    SCALING_END,
    SCALING_START,
    held_out_scaling,
    scaling_pairs,
    scaling_section,
)
from fabricscope.accuracy.validation import (
    BLIND_END,
    BLIND_START,
    DOCS_END,
    DOCS_FILE,
    DOCS_START,
    HELD_OUT_END,
    HELD_OUT_START,
    CalibrationCase,
    HeldOutGroup,
    SkippedRow,
    blind_section,
    docs_section,
    held_out_section,
    leave_one_family_out,
    replace_block,
    score,
)
from fabricscope.model.error_bands import BANDS_FILE

RESULTS_FILE = Path(__file__).resolve().parent / "results.md"


@dataclass(frozen=True)
class Block:
    """One generated block: its text carries both markers."""

    start: str
    end: str
    text: str


# the generated blocks, in the order the files hold them
MARKERS = (
    (DOCS_START, DOCS_END),
    (HELD_OUT_START, HELD_OUT_END),
    (SCALING_START, SCALING_END),
    (BLIND_START, BLIND_END),
    (SPLITS_START, SPLITS_END),
)


def section(cases: Sequence[CalibrationCase], skipped: Sequence[SkippedRow]) -> str:
    """The section, with llm-analysis as the third estimator (it is a test dependency)."""
    if not llm_analysis_baseline.AVAILABLE:
        raise SystemExit(llm_analysis_baseline.MISSING)
    results = llm_analysis_baseline.llm_analysis_results(cases, score(cases))
    extra = [(llm_analysis_baseline.row_name(), [r.error_percent for r in results])]
    return docs_section(cases, skipped, extra, llm_analysis_baseline.notes(results))


# the blind tables' models, by the start of their names, as the blind block groups them
BLIND_KINDS = {
    "LLAMA2": "Llama 2 (dense)",
    "LLAMA": "Llama 3 (dense)",
    "Llama3": "Llama 3 (dense)",
    "Llama 3.1": "Llama 3 (dense)",
    "DeepSeekV3 (w/ MTP)": "DeepSeek-V3 with MTP (MoE)",
    "DeepSeek-V3 report": "DeepSeek-V3 with MTP (MoE)",
    "DeepSeekV3": "DeepSeek-V3 (MoE)",
    "DeepSeek V3": "DeepSeek-V3 (MoE)",
    "Qwen3_30B": "Qwen3-30B-A3B (MoE)",
    "Qwen3 MoE 30B": "Qwen3-30B-A3B (MoE)",
    "Qwen3_235B": "Qwen3-235B-A22B (MoE)",
    "Kimi": "Kimi K2 (MoE)",
    "GPT OSS 120B": "GPT-OSS-120B (MoE)",
    "GPT-OSS 120B": "GPT-OSS-120B (MoE)",
    "GPT-OSS 20B": "GPT-OSS-20B (MoE)",
    "Nemotron_3_Nano": "Nemotron 3 Nano (hybrid MoE)",
    "Nemotron V3 Nano": "Nemotron 3 Nano (hybrid MoE)",
    "Nemotron_3_Super": "Nemotron 3 Super (hybrid LatentMoE, MTP)",
    "Nemotron V3 Super": "Nemotron 3 Super (hybrid LatentMoE)",
    "Nemotron V3 Ultra": "Nemotron 3 Ultra (hybrid LatentMoE, MTP)",
}


def blind() -> str:
    """NVIDIA's Megatron-Bridge, NeMo AutoModel and NeMo long-sequence tables and torchtitan's
    runs, scored blind (cheap: no fit)."""
    cases, skipped = megatron_bridge_cases()
    auto, auto_skipped = automodel_cases()
    titan, titan_skipped = torchtitan_cases()
    long_seq, long_seq_skipped = nemo_long_sequence_cases()
    report, report_skipped = deepseek_v3_report_cases()

    def system(case: CalibrationCase) -> str:
        model = case.workload.name  # the table's model name, then system, precision, GPUs
        kind = next((k for start, k in BLIND_KINDS.items() if model.startswith(start)), model)
        return f"{kind}, {case.hardware['gpu_model']}, {case.workload.precision.value}"

    return "\n".join(
        [
            BLIND_START,
            blind_section(
                "NVIDIA's Megatron-Bridge pre-training and fine-tuning tables (fixtures/"
                "published_runs/megatron_bridge_performance_summary_archive.csv, releases "
                "25.09-26.06; the dense Llama 3 8B/70B/405B rows, Llama 3 70B's SFT and LoRA "
                "rows, and the MoE models with a named architecture: DeepSeek-V3 (with and "
                "without multi-token prediction), Qwen3-30B-A3B, Qwen3-235B-A22B, Kimi K2, "
                "GPT-OSS-120B and the hybrid Mamba-Transformers Nemotron 3 Nano and Nemotron 3 "
                "Super (LatentMoE, multi-token prediction)), each row's own layout",
                cases,
                skipped,
                system,
            ),
            "",
            blind_section(
                "NVIDIA NeMo AutoModel's H100 BF16 pre-training and LoRA tables (fixtures/"
                "published_runs/automodel_performance_summary.csv: a PyTorch-native FSDP2 stack "
                "with Transformer Engine kernels, not Megatron-Core; the rows with a named "
                "architecture), each row's own layout",
                auto,
                auto_skipped,
                system,
            ),
            "",
            blind_section(
                "torchtitan's published runs (fixtures/published_runs/torchtitan_benchmarks.csv, "
                "transcribed from pytorch/torchtitan benchmarks/: PyTorch FSDP2 with "
                "torch.compile, Float8 linears; Trainy's Llama 3.1 8B on 32 and 64 H200), costed "
                "as stack fsdp with the PyTorch FP8 factor, which comes from the same files' "
                "Grand Teton ratios (left out below: their GPU's peak is not published)",
                titan,
                titan_skipped,
                system,
            ),
            "",
            blind_section(
                "NVIDIA NeMo's long-sequence table (fixtures/published_runs/"
                "nemo_performance_long_sequence.csv: Llama 2 7B in FP8 on DGX H100, NeMo 24.03.01, "
                "4K-1024K tokens, each row's context-parallel layout (TP, PP, DP, CP) and batch; "
                "FP8 as delayed scaling, micro-batch and recompute searched), its TFLOP/s per GPU "
                "converted to tokens/s with NeMo's own Llama FLOPs count (nemo/utils/"
                "flops_formulas.py, attention counted non-causal); the without-CP figures not "
                "scored (their layouts are not printed)",
                long_seq,
                long_seq_skipped,
                system,
            ),
            "",
            blind_section(
                "DeepSeek-V3's own pre-training run (fixtures/published_runs/"
                "deepseek_v3_report.csv, from its technical report, arXiv:2412.19437: 180K H800 "
                "GPU hours per trillion tokens on 2,048 H800, PP 16, EP 64 over 8 nodes, ZeRO-1 "
                "DP, blockwise FP8, one MTP depth, DualPipe's all-to-all overlap; the micro-batch "
                "searched)",
                report,
                report_skipped,
                system,
            ),
            BLIND_END,
        ]
    )


def scaling(cases: Sequence[CalibrationCase]) -> str:
    """The in-sample scaling block: pairs of sizes of one job (cheap: no fit)."""
    return scaling_section(scaling_pairs(cases, score(cases)))


def splits(
    cases: Sequence[CalibrationCase],
    held_out: Mapping[str, Sequence[HeldOutGroup]] | None = None,
) -> str:
    """Each GPU generation and stack held out, over the calibration rows and the blind tables'
    (about a minute: one coarser fit per group with calibration rows; none when ``held_out``,
    :func:`held_out_splits` over the same rows, is given)."""
    blind = blind_cases()
    return splits_section(
        cases, blind, held_out_splits(cases, blind) if held_out is None else held_out
    )


def blocks(report: Callable[[str], None], bands_file: Path | None = None) -> list[Block]:
    """Every generated block, in MARKERS' order, from one run (minutes: one fit per family);
    with ``bands_file``, the error bands from the same held-out fits written there."""
    cases, skipped = calibration_set()
    report(f"in-sample: the model, the naive baseline and llm-analysis on {len(cases)} runs")
    in_sample = section(cases, skipped)
    report("leave-one-family-out: one constant fit per source family")
    groups = leave_one_family_out(cases)
    report("held out by GPU generation and by stack: one coarser fit per group")
    held = held_out_splits(cases, blind_cases())
    if bands_file is not None:
        write_bands(held, bands_file)
        report(f"wrote the error bands into {bands_file.name}")
    texts = (
        in_sample,
        held_out_section(cases, groups, [held_out_scaling(cases, groups)]),
        scaling(cases),
        blind(),
        splits(cases, held),
    )
    return [Block(start, end, text) for (start, end), text in zip(MARKERS, texts, strict=True)]


def holds_blocks(path: Path) -> bool:
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return all(start in text and end in text for start, end in MARKERS)


def write(generated: Sequence[Block], path: Path) -> None:
    """Put each block between its markers in ``path``."""
    for block in generated:
        replace_block(path, block.start, block.end, block.text)


def main() -> None:
    generated = blocks(lambda message: print(f"[model_docs] {message}", flush=True), BANDS_FILE)
    write(generated, DOCS_FILE)
    print(f"wrote the validation sections of {DOCS_FILE.name}")
    if holds_blocks(RESULTS_FILE):
        write(generated, RESULTS_FILE)
        print(f"and the same blocks into {RESULTS_FILE.parent.name}/{RESULTS_FILE.name}")
    else:
        print(f"{RESULTS_FILE.name} holds no accuracy blocks yet: run make bench")


if __name__ == "__main__":
    main()
