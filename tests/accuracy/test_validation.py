"""The scaling model against published training runs (fixtures/published_runs)."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from bench import model_docs
from fabricscope.accuracy import validation
from fabricscope.accuracy.published_tables import calibration_set
from fabricscope.accuracy.validation import (
    DOCS_END,
    DOCS_FILE,
    DOCS_START,
    FIT_BOUNDS,
    FIXTURE,
    fit_constants,
    map_rows,
    naive_errors,
    read_rows,
    score,
    summary,
)
from fabricscope.model.scaling import FP8_EFFICIENCY_PRIOR, ModelConstants
from fabricscope.model.workload import Precision, Recompute


@pytest.fixture(scope="module")
def mapped():
    return map_rows()


@pytest.fixture(scope="module")
def default_scores(mapped):
    return score(mapped[0])


def by_id(cases):
    return {case.run_id: case for case in cases}


def test_fixture_maps_into_cases(mapped):
    cases, skipped = mapped
    assert len(read_rows()) == 109
    assert len(cases) == 103  # every row with enough information (see the skipped reasons)
    assert len(cases) + len(skipped) == 109
    assert len({case.run_id for case in cases}) == len(cases)
    assert {case.family for case in cases} == {
        "megatron2021",
        "megatron",
        "mcore",
        "llmfoundry",
        "llama3",
    }


def test_a_context_parallel_row_is_scored_with_its_cp(mapped):
    cases = by_id(mapped[0])
    cp16 = cases["llama3_405b_16384gpu_cp16"]
    assert cp16.layout is not None and set(cp16.layout.cp) == {16}
    assert "context parallelism cp = 16, from the row" in cp16.assumptions
    [result] = score([cp16])
    assert ",cp=16" in result.layout and result.predicted_timing > 0


def test_every_skipped_row_has_a_reason(mapped):
    _, skipped = mapped
    assert len(skipped) == 6
    for row in skipped:
        assert row.run_id and len(row.reason) > 20, row
    reasons = {row.run_id: row.reason for row in skipped}
    assert all(
        "global_batch_sequences" in reason
        for run_id, reason in reasons.items()
        if run_id.startswith("korthikanti2022")
    )


def test_rows_map_their_own_fields(mapped):
    cases = by_id(mapped[0])
    mosaic = cases["llmfoundry_70b_a100_40gb_bf16_s2048_128gpu_L232"]
    assert mosaic.published_tokens_per_s_per_gpu == 376  # tokens_per_second_per_gpu as is
    assert mosaic.workload.zero_stage == 3 and mosaic.workload.micro_batch_size == 4
    assert mosaic.workload.activation_recompute is Recompute.FULL
    assert mosaic.hardware == {
        "gpu_model": "A100-SXM-40GB",
        "gpu_count": 128,
        "gpus_per_node": 8,
        "fabric_class": "roce",
        "fabric_gbps_per_gpu": 200,
    }
    llama = cases["llama3_405b_8192gpu_cp1"]
    assert llama.workload.batch_sequences == 2048  # 16M tokens of 8,192
    assert llama.workload.precision is Precision.BF16
    assert int(llama.layout.tp[0]) == 8 and int(llama.layout.pp[0]) == 16


def test_throughput_conversions_follow_each_source_convention(mapped):
    cases = by_id(mapped[0])
    # Narayanan et al. eq. 3: 137 TFLOP/s on GPT 1.7B (l 24, h 2304, s 2048, V 51200)
    per_token = 96 * 24 * 2304**2 * (1 + 2048 / (6 * 2304) + 51200 / (16 * 24 * 2304))
    megatron = cases["megatron2021_gpt_1.7B_32gpu"]
    assert megatron.published_tokens_per_s_per_gpu == pytest.approx(137e12 / per_token)
    # step time: 1,536 x 2,048 tokens in 32 s on 1,024 GPUs
    readme = cases["megatron_readme_gpt3_175b_1024a100"]
    assert readme.published_tokens_per_s_per_gpu == pytest.approx(96.0)
    assert readme.workload.vocab_size == 51200
    assert any("vocab not in row" in note for note in readme.assumptions)
    # Megatron-Core model FLOPs: 408.8 TFLOP/s on 1.7B (l 24, h 2048, s 4096, V 131072)
    per_token = 72 * 24 * 2048**2 * (1 + 4096 / (6 * 2048) + 131072 / (12 * 24 * 2048))
    mcore = cases["mcore_h100_weak_1.7B_48gpu"]
    assert mcore.published_tokens_per_s_per_gpu == pytest.approx(408.8e12 / per_token)


def test_assumptions_are_recorded(mapped):
    cases = by_id(mapped[0])
    strong = cases["mcore_h100_strong_gpt3_175b_96gpu"]
    assert strong.workload.layers == 96 and strong.workload.hidden_size == 12288
    assert strong.layout is None  # no layout published: searched
    assert any("mcore_h100_weak_177B_2304gpu" in note for note in strong.assumptions)
    assert any("InfiniBand NDR" in note for note in strong.assumptions)
    for case in cases.values():
        if case.run_id.startswith(("megatron", "mcore", "llama3")):
            assert any("tokens/s" in note for note in case.assumptions), case.run_id


def test_unknown_gpu_spellings_are_skipped_not_guessed(tmp_path):
    rows = read_rows()
    fields = list(rows[0])
    path = tmp_path / "runs.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for spelling in ("A100", "H100 SXM5 80GB (700W) maybe"):
            writer.writerow({**rows[0], "run_id": f"x_{spelling}", "gpu_model": spelling})
    cases, skipped = map_rows(path)
    assert not cases
    assert all("not in gpus.csv nor in the validation GPU rules" in s.reason for s in skipped)


def test_published_runs_within_targets(default_scores):
    # the targets, on every row whose source does not say VERIFY: median absolute
    # error <= 8%, no row worse than 30%, and no published layout rejected for memory
    verified = [s for s in default_scores if s.verified]
    assert len(verified) == 100
    stats = summary(verified)
    worst = max(verified, key=lambda s: s.error_percent)
    assert stats["median"] <= 8, stats
    assert worst.error_percent <= 30, (worst.run_id, worst.error_percent)
    assert all(s.fits_memory for s in verified), [s.run_id for s in verified if not s.fits_memory]


def test_unverified_rows_are_scored_but_kept_apart(mapped, default_scores):
    unverified = {s.run_id for s in default_scores if not s.verified}
    assert unverified == {
        "llama3_405b_8192gpu_cp1",
        "llama3_405b_16384gpu_cp1",
        "llama3_405b_16384gpu_cp16",
    }
    assert all(
        any("VERIFY" in note for note in case.assumptions)
        for case in mapped[0]
        if case.run_id in unverified
    )


def test_source_settings_fill_only_what_a_row_leaves_out(mapped):
    cases = by_id(mapped[0])
    readme = cases["megatron_readme_gpt3_175b_1024a100"]
    # the script the README describes: --checkpoint-activations, --micro-batch-size 1,
    # no interleaving, a 2020 container (no FlashAttention), Megatron's default dropout
    assert readme.workload.activation_recompute is Recompute.FULL
    assert readme.workload.micro_batch_size == 1 and readme.layout is not None
    assert list(readme.layout.micro_batch) == [1.0] and set(readme.layout.virtual) == {1.0}
    assert not readme.workload.flash_attention and readme.workload.dropout
    assert any("--checkpoint-activations" in note for note in readme.assumptions)
    # a row that states its own recompute keeps it; other sources keep the defaults
    paper = cases["megatron2021_gpt_1.7B_32gpu"]
    assert paper.workload.activation_recompute is Recompute.FULL
    assert not paper.workload.flash_attention
    mosaic = cases["llmfoundry_70b_a100_40gb_bf16_s2048_128gpu_L232"]
    assert mosaic.workload.flash_attention and not mosaic.workload.dropout


def test_the_model_beats_the_naive_6nd_baseline(mapped, default_scores):
    cases, _ = mapped
    model = np.array([s.timing_error_percent for s in default_scores])
    naive = np.array(naive_errors(cases))
    assert np.median(model) < 0.5 * np.median(naive)
    assert model.max() < 0.5 * naive.max()
    assert (model <= 10).sum() > (naive <= 10).sum()


@pytest.fixture(scope="module")
def fitted_on():
    """The rows the constants are fitted on: the CSV's and NeMo 24.07's FP8 table."""
    return calibration_set()


def test_the_documented_validation_is_the_generated_one(fitted_on):
    cases, skipped = fitted_on
    text = DOCS_FILE.read_text(encoding="utf-8")
    documented = text[text.index(DOCS_START) : text.index(DOCS_END) + len(DOCS_END)]
    assert documented == model_docs.section(cases, skipped), (
        "docs/MODEL.md is out of date: run python -m bench.model_docs"
    )
    # llm-analysis scores neither the context-parallel row nor FP8 training
    assert "| llm-analysis 0.2.2 at 50% FLOPS efficiency | 102 of 115 |" in documented


def test_scores_are_consistent(default_scores):
    for s in default_scores:
        assert s.published > 0 and s.predicted_timing > 0
        if s.fits_memory:
            assert s.predicted == s.predicted_timing
            assert s.error_percent == pytest.approx(
                abs(s.predicted - s.published) / s.published * 100
            )
        else:
            assert math.isnan(s.predicted) and s.error_percent == 100.0


def test_fit_stays_in_bounds_and_does_not_worsen(mapped):
    subset = mapped[0][::10]  # every family, a tenth of the cases: fast enough for a test
    unverified = [case.run_id for case in subset if not case.verified]
    assert unverified  # the subset holds a VERIFY row: the fit must leave it out
    constants, report = fit_constants(subset)
    assert any(
        note.startswith("not fitted on: ") and unverified[0] in note for note in report.notes
    )
    assert f"over the {len(subset) - len(unverified)} verified cases" in report.notes[0]
    for name, (low, high) in FIT_BOUNDS.items():
        assert low <= getattr(constants, name) <= high
        assert report.fitted[name] == getattr(constants, name)
    assert report.median_after <= report.median_before
    # no FP8 case: the FP8 factor cannot be fitted and keeps its prior (not the default,
    # which was fitted on FP8 rows a held-out fit must not see)
    assert constants.fp8_efficiency_factor == FP8_EFFICIENCY_PRIOR


def test_script_prints_table_and_summaries(monkeypatch, capsys, mapped):
    cases, skipped = mapped
    monkeypatch.setattr(validation, "map_rows", lambda path=FIXTURE: (cases[::25], skipped))
    validation.main()
    out = capsys.readouterr().out
    assert "| run id | GPUs | layout |" in out
    assert out.count("n = 5: median error") == 2  # default and fitted constants
    assert "## fitted constants" in out and "## skipped rows" in out


# a coarse grid: the same fit, few enough evaluations for a test
COARSE = {"eta_compute_max": 3, "matrix_width_half": 3, "fp8_efficiency_factor": 2, "dp_overlap": 2}


def test_each_family_is_predicted_by_constants_fitted_without_it(mapped):
    cases = mapped[0]
    families = {"megatron2021", "megatron", "mcore"}
    subset = [c for c in cases if c.family in families][::2] + [c for c in cases if not c.verified][
        :1
    ]
    held_out = validation.leave_one_family_out(subset, grid_points=COARSE)
    verified = [c for c in subset if c.verified]
    assert [group.name for group in held_out] == sorted({c.family for c in verified})
    for group in held_out:
        others = [c for c in verified if c.family != group.name]
        fitted, report = fit_constants(others, grid_points=COARSE)
        assert group.constants == report.fitted  # fitted on the other families alone
        mine = [c for c in verified if c.family == group.name]
        assert [s.run_id for s in group.scores] == [c.run_id for c in mine]
        assert [s.timing_error_percent for s in group.scores] == [
            s.timing_error_percent for s in score(mine, fitted)
        ]
    # a VERIFY row is neither fitted on nor scored
    assert not {s.run_id for g in held_out for s in g.scores} & {
        c.run_id for c in subset if not c.verified
    }
    table = validation.held_out_table(held_out)
    assert f"| all, each family held out | {len(verified)} |" in table
    with pytest.raises(ValueError, match="two families"):
        validation.leave_one_family_out([c for c in verified if c.family == "megatron2021"])


def test_the_documented_held_out_figures_are_for_these_rows_and_defaults(fitted_on):
    # the block takes minutes to regenerate (one fit per family), so it is checked by the
    # inputs it states: today's verified rows, families and default constants
    cases = fitted_on[0]
    text = DOCS_FILE.read_text(encoding="utf-8")
    block = text[text.index(validation.HELD_OUT_START) : text.index(validation.HELD_OUT_END)]
    verified = [c for c in cases if c.verified]
    stale = "docs/MODEL.md's held-out block is out of date: run python -m bench.model_docs"
    assert f"family's {len(verified)} verified rows" in block, stale
    for family in {c.family for c in verified}:
        assert f"| {family} | {sum(c.family == family for c in verified)} |" in block, stale
    d = ModelConstants()
    stated = (
        f"eta_compute_max={d.eta_compute_max:g}, matrix_width_half={d.matrix_width_half:g}, "
        f"dp_overlap={d.dp_overlap:g}"
    )
    assert stated in block, stale
    assert f"| all, each family held out | {len(verified)} |" in block, stale
