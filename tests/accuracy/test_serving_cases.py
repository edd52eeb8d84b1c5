"""Published serving measurements as cases (fixtures/published_runs/serving)."""

from __future__ import annotations

import csv
import hashlib
import itertools
import math
import shutil
from collections import Counter
from pathlib import Path

import pytest

from fabricscope.accuracy.serving_cases import (
    FILES,
    MLPERF_DATASET_TABLES,
    MLPERF_INPUT_LENGTHS,
    MODEL_NAMES,
    PSAP_REPO,
    SERVING_ARCHITECTURES,
    SERVING_DATA,
    SERVING_MLA,
    ServingCase,
    architecture,
    dataset_inputs,
    derive_input_lengths,
    load_cases,
    map_rows,
    skipped,
)
from fabricscope.model.workload import Workload
from fabricscope.rank.catalog import resolve_gpu

# the project's shared research data, which the fixtures copy (absent on a clean clone)

# docs/SERVING_DATA.md gives the same numbers
ROWS = {
    "mlperf_inf_v4.1_llm.csv": 182,
    "mlperf_inf_v5.1_llm.csv": 392,
    "trtllm_perf_overview.csv": 923,
    "trtllm_dsr1_best_perf.csv": 5,
}
CASES = {
    "mlperf_inf_v4.1": 100,
    "mlperf_inf_v5.1": 271,
    "trtllm_perf_overview_v0.17": 338,
    "trtllm_perf_overview_v0.17_online": 72,
    "trtllm_perf_overview_v1.0": 328,
    "trtllm_perf_overview_latest": 150,
    "trtllm_dsr1_best_perf": 5,
}
SKIPPED = {
    "mlperf_inf_v4.1_llm.csv": 82,
    "mlperf_inf_v5.1_llm.csv": 121,
    "trtllm_perf_overview.csv": 35,
}
# reason (by its opening words) -> rows
REASONS = {
    "the same run as": 157,  # 70 MLPerf v4.1 pairs, 87 v5.1 pairs
    "open division": 26,  # v4.1: 4 (modification unstated); v5.1: 22 (another model)
    "heterogeneous GPU cluster": 8,
    "GPU 'GH200 480GB'": 35,  # TensorRT-LLM v0.17: HBM size not stated
    "GPU 'GH200 144GB'": 8,  # not in gpus.csv
    "GPU 'Intel Arc Pro B60'": 4,  # not in gpus.csv
}


@pytest.fixture(scope="module")
def cases() -> list[ServingCase]:
    return load_cases()


@pytest.fixture(scope="module")
def by_id(cases: list[ServingCase]) -> dict[str, ServingCase]:
    return {case.case_id: case for case in cases}


def rows(name: str, folder: Path = SERVING_DATA) -> list[dict[str, str]]:
    with (folder / name).open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_row_becomes_a_case_or_is_skipped_once(cases):
    ids = [case.case_id for case in cases] + [row_id for row_id, _ in skipped()]
    assert len(ids) == len(set(ids))
    expected = {f"{name}:{line}" for name, n in ROWS.items() for line in range(2, n + 2)}
    assert set(ids) == expected
    for name, n in ROWS.items():
        assert len(rows(name)) == n, name


def test_counts_per_source(cases):
    assert Counter(case.source_id for case in cases) == CASES
    assert Counter(row_id.split(":")[0] for row_id, _ in skipped()) == SKIPPED
    for name, n in ROWS.items():
        made = sum(case.case_id.startswith(f"{name}:") for case in cases)
        assert made + SKIPPED.get(name, 0) == n, name


def test_skipped_reasons_are_one_line_each_and_counted():
    reasons = [reason for _, reason in skipped()]
    assert all(reason.strip() and "\n" not in reason and len(reason) < 200 for reason in reasons)
    counted = Counter(
        next((start for start in REASONS if reason.startswith(start)), reason) for reason in reasons
    )
    assert counted == REASONS


def test_a_run_reported_under_both_accuracy_targets_is_one_case(by_id):
    reasons = dict(skipped())
    # mlperf_inf_v4.1 lines 6 and 8: AMD 8xMI300X_2xEPYC-9374F llama2-70b-99.9 and -99
    # Offline, both 23514.8 tokens/s and flagged the same run: the -99 row is kept
    assert reasons["mlperf_inf_v4.1_llm.csv:6"] == (
        "the same run as mlperf_inf_v4.1_llm.csv:8 (reported under both -99 and -99.9)"
    )
    assert "mlperf_inf_v4.1_llm.csv:8" in by_id
    for row_id, reason in reasons.items():
        if reason.startswith("the same run as "):
            twin = reason.removeprefix("the same run as ").split(" ", 1)[0]
            assert twin in by_id or twin in reasons, row_id


