"""Curves that explain a ranking: for chosen offers, time and whole cost against the GPU count
(with the verdict along the curve) and against the inter-node bandwidth per GPU (what a
faster or slower fabric is worth for this job).

Each curve is the ranking itself run again on those offers (``rank_offers``), so a point is
what the ranking would say for that count or bandwidth: the same model, fabric ranges, whole
cost and exclusions. The model runs once per distinct profile: all offers and counts in one
call, one call per bandwidth.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from fabricscope.rank.ranking import RankResult, frame_offer_keys, rank_offers

# GPU counts: the requested one times these factors, in whole nodes
COUNT_FACTORS = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
# inter-node bandwidth per GPU, Gb/s: from one 100G NIC shared by 8 GPUs to 800G per GPU
GBPS_PER_GPU = (12.5, 25.0, 50.0, 100.0, 200.0, 400.0, 800.0)
CURVE_COLUMNS = [
    "axis",
    "x",
    "offer_key",
    "provider",
    "offer_label",
    "instance_type",
    "gpus",
    "fabric_gbps_per_gpu",
    "time_to_train_h",
    "time_to_train_h_low",
    "total_cost_usd",
    "total_cost_usd_low",
    "verdict",
    "comm_fraction_exposed",
    "assumed",
]


def _offers(result: RankResult, offer_keys: Sequence[str]) -> pd.DataFrame:
    keys = set(offer_keys)
    catalog = result.catalog
    return catalog[frame_offer_keys(catalog).isin(keys)].reset_index(drop=True)


def gpu_count_curves(result: RankResult, offer_keys: Sequence[str]) -> pd.DataFrame:
    """Time and whole cost of each offer at the requested GPU count times COUNT_FACTORS
    (whole nodes; counts an offer cannot host are absent, as in the ranking)."""
    chosen = result.offers[result.offers["offer_key"].isin(offer_keys)]
    if chosen.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    base = int(chosen["gpus"].max())
    per_node = int(chosen["gpus_per_node"].max())
    counts = sorted({max(1, round(base * f / per_node)) * per_node for f in COUNT_FACTORS})
    request = result.request.model_copy(
        update={"gpu_counts": tuple(counts), "max_budget_usd": None, "deadline_hours": None}
    )
    rows = rank_offers(
        _offers(result, offer_keys),
        request,
        result.snapshot,
        result.calibrations,
        result.as_of,
        every_count=True,
    ).offers
    rows = rows[rows["offer_key"].isin(offer_keys)].copy()
    rows["axis"], rows["x"], rows["assumed"] = "gpus", rows["gpus"], None
    return rows.sort_values(["offer_key", "gpus"]).reindex(columns=CURVE_COLUMNS)


def bandwidth_curves(result: RankResult, offer_keys: Sequence[str]) -> pd.DataFrame:
    """Time and whole cost of each offer at its ranked GPU count with the inter-node
    bandwidth per GPU set to each of GBPS_PER_GPU, on the offer's stated fabric class
    (InfiniBand where no class is stated, and said so in ``assumed``). One-node offers have
    no fabric to vary and are absent."""
    chosen = result.offers[
        result.offers["offer_key"].isin(offer_keys) & (result.offers["nodes"] > 1)
    ]
    if chosen.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    catalog = _offers(result, list(chosen["offer_key"]))
    stated = catalog["fabric_class"]
    unstated = set(frame_offer_keys(catalog)[stated.isna()])
    wanted = set(zip(chosen["offer_key"], chosen["gpus"].astype(int), strict=True))
    request = result.request.model_copy(
        update={
            "gpu_counts": tuple(sorted({count for _, count in wanted})),
            "max_budget_usd": None,
            "deadline_hours": None,
            "fabric_override": None,
            "min_fabric_class": None,
            "multi_node_required": False,
        }
    )
    frames = []
    for gbps in GBPS_PER_GPU:  # one model call per bandwidth, every offer and count in it
        varied = catalog.assign(
            fabric_class=stated.fillna("infiniband"),
            fabric_gbps_per_gpu=gbps,
            fabric_gbps_per_node=None,
            multi_node=True,
            fabric_match="instance_type",
        )
        ranked = rank_offers(
            varied, request, result.snapshot, result.calibrations, result.as_of, every_count=True
        ).offers
        at = [
            (k, int(g)) in wanted for k, g in zip(ranked["offer_key"], ranked["gpus"], strict=True)
        ]
        ranked = ranked[at]
        frames.append(
            ranked.assign(
                axis="gbps_per_gpu",
                x=gbps,
                fabric_gbps_per_gpu=gbps,
                assumed=[
                    "InfiniBand assumed" if k in unstated else None for k in ranked["offer_key"]
                ],
            )
        )
    if not frames:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    rows = pd.concat(frames, ignore_index=True)
    return rows.sort_values(["offer_key", "x"]).reindex(columns=CURVE_COLUMNS)


def curves(result: RankResult, offer_keys: Sequence[str]) -> pd.DataFrame:
    """Both curves of every chosen offer, in one frame (``axis`` says which)."""
    return pd.concat(
        [gpu_count_curves(result, offer_keys), bandwidth_curves(result, offer_keys)],
        ignore_index=True,
    )
