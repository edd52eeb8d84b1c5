"""The state that defines a ranking view, and its round trip through the URL.

A ``RankView`` is everything a colleague needs to see the same result: the mode (a job to
train, or a model to serve), the workload (a preset, or a few fields changed over one), the
GPU counts, tiers, objective, constraints, the job's side of the whole cost (data,
checkpoints, downloads, prices, support), the fabric "what if" and the starred offers. A
serving view keeps the training inputs too (and the other way round), so switching modes and
back loses nothing. It lives in ``st.query_params`` (only values that differ from
the defaults, so a plain URL stays short) and in session state (query parameters are per page;
the session carries the view from the Rank page to the Shortlist page).

Pure functions of plain data, except the three at the bottom that touch ``st.session_state``
and ``st.query_params``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, get_args

from pydantic import ValidationError

from fabricscope.model.serving import ServingWorkload, mix_text, parse_mix
from fabricscope.model.workload import Fp8Recipe, Precision, Stack, Workload
from fabricscope.model.workloads import (
    WorkloadError,
    architectures,
    load_serving_workload,
    parse_serving,
    parse_workload,
    preset,
    presets,
    serving_presets,
)
from fabricscope.rank.costs import CostInputs
from fabricscope.rank.ranking import FABRIC_ORDER, RankingError, RankRequest, parse_gpu_counts
from fabricscope.warehouse.models import PricingTier

# A job a buyer recognises whose best offers finish in about two weeks: GPT-3 175B (300B
# tokens) on 512 GPUs, 64 nodes, where the fabric decides part of the answer. The Llama 3
# presets train on 15T tokens: months to years at any count a catalog sells (docs/APP.md).
DEFAULT_PRESET = "gpt3-175b"
DEFAULT_GPUS = "512"
# a shortlist is read side by side; more stars than this are a list, and flood the URL
MAX_STARS = 20
OBJECTIVES = ("cost", "time", "blend")
TIERS = tuple(t.value for t in PricingTier)
# classes a "what if" or a minimum can name ("none" carries no multi-node job)
FABRIC_CLASSES = tuple(c for c in sorted(FABRIC_ORDER, key=FABRIC_ORDER.__getitem__) if c != "none")

TRAIN, SERVE = "train", "serve"
MODES = (TRAIN, SERVE)
# a 70B model at MLPerf's server bounds: the serving preset buyers compare clouds for
DEFAULT_SERVE_PRESET = "llama3-70b-chat"
# each offer is ranked at the fewest GPUs tried that carry the load (as `rank --serve`)
DEFAULT_SERVE_GPUS = "1-1024"

# One query parameter per field; lists are repeated parameters (offer keys hold commas).
PARAMS = {
    "mode": "mode",
    "serve_preset": "serve_preset",
    "serve_gpus": "serve_gpus",
    "preset": "preset",
    "gpus": "gpus",
    "tiers": "tier",
    "objective": "objective",
    "time_weight": "tw",
    "gpu_models": "gpu",
    "regions": "region",
    "max_budget_usd": "budget",
    "deadline_days": "deadline_days",
    "max_price_age_days": "max_price_age",
    "min_fabric": "min_fabric",
    "multi_node": "multi_node",
    "dataset_tb": "data_tb",
    "checkpoints_kept": "ckpts",
    "egress_tb": "egress_tb",
    "storage_usd_per_tb_month": "storage_price",
    "egress_usd_per_gb": "egress_price",
    "support_pct": "support_pct",
    "include_stated_support": "stated_support",
    "what_if": "what_if",
    "starred": "star",
}
# the view's fields that are the request's ``costs`` (fabricscope/rank/costs.py), same names
COST_FIELDS = tuple(CostInputs.model_fields)
CUSTOM_FLAG = "custom"
CUSTOM_PREFIX = "w_"
SERVE_CUSTOM_FLAG = "s_custom"
SERVE_PREFIX = "s_"
# an optional serving field left empty (no load, no target), in the URL
NOT_GIVEN = "none"


class InputError(ValueError):
    """Inputs that do not make a ranking request; the message says which and why."""


@dataclass(frozen=True)
class WorkloadFields:
    """The workload fields the app lets a user change over a preset (units in the names)."""

    params_billion: float
    layers: int
    hidden_size: int
    heads: int
    seq_len: int
    tokens_billion: float
    batch_sequences: int
    precision: str
    stack: str = Stack.MEGATRON.value
    fp8_recipe: str = Fp8Recipe.TENSORWISE.value

    @classmethod
    def of(cls, workload: Workload) -> WorkloadFields:
        return cls(
            params_billion=round(workload.total_params / 1e9, 3),
            layers=workload.layers,
            hidden_size=workload.hidden_size,
            heads=workload.heads,
            seq_len=workload.seq_len,
            tokens_billion=workload.tokens / 1e9,
            batch_sequences=workload.batch_sequences,
            precision=workload.precision.value,
            stack=workload.stack.value,
            fp8_recipe=workload.fp8_recipe.value,
        )


# field name -> (label, type) for the custom-workload form and its URL parameters
WORKLOAD_FIELDS: dict[str, tuple[str, type]] = {
    "params_billion": ("Parameters (billions)", float),
    "layers": ("Layers", int),
    "hidden_size": ("Hidden size", int),
    "heads": ("Attention heads", int),
    "seq_len": ("Sequence length (tokens)", int),
    "tokens_billion": ("Training tokens (billions)", float),
    "batch_sequences": ("Global batch (sequences)", int),
    "precision": ("Precision", str),
    "stack": ("Training software", str),
    "fp8_recipe": ("FP8 recipe", str),
}
# the values a text field may take (the app offers them as a choice)
WORKLOAD_CHOICES: dict[str, tuple[str, ...]] = {
    "precision": tuple(p.value for p in Precision),
    "stack": tuple(s.value for s in Stack),
    "fp8_recipe": tuple(r.value for r in Fp8Recipe),
}
STACK_HELP = (
    "megatron: Megatron-Core, NeMo (what the model's constants were fitted on); fsdp: PyTorch "
    "FSDP with compiled or fused kernels (torchtitan, llm-foundry), no measured difference; "
    "eager: FSDP without torch.compile or a Hugging Face Trainer loop, at torchtitan's measured "
    "86% of compiled (docs/MODEL.md)"
)
FP8_RECIPE_HELP = (
    "how an FP8 job scales its linear layers' tensors (precision fp8 only): tensorwise and "
    "delayed (per-tensor, what the FP8 factors were measured and fitted on); rowwise at "
    "torchao's measured cost (81% of tensorwise's FP8 rate on H100, 74% on B200); blockwise "
    "(DeepSeek-V3's) at Transformer Engine's measured cost (89% on Hopper and Blackwell); "
    "mxfp8 costed as tensorwise (docs/MODEL.md). NVFP4 is a precision (nvfp4): Blackwell only, "
    "FP8 elsewhere"
)


@dataclass(frozen=True)
class ServingFields:
    """The serving workload fields the app lets a user change over a serving preset."""

    architecture: str
    weights: str
    kv_cache: str
    input_tokens: int
    output_tokens: int
    requests_per_s: float | None
    ttft_ms: float | None
    tpot_ms: float | None
    hours: float
    latency_percentile: str = "p99"
    disaggregated: bool = False
    attention_data_parallel: bool = False
    mix: str | None = None  # as serving.parse_mix reads it; replaces the lengths

    @classmethod
    def of(cls, job: ServingWorkload) -> ServingFields:
        """A served workload's fields; its architecture by the name it was made from."""
        values = {name: getattr(job, name) for name in SERVING_FIELDS if name != "mix"}
        return cls(**{**values, "architecture": job.architecture.name, "mix": mix_text(job.mix)})