def test_no_duplicate_runs(cases):
    runs = Counter(
        (
            case.source_id,
            case.system,
            case.model_as_published,  # MLPerf: names the benchmark and its accuracy target
            case.scenario,
            case.gpu_model,
            case.gpus,
            case.weights_precision,
            case.kv_precision,
            case.input_len,
            case.output_len,
            case.request_rate_per_s,
            case.concurrency,
            case.tp,
            case.pp,
            case.ep,
            case.dp,
        )
        for case in cases
    )
    assert [run for run, n in runs.items() if n > 1] == []
    mlperf = Counter(
        (case.source_id, case.system, case.model_as_published, case.scenario)
        for case in cases
        if case.family == "mlperf"
    )
    assert max(mlperf.values()) == 1


# Per-GPU output tokens/s worked by hand from the published cells:
HAND_CHECKED = {
    # MLPerf v5.1 AMD 8xMI300X llama2-70b-99 Interactive: Performance_Result 8840.42 tokens/s
    # for the system of 1 node x 8 GPUs -> 8840.42 / 8
    "mlperf_inf_v5.1_llm.csv:2": 8840.42 / 8,  # 1105.0525
    # MLPerf v5.1 Cisco HGX-H100 x16 llama2-70b-99 Offline: 62351.6 over 2 nodes x 8 GPUs
    "mlperf_inf_v5.1_llm.csv:60": 62351.6 / 16,  # 3896.975
    # MLPerf v5.1 NVIDIA GB200-NVL72 DeepSeek-R1 Offline: 289712.0 over 18 trays x 4 GPUs
    "mlperf_inf_v5.1_llm.csv:248": 289712.0 / 72,  # 4023.78
    # MLPerf v4.1 AMD 8xMI300X llama2-70b-99 Offline: 23514.8 over 8 GPUs
    "mlperf_inf_v4.1_llm.csv:8": 23514.8 / 8,  # 2939.35
    # TensorRT-LLM v0.17: LLaMA v3.1 70B, H200, TP 8, 128/128: 15355.84 tokens/s for the TP
    # group -> / 8
    "trtllm_perf_overview.csv:132": 15355.84 / 8,  # 1919.48
    # TensorRT-LLM v0.14 online: LLaMA 3.1 70B, H100, TP 4, QPS 2: Output Tput 498 -> / 4
    "trtllm_perf_overview.csv:375": 498 / 4,  # 124.5
    # TensorRT-LLM v1.0: Llama 3.3 70B, H100 TP2 (FP8), 1000/1000: "Total Output Throughput"
    # 4,205 -> / 2
    "trtllm_perf_overview.csv:519": 4205 / 2,  # 2102.5
    # TensorRT-LLM latest: Deepseek R1 0528, B200 DEP4 (FP4), 1000/1000: "Output Throughput
    # per GPU" 6,463: already per GPU, not divided by the 4 GPUs
    "trtllm_perf_overview.csv:775": 6463.0,
    # DeepSeek-R1 blog, B200 min-latency: Total Output Throughput 274.4168 on 8 GPUs; the
    # blog prints Per GPU Output Throughput 34.3021 itself
    "trtllm_dsr1_best_perf.csv:2": 274.4168 / 8,  # 34.3021
}


@pytest.mark.parametrize("case_id", sorted(HAND_CHECKED))
def test_throughput_is_normalised_per_gpu(by_id, case_id):
    assert by_id[case_id].measured_output_tokens_s_per_gpu == pytest.approx(HAND_CHECKED[case_id])


def test_per_gpu_throughput_agrees_with_the_tables_derived_column(cases):
    """The compiled tables carry a derived per-GPU column (rounded); the cases agree with it."""
    published: dict[str, float] = {}
    for name in FILES:
        for line, row in enumerate(rows(name), start=2):
            published[f"{name}:{line}"] = float(row["throughput_tokens_s_per_gpu"])
    for case in cases:
        expected = published[case.case_id]
        assert case.measured_output_tokens_s_per_gpu == pytest.approx(expected, abs=0.006), (
            case.case_id
        )


def test_every_case_has_an_architecture_a_workload_accepts(cases):
    for name in {case.model for case in cases} | set(MODEL_NAMES.values()):
        shape = architecture(name)
        assert shape["source"], name
        Workload(**shape["fields"], name=name, tokens=1e12, global_batch_size=1)
    for name, entry in SERVING_ARCHITECTURES.items():
        assert "http" in entry["source"] or "arXiv" in entry["source"], name
    with pytest.raises(KeyError):
        architecture("no-such-model")


def test_deepseek_v3_states_its_latent_attention_and_keeps_its_training_shape():
    shape = architecture("deepseek-v3")
    assert shape["fields"]["kv_lora_rank"] == 512 and shape["fields"]["rope_head_dim"] == 64
    assert "arXiv:2412.19437" in shape["source"]
    # the preset's other fields are untouched, and a name without MLA gets none
    assert shape["fields"]["heads"] == 128 and shape["fields"]["params_billion"] == 671
    assert "kv_lora_rank" not in architecture("llama3-70b")["fields"]
    assert all("arXiv" in entry["source"] for entry in SERVING_MLA.values())


