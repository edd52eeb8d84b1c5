"""NVIDIA's published hybrid Mamba-Transformer runs: Nemotron 3 Nano scored blind by its
architecture, Super and Ultra left out with what they add beyond it."""

from __future__ import annotations

from fabricscope.accuracy.published_tables import automodel_cases, megatron_bridge_cases


def test_nemotron_3_nano_rows_are_cases_with_their_mamba_layers():
    cases, skipped = megatron_bridge_cases()
    nano = [c for c in cases if c.workload.name.startswith("Nemotron_3_Nano")]
    assert len(nano) >= 15  # every Nano row but the DGX B300 ones (the GPU's specs)
    assert all(c.workload.mamba_layers == 23 and c.workload.attention_layers == 6 for c in nano)
    assert all(c.workload.moe is not None and c.workload.moe.expert_parallel == 8 for c in nano)
    reasons = {row.reason for row in skipped if "Nemotron_3_Nano" in row.run_id}
    assert reasons == {"system DGX-B300: its GPU's specs are incomplete in gpus.csv"}
    assert not any("Mamba layers are not modelled" in row.reason for row in skipped)
    # Super: its LatentMoE and multi-token prediction are what keep it out, not its Mamba layers
    super_ = {row.reason for row in skipped if "Nemotron_3_Super" in row.run_id}
    assert super_ and all("LatentMoE" in reason for reason in super_)


def test_automodel_nano_row_is_a_case_and_super_and_ultra_say_why_not():
    cases, skipped = automodel_cases()
    nano = [c for c in cases if c.workload.name.startswith("Nemotron V3 Nano")]
    assert len(nano) == 1 and nano[0].workload.mamba_layers == 23
    reasons = [row.reason for row in skipped if "Nemotron" in row.run_id]
    assert len(reasons) == 2 and all("LatentMoE" in reason for reason in reasons)