# field name -> (label, type, may be left empty) for the serving form and its URL parameters
SERVING_FIELDS: dict[str, tuple[str, type, bool]] = {
    "architecture": ("Model", str, False),
    "weights": ("Weights precision", str, False),
    "kv_cache": ("KV-cache precision", str, False),
    "input_tokens": ("Prompt tokens per request", int, False),
    "output_tokens": ("Output tokens per request", int, False),
    "requests_per_s": ("Load (requests/s)", float, True),
    "ttft_ms": ("Time to first token target (ms)", float, True),
    "tpot_ms": ("Time per output token target (ms)", float, True),
    "hours": ("Service hours (for the cost)", float, False),
    "latency_percentile": ("Targets hold for (share of requests)", str, False),
    "disaggregated": ("Prefill and decode on separate GPUs", bool, False),
    "attention_data_parallel": (
        "Attention data-parallel (MoE: experts may span nodes)",
        bool,
        False,
    ),
    # free text, read by serving.parse_mix: a mix of request lengths, or none
    "mix": ("Mix of lengths: prompt/output:share, ... (replaces the lengths)", list, True),
}


def serving_choices() -> dict[str, tuple[str, ...]]:
    """The values a serving text field may take: the named architectures the serving model
    costs (not a hybrid Mamba-Transformer's, which it refuses) and the precisions
    ServingWorkload accepts."""
    return {
        "architecture": tuple(
            name for name, entry in architectures().items() if entry["fields"].get("mamba") is None
        ),
        "weights": get_args(ServingWorkload.model_fields["weights"].annotation),
        "kv_cache": get_args(ServingWorkload.model_fields["kv_cache"].annotation),
        "latency_percentile": get_args(
            ServingWorkload.model_fields["latency_percentile"].annotation
        ),
    }