def test_every_case_names_a_gpu_in_gpus_csv(cases):
    for case in cases:
        assert resolve_gpu(case.gpu_model) == case.gpu_model, case.case_id


def test_mlperf_server_and_interactive_cases_have_their_limits(cases):
    # ms, p99 TTFT / TPOT, as MLPerf logs them (SOURCES.md)
    limits = {
        ("llama2-70b", "server"): (2000.0, 200.0),
        ("llama2-70b", "interactive"): (450.0, 40.0),
        ("llama3-405b", "server"): (6000.0, 175.0),
        ("llama3-405b", "interactive"): (4500.0, 80.0),
        ("llama3-8b", "server"): (2000.0, 100.0),
        ("mixtral-8x7b", "server"): (2000.0, 200.0),
        ("deepseek-v3", "server"): (2000.0, 80.0),
    }
    for case in (c for c in cases if c.family == "mlperf"):
        if case.scenario == "offline":
            assert (case.ttft_limit_ms, case.tpot_limit_ms) == (None, None), case.case_id
        else:
            key = (case.model, case.scenario)
            assert (case.ttft_limit_ms, case.tpot_limit_ms) == limits[key], case.case_id
            assert case.measured_ttft_p99_ms is not None and case.measured_tpot_p99_ms is not None


def test_mlperf_multi_node_cases_are_flagged(by_id, cases):
    for case in cases:
        assert case.multi_node == (case.nodes > 1), case.case_id
        assert case.gpus >= case.nodes
    # Cisco HGX-H100 x16 (2 servers over Ethernet) and the GB200 NVL72 rack (18 trays of 4)
    assert by_id["mlperf_inf_v5.1_llm.csv:60"].multi_node
    assert (
        by_id["mlperf_inf_v5.1_llm.csv:248"].nodes,
        by_id["mlperf_inf_v5.1_llm.csv:248"].gpus,
    ) == (
        18,
        72,
    )
    assert not any(case.multi_node for case in cases if case.family == "trtllm")
    assert sum(case.multi_node for case in cases) == 34


# each MLPerf benchmark's architecture -> its dataset
MLPERF_DATASETS = {
    "llama2-70b": "llama2-70b",
    "mixtral-8x7b": "mixtral-8x7b",
    "llama3-8b": "llama3.1-8b",
    "llama3-405b": "llama3.1-405b",
    "deepseek-v3": "deepseek-r1",
}


def test_nothing_is_guessed(cases, by_id):
    for case in cases:
        if case.family == "mlperf":
            # dataset-distributed: the dataset's mean prompt, from a derivation that says so
            inputs = dataset_inputs()[MLPERF_DATASETS[case.model]]
            assert case.input_len == inputs.mean_input_tokens
            assert case.input_mix == inputs.buckets
            assert any("third party" in note for note in case.assumptions)
            assert case.kv_precision is None
        if case.source_id == "mlperf_inf_v4.1":
            assert case.weights_precision is None  # not in v4.1's result files
        else:
            assert case.weights_precision in {"bf16", "fp8", "fp4", "int4"}
        if case.scenario == "offline":
            assert case.measured_ttft_ms is None and case.measured_tpot_ms is None
    # a config file holding two settings leaves the parallelism open
    assert any("tp '2|4'" in note for case in cases for note in case.assumptions)
    online = by_id["trtllm_perf_overview.csv:375"]
    assert (online.measured_ttft_ms, online.measured_itl_ms, online.measured_tpot_ms) == (
        62,
        21,
        None,
    )
    assert (online.input_len, online.output_len, online.request_rate_per_s) == (467, 256, 2)


