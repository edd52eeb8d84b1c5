"""NVIDIA's published hybrid Mamba-Transformer runs: Nemotron 3 Nano, Super and Ultra scored
blind by their architectures."""

from __future__ import annotations

from fabricscope.accuracy.published_tables import automodel_cases, megatron_bridge_cases
from fabricscope.model.scaling import RECOMPUTE_MODES, estimate
from fabricscope.model.workload import Recompute
from fabricscope.rank.catalog import profiles


def test_nemotron_3_nano_rows_are_cases_with_their_mamba_layers():
    cases, skipped = megatron_bridge_cases()
    nano = [c for c in cases if c.workload.name.startswith("Nemotron_3_Nano")]
    assert len(nano) == 19  # every Nano row, DGX B300's since gpus.csv states the GPU
    assert all(c.workload.mamba_layers == 23 and c.workload.attention_layers == 6 for c in nano)
    assert all(c.workload.moe is not None and c.workload.moe.expert_parallel == 8 for c in nano)
    assert any(c.hardware["gpu_model"] == "B300-SXM-288GB" for c in nano)
    assert not [row.reason for row in skipped if "Nemotron_3_Nano" in row.run_id]
    assert not any("Mamba layers are not modelled" in row.reason for row in skipped)
    # Super: scored with its LatentMoE and multi-token prediction, its NVFP4 rows with their
    # recipe's precision mix by layer and module (layer_precision)
    super_ = [c for c in cases if c.workload.name.startswith("Nemotron_3_Super")]
    assert len(super_) == 26
    assert all(c.workload.moe is not None and c.workload.moe.latent_size for c in super_)
    assert all(c.workload.mtp_layers == 2 for c in super_)
    assert not [row.reason for row in skipped if "Nemotron_3_Super" in row.run_id]


def test_automodel_nano_super_and_ultra_rows_are_cases():
    cases, skipped = automodel_cases()
    nano = [c for c in cases if c.workload.name.startswith("Nemotron V3 Nano")]
    assert len(nano) == 1 and nano[0].workload.mamba_layers == 23
    super_ = [c for c in cases if c.workload.name.startswith("Nemotron V3 Super")]
    assert len(super_) == 1 and super_[0].workload.moe is not None
    # Ultra as its benchmark configuration runs it (nemotron_ultra_v3_te_deepep.yaml, added
    # with the row): EP 64 on 128 H100s, sequence 4096, every block recomputed, the MTP block
    # shared by its 2 depths
    (ultra,) = [c for c in cases if c.workload.name.startswith("Nemotron V3 Ultra")]
    job = ultra.workload
    assert (job.layers, job.mamba_layers, job.attention_layers) == (48, 48, 12)
    assert job.moe is not None and (job.moe.experts, job.moe.top_k) == (512, 22)
    assert (job.moe.latent_size, job.moe.expert_parallel) == (2048, 64)
    assert job.mtp_layers == 2 and job.mtp_shared_layer and job.seq_len == 4096
    assert ultra.hardware["gpu_count"] == 128
    full = RECOMPUTE_MODES.index(Recompute.FULL)
    assert ultra.layout is not None and set(ultra.layout.recompute) == {full}
    assert any("nemotron_ultra_v3_te_deepep.yaml" in note for note in ultra.assumptions)
    # AutoModel's BF16 weights and Adam moments (no FP32 master copy): 8 bytes of state per
    # parameter, so the run NVIDIA made fits its 80 GB H100s, as it did
    assert job.bf16_weights and any("no FP32 master copy" in n for n in ultra.assumptions)
    row = estimate(job, profiles([ultra.hardware]), ultra.layout).row(0)
    assert row["fits_memory"] and row["memory_gb_per_gpu"] < 80
    mixed = job.model_copy(update={"bf16_weights": False})
    assert not estimate(mixed, profiles([ultra.hardware]), ultra.layout).row(0)["fits_memory"]
    assert not [row.reason for row in skipped if "Nemotron" in row.run_id]