def serving_preset(name: str) -> ServingWorkload:
    """A serving preset by name (never a file: a link names presets only)."""
    if name not in serving_presets():
        raise InputError(f"serving preset {name!r} is not one of {', '.join(serving_presets())}")
    try:
        return load_serving_workload(name)
    except WorkloadError as exc:
        raise InputError(str(exc)) from None


@dataclass(frozen=True)
class RankView:
    mode: str = TRAIN
    preset: str = DEFAULT_PRESET
    custom: WorkloadFields | None = None
    gpus: str = DEFAULT_GPUS
    tiers: tuple[str, ...] = ("on_demand",)
    objective: str = "cost"
    time_weight: float = 0.5
    gpu_models: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    max_budget_usd: float | None = None
    deadline_days: float | None = None
    max_price_age_days: float | None = None
    min_fabric: str | None = None
    multi_node: bool = False
    # the job's side of the whole cost; defaults as CostInputs', so the default request is
    # byte for byte the one the refresh stores a ranking for (fabricscope/rank/materialised.py)
    dataset_tb: float | None = None
    checkpoints_kept: int = 2
    egress_tb: float | None = None
    storage_usd_per_tb_month: float | None = None
    egress_usd_per_gb: float | None = None
    support_pct: float | None = None
    include_stated_support: bool = False
    what_if: str | None = None
    starred: tuple[str, ...] = ()
    # Serve mode's own inputs; the rest (tiers, constraints, whole cost) are shared
    serve_preset: str = DEFAULT_SERVE_PRESET
    serve_custom: ServingFields | None = None
    serve_gpus: str = DEFAULT_SERVE_GPUS

    @property
    def serving(self) -> bool:
        return self.mode == SERVE

    def request_part(self) -> RankView:
        """The view without what only changes the display (what-if, stars)."""
        return replace(self, what_if=None, starred=())


# ---- workload and request


def workload_of(view: RankView) -> Workload:
    """The preset, or the preset with the custom fields over it; InputError if invalid."""
    try:
        base = preset(view.preset)
    except WorkloadError as exc:
        raise InputError(str(exc)) from None
    if view.custom is None:
        return base
    custom = view.custom
    spec = base.model_dump()
    spec.update(
        name=f"custom ({base.name})",
        params_billion=custom.params_billion,
        layers=custom.layers,
        hidden_size=custom.hidden_size,
        heads=custom.heads,
        seq_len=custom.seq_len,
        tokens=custom.tokens_billion * 1e9,
        global_batch_size=custom.batch_sequences,
        global_batch_tokens=None,
        precision=custom.precision,
        stack=custom.stack,
        fp8_recipe=custom.fp8_recipe,
    )
    # the preset's derived totals no longer hold once the shape changed
    if spec.get("active_params_billion") and (
        custom.params_billion != round(base.total_params / 1e9, 3)
    ):
        spec["active_params_billion"] = None
    if spec.get("kv_heads") and custom.heads % spec["kv_heads"]:
        spec["kv_heads"] = None
    if spec.get("ffn_size") and custom.hidden_size != base.hidden_size:
        spec["ffn_size"] = round(spec["ffn_size"] * custom.hidden_size / base.hidden_size)
    try:
        return parse_workload(spec, "custom workload")
    except WorkloadError as exc:
        raise InputError(str(exc)) from None