def test_a_row_without_a_throughput_is_skipped(tmp_path):
    for name in FILES:
        shutil.copy(SERVING_DATA / name, tmp_path / name)
    table = rows("mlperf_inf_v5.1_llm.csv")
    # line 64: Cisco HGX-H100 x16 llama3.1-405b Offline (no -99/-99.9 twin to stand in)
    table[64 - 2]["throughput_tokens_s_total"] = ""
    with (tmp_path / "mlperf_inf_v5.1_llm.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    made, dropped = map_rows(tmp_path)
    assert ("mlperf_inf_v5.1_llm.csv:64", "no throughput") in dropped
    assert len(made) == sum(CASES.values()) - 1


# the SHA-256 of each copy, taken when it was copied byte for byte from the shared research
# data (shared/data/serving/): an edit to a fixture fails here
COPIED_SHA256 = {
    "mlperf_inf_v4.1_llm.csv": "a0bf7eef18a06c23ce46cb766686a3435828735983ad610e373dcd24b1a149c7",
    "mlperf_inf_v5.1_llm.csv": "c17690ceeea16731ebddbf6afe5243b994d0e7e447349177621e63137fb034f6",
    "trtllm_perf_overview.csv": "2135b4822501e292878356252cf43265faed6dace91eb7f206fda06304509d30",
    "trtllm_dsr1_best_perf.csv": "4fa0a3f400bbeb2d1500e3719b84e7bc47fe7135691ff21689a4747a118abe9f",
}


def test_the_fixtures_are_the_copies_made():
    assert set(COPIED_SHA256) == set(FILES)
    for name in FILES:
        digest = hashlib.sha256((SERVING_DATA / name).read_bytes()).hexdigest()
        assert digest == COPIED_SHA256[name], name


def test_case_numbers_are_finite(cases):
    for case in cases:
        assert math.isfinite(case.measured_output_tokens_s_per_gpu) and (
            case.measured_output_tokens_s_per_gpu > 0
        )


# the logged performance_sample_count of each MLPerf dataset (SOURCES.md)
SAMPLE_COUNTS = {
    "llama2-70b": 24_576,
    "mixtral-8x7b": 15_000,
    "llama3.1-8b": 13_368,
    "llama3.1-405b": 8_313,
    "deepseek-r1": 4_388,
}
# each dataset's mean prompt, computed from PSAP's per-sample tables
MEAN_INPUT_TOKENS = {
    "llama2-70b": 222.33,
    "mixtral-8x7b": 427.39,
    "llama3.1-8b": 870.73,
    "llama3.1-405b": 9428.64,
    "deepseek-r1": 803.79,
}


def test_mlperf_prompt_lengths_are_a_stated_derivation():
    table = rows(MLPERF_INPUT_LENGTHS)
    found = dataset_inputs()
    assert set(found) == set(SAMPLE_COUNTS) == set(MLPERF_DATASET_TABLES)
    for dataset, inputs in found.items():
        parts = [row for row in table if row["dataset"] == dataset]
        assert [int(row["bucket"]) for row in parts] == list(range(1, 11))
        assert sum(int(row["samples"]) for row in parts) == SAMPLE_COUNTS[dataset]
        # equal-count buckets, shortest first, each mean inside its bucket
        assert max(int(r["samples"]) for r in parts) - min(int(r["samples"]) for r in parts) <= 1
        for row, after in itertools.pairwise(parts):
            assert int(row["input_tokens_max"]) <= int(after["input_tokens_min"])
        for row in parts:
            low, high = int(row["input_tokens_min"]), int(row["input_tokens_max"])
            assert low <= float(row["input_tokens_mean"]) <= high
        assert inputs.mean_input_tokens == MEAN_INPUT_TOKENS[dataset]
        assert sum(share for _, share in inputs.buckets) == pytest.approx(1.0)
        weighted = sum(tokens * share for tokens, share in inputs.buckets)
        assert weighted == pytest.approx(inputs.mean_input_tokens, abs=0.01)
        path, commit, official = MLPERF_DATASET_TABLES[dataset]
        assert {(r["source_repo"], r["source_path"], r["source_commit"]) for r in parts} == {
            (PSAP_REPO, path, commit)
        }
        assert {r["official_file"] for r in parts} == {official}
    sources = " ".join((SERVING_DATA / "SOURCES.md").read_text(encoding="utf-8").split())
    assert MLPERF_INPUT_LENGTHS in sources and "not a verbatim recording" in sources
    assert all(commit in sources for _, commit, _ in MLPERF_DATASET_TABLES.values())


def test_the_derivation_buckets_each_dataset_by_prompt_length(tmp_path):
    for path, _, _ in MLPERF_DATASET_TABLES.values():
        # 23 samples, shuffled: ten buckets of 3, 3, 3, 2, ...; outputs never read
        lengths = [(7 * i) % 23 + 1 for i in range(23)]
        text = "input_length,output_length\n" + "".join(f"{n},x\n" for n in lengths)
        (tmp_path / Path(path).name).write_text(text, encoding="utf-8")
    derived = derive_input_lengths(tmp_path)
    llama = [row for row in derived if row["dataset"] == "llama2-70b"]
    assert [row["samples"] for row in llama] == [3, 3, 3, 2, 2, 2, 2, 2, 2, 2]
    assert (llama[0]["input_tokens_min"], llama[0]["input_tokens_max"]) == (1, 3)
    assert llama[0]["input_tokens_mean"] == 2.0 and llama[-1]["input_tokens_mean"] == 22.5
    assert llama[0]["dataset_input_tokens_mean"] == 12.0
    expected = hashlib.sha256(text.encode()).hexdigest()
    assert {row["source_sha256"] for row in derived} == {expected}