def serving_workload_of(view: RankView) -> ServingWorkload:
    """The serving preset, or the preset with the serving fields over it; InputError if
    invalid (one line naming the field)."""
    base = serving_preset(view.serve_preset)
    if view.serve_custom is None:
        return base
    custom = vars(view.serve_custom)
    fields = {
        **serving_presets()[view.serve_preset]["workload"],
        **{k: v for k, v in custom.items() if k != "mix"},
        "name": f"custom ({base.name})",
    }
    if custom["mix"]:
        try:
            kinds = parse_mix(custom["mix"])
        except ValueError as exc:
            raise InputError(f"mix: {exc}") from None
        # a mix replaces the lengths (they become its means) and keeps the load in requests
        fields |= {"mix": kinds, "input_tokens": None, "output_tokens": None}
        fields.pop("output_tokens_per_s", None)
    try:
        return parse_serving(fields, "custom serving workload")
    except WorkloadError as exc:
        raise InputError(str(exc)) from None


def request_of(view: RankView) -> RankRequest:
    """The ranking request the view describes; InputError naming the input at fault. In
    Serve mode: the served model, its GPU counts, and no deadline (a served model has latency
    targets instead)."""
    if view.serving:
        return _request(view, serving_workload_of(view), view.serve_gpus, None)
    deadline = view.deadline_days * 24 if view.deadline_days else None
    return _request(view, workload_of(view), view.gpus, deadline)


def _request(
    view: RankView,
    workload: Workload | ServingWorkload,
    gpus: str,
    deadline_hours: float | None,
) -> RankRequest:
    if not view.tiers:
        raise InputError("pick at least one pricing tier")
    try:
        counts = parse_gpu_counts(gpus)
    except RankingError as exc:
        raise InputError(str(exc).replace("--gpus", "GPU count")) from None
    try:
        return RankRequest(
            workload=workload,
            gpu_counts=counts,
            tiers=tuple(PricingTier(t) for t in view.tiers),
            gpu_models=view.gpu_models or None,
            regions=view.regions or None,
            max_budget_usd=view.max_budget_usd or None,
            deadline_hours=deadline_hours,
            max_price_age_days=view.max_price_age_days or None,
            min_fabric_class=view.min_fabric,
            multi_node_required=view.multi_node,
            objective=view.objective,  # type: ignore[arg-type]
            time_weight=view.time_weight,
            costs=CostInputs(**{name: getattr(view, name) for name in COST_FIELDS}),
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "request"
        raise InputError(f"{where}: {error['msg']}") from None
    except ValueError as exc:  # a GPU name the catalog does not know
        raise InputError(str(exc)) from None


# ---- URL round trip

ParamValue = str | list[str]


def to_query_params(view: RankView) -> dict[str, ParamValue]:
    """Only the values that differ from the defaults, as strings or repeated strings."""
    default = RankView()
    params: dict[str, ParamValue] = {}
    for name, key in PARAMS.items():
        value = getattr(view, name)
        if value == getattr(default, name):
            continue
        if isinstance(value, tuple):
            params[key] = list(value)
        elif isinstance(value, bool):
            params[key] = "1"
        elif isinstance(value, float):
            params[key] = _float_text(value)
        else:
            params[key] = str(value)
    if view.custom is not None:
        params[CUSTOM_FLAG] = "1"
        for name in WORKLOAD_FIELDS:
            value = getattr(view.custom, name)
            params[CUSTOM_PREFIX + name] = (
                _float_text(value) if isinstance(value, float) else str(value)
            )
    if view.serve_custom is not None:
        params[SERVE_CUSTOM_FLAG] = "1"
        for name in SERVING_FIELDS:
            value = getattr(view.serve_custom, name)
            params[SERVE_PREFIX + name] = _param_text(value)
    return params


def _param_text(value: Any) -> str:
    if value is None:
        return NOT_GIVEN
    if isinstance(value, bool):
        return "1" if value else "0"
    return _float_text(value) if isinstance(value, float) else str(value)


def _float_text(value: float) -> str:
    """Short (``1.5e+06``, ``20``) where that reads back the same number, else every digit."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def _one(params: Mapping[str, Sequence[str]], key: str) -> str | None:
    values = params.get(key) or []
    return values[-1] if values else None


def _number(text: str, kind: type, key: str) -> Any:
    try:
        value = kind(float(text)) if kind is int else kind(text)
    except ValueError:
        raise InputError(f"{key}={text!r} is not a number") from None
    if kind is float and not math.isfinite(value):
        raise InputError(f"{key}={text!r} is not a finite number")
    return value


def from_query_params(params: Mapping[str, Sequence[str]]) -> tuple[RankView, list[str]]:
    """The view a URL describes (every parameter as a list of its values), and what was ignored.

    A parameter that cannot be read is left at its default and named in the second value, so
    a mistyped link still opens, and says what it could not restore.
    """
    problems: list[str] = []
    values: dict[str, Any] = {}

    def read(name: str, key: str) -> None:
        raw = list(params.get(key) or [])
        if not raw:
            return
        try:
            values[name] = _field_value(name, raw, key)
        except InputError as exc:
            problems.append(str(exc))

    for name, key in PARAMS.items():
        read(name, key)
    stars = values.get("starred", ())
    if len(stars) > MAX_STARS:
        problems.append(
            f"{PARAMS['starred']}: {len(stars)} offers starred, a shortlist holds at most "
            f"{MAX_STARS}; the first {MAX_STARS} are kept"
        )
        values["starred"] = stars[:MAX_STARS]
    view = RankView(**values)
    if _one(params, CUSTOM_FLAG) == "1":
        try:
            view = replace(view, custom=_custom_fields(view, params))
        except InputError as exc:
            problems.append(f"custom workload: {exc}")
    if _one(params, SERVE_CUSTOM_FLAG) == "1":
        try:
            view = replace(view, serve_custom=_serving_fields(view, params))
        except InputError as exc:
            problems.append(f"custom serving workload: {exc}")
    return view, problems


def _field_value(name: str, raw: list[str], key: str) -> Any:
    last = raw[-1]
    if name == "preset":
        if last not in presets():
            raise InputError(f"{key}={last!r} is not a preset")
        return last
    if name == "mode":
        if last not in MODES:
            raise InputError(f"{key}={last!r}: the mode is one of {', '.join(MODES)}")
        return last
    if name == "serve_preset":
        if last not in serving_presets():
            raise InputError(f"{key}={last!r} is not a serving preset")
        return last
    if name == "tiers":
        unknown = [t for t in raw if t not in TIERS]
        if unknown:
            raise InputError(f"{key}: unknown pricing tier(s) {', '.join(unknown)}")
        return tuple(dict.fromkeys(raw))
    if name in ("gpu_models", "regions", "starred"):
        return tuple(dict.fromkeys(raw))
    if name == "objective":
        if last not in OBJECTIVES:
            raise InputError(f"{key}={last!r}: the objective is one of {', '.join(OBJECTIVES)}")
        return last
    if name in ("min_fabric", "what_if"):
        if last not in FABRIC_CLASSES:
            raise InputError(f"{key}={last!r} is not a fabric class")
        return last
    if name in ("multi_node", "include_stated_support"):
        return last in ("1", "true", "yes")
    if name == "time_weight":
        weight = _number(last, float, key)
        if not 0 <= weight <= 1:
            raise InputError(f"{key}={last!r}: the time weight lies between 0 and 1")
        return weight
    if name in ("max_budget_usd", "deadline_days", "max_price_age_days"):
        number = _number(last, float, key)
        if number <= 0:
            raise InputError(f"{key}={last!r} must be positive")
        return number
    if name in COST_FIELDS:
        return _cost_value(name, last, key)
    return last  # gpus: checked when the request is built, with the message it deserves


def _cost_value(name: str, text: str, key: str) -> float | int:
    """One of the whole cost's inputs, held to CostInputs' own bounds."""
    number = _number(text, float, key)
    if CostInputs.model_fields[name].annotation is int:
        if not number.is_integer():
            raise InputError(f"{key}={text!r} is not a whole number")
        number = int(number)
    try:
        CostInputs.model_validate({name: number})
    except ValidationError as exc:
        raise InputError(f"{key}={text!r}: {exc.errors()[0]['msg']}") from None
    return number


def _custom_fields(view: RankView, params: Mapping[str, Sequence[str]]) -> WorkloadFields:
    base = WorkloadFields.of(preset(view.preset))
    out: dict[str, Any] = {}
    for name, (_, kind) in WORKLOAD_FIELDS.items():
        text = _one(params, CUSTOM_PREFIX + name)
        if text is None:
            out[name] = getattr(base, name)
        elif kind is str:
            choices = WORKLOAD_CHOICES[name]
            if text not in choices:
                raise InputError(f"{name} {text!r} is not one of {', '.join(choices)}")
            out[name] = text
        else:
            out[name] = _number(text, kind, CUSTOM_PREFIX + name)
    return WorkloadFields(**out)


def _serving_fields(view: RankView, params: Mapping[str, Sequence[str]]) -> ServingFields:
    """The serving fields a link gives, the serving preset's where it gives none. Numbers
    are read, not judged: a bad one (0 output tokens) is named when the request is built,
    with the model's own words."""
    base = ServingFields.of(serving_preset(view.serve_preset))
    choices = serving_choices()
    out: dict[str, Any] = {}
    for name, (_, kind, optional) in SERVING_FIELDS.items():
        text = _one(params, SERVE_PREFIX + name)
        if text is None:
            out[name] = getattr(base, name)
        elif optional and text == NOT_GIVEN:
            out[name] = None
        elif kind is str:
            if text not in choices[name]:
                raise InputError(f"{name} {text!r} is not one of {', '.join(choices[name])}")
            out[name] = text
        elif kind is bool:
            if text not in ("0", "1"):
                raise InputError(f"{SERVE_PREFIX + name}={text!r} is not 0 or 1")
            out[name] = text == "1"
        elif kind is list:  # free text, read when the request is built
            out[name] = text
        else:
            out[name] = _number(text, kind, SERVE_PREFIX + name)
    return ServingFields(**out)


def starred_after(
    starred: Sequence[str], shown: Sequence[str], selected: Iterable[str]
) -> tuple[tuple[str, ...], int]:
    """The stars once the grid showing ``shown`` (in rank order) has ``selected`` ticked: stars
    outside the grid stay, the grid's own follow its ticks (new ones in rank order), at most
    ``MAX_STARS``; and how many ticks that cap left out."""
    on_grid, ticked = set(shown), set(selected)
    kept = [key for key in starred if key not in on_grid or key in ticked]
    added = [key for key in shown if key in ticked and key not in set(starred)]
    stars = [*kept, *added]
    return tuple(stars[:MAX_STARS]), max(len(stars) - MAX_STARS, 0)


# ---- session and URL (the only Streamlit-facing part)

SESSION_KEY = "rank_view"
PAGE_KEY = "rank_view_page"


def current_view() -> tuple[RankView, list[str]]:
    """The session's view; on the first run of a session, the one the URL describes."""
    import streamlit as st

    if SESSION_KEY not in st.session_state:
        params = {key: st.query_params.get_all(key) for key in st.query_params}
        view, problems = from_query_params(params)
        st.session_state[SESSION_KEY] = view
        return view, problems
    return st.session_state[SESSION_KEY], []


def remember(view: RankView) -> None:
    """Keep the view for this session and write it into the URL (when it changed)."""
    import streamlit as st

    st.session_state[SESSION_KEY] = view
    wanted = to_query_params(view)
    current = {key: st.query_params.get_all(key) for key in st.query_params}
    normalised = {k: v if isinstance(v, list) else [v] for k, v in wanted.items()}
    if current != normalised:
        st.query_params.from_dict(wanted)


def entering(page: str) -> bool:
    """True on the first run of ``page`` since another page ran (widgets re-seed then)."""
    import streamlit as st

    first = st.session_state.get(PAGE_KEY) != page
    st.session_state[PAGE_KEY] = page
    return first
