"""The serving (LLM inference) model: throughput, latency, replicas and the fabric's share for a
model served on each hardware profile, vectorised over profiles like the training model.

One replica of the model runs on ``tp x pp`` GPUs: tensor parallelism inside an NVLink domain
(an all-reduce per layer over the GPUs' link: NVLink, or PCIe on PCIe cards), pipeline stages
across nodes only when the weights do not fit one domain (then the fabric carries each stage's
activations); attention data-parallel (``attention_data_parallel``) splits only the routed
experts. For a batch of ``b`` sequences decoding together (continuous batching):

- a decode step reads the replica's weights and the batch's KV cache (MLA's latent where the
  architecture has one) from HBM, or is bound by compute at large batch: ``max(bytes / HBM
  bandwidth, FLOPs / matmul ceiling)``, each at an efficiency, plus the runtime's overhead per
  sequence; the ceiling is the share of its peak the GPU's matmuls reach in a benchmark
  (``gemm_ceilings.csv``, as in the training model);
- prefill of a request is compute: ``2 x active parameters x input tokens`` plus causal
  attention, at the prefill efficiency, and its prompt's all-reduces; its time is the time to
  first token, and each request's prefill interrupts the batch's decoding once
  (``TPOT = step + b x prefill / output``);
- the KV cache takes its share of the memory the weights leave; the batch is the largest that
  fits and meets the latency targets; throughput per replica is ``b / TPOT`` output tokens per
  second.

Efficiencies are ``ServingConstants``, fitted globally on the published serving measurements
(issue 36; ``fabricscope/accuracy/serving_accuracy.py``, docs/MODEL.md). Pure: numpy only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabricscope.model.hardware import HardwareProfiles
from fabricscope.model.scaling import ModelConstants
from fabricscope.model.workload import Workload

Array = NDArray[np.float64]

WeightPrecision = Literal["bf16", "fp8", "fp4", "int4"]
BYTES = {"bf16": 2.0, "fp8": 1.0, "fp4": 0.5, "int4": 0.5}
# candidate batches (sequences decoding together per replica) and TP and PP degrees. The
# batches reach 8,192: an engine's own limit (TensorRT-LLM's max_batch_size, which trtllm-bench
# sets per run from the memory; vLLM's max_num_seqs) is not stated by the runs, so the KV
# cache's memory and the latency targets bound the batch, not the grid. Until 2026-12-05 the
# grid stopped at 1,024, where a mixture of experts with many more weights than it activates
# (Llama 4 Maverick: 400B, 17B active) still reads its weights over too few tokens
BATCHES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], dtype=float)
TP_DEGREES = (1, 2, 4, 8, 16, 32, 64, 72)
PP_DEGREES = (1, 2, 4, 8, 16)
# expert-parallel widths beyond an NVLink domain, for a MoE model served attention
# data-parallel that does not fit one domain (DeepSeek serves V3 over 144 and 320 GPUs)
WIDE_EP_DEGREES = (128, 256)
# the fastest PCIe link between a node's GPUs, unidirectional (Gen5 x16: 128 GB/s both ways,
# hardware.INTRA_NODE_LINKS); every NVLink generation is faster (300 GB/s and up)
PCIE_MAX_BYTES_PER_S = 64e9


def _constant(value: float, kind: str, source: str) -> Any:
    return field(default=value, metadata={"kind": kind, "source": source})


@dataclass(frozen=True)
class ServingConstants:
    """Each with its kind (prior until fitted) and source (docs/MODEL.md)."""

    hbm_efficiency: float = _constant(
        0.7,
        "fitted",
        "share of HBM bandwidth a decode step's reads reach; fitted globally with the two "
        "below and sequence_overhead_s on 674 TensorRT-LLM maximum-throughput cases "
        "(accuracy/serving_accuracy.py fit)",
    )
    decode_compute_efficiency: float = _constant(
        0.6,
        "fitted",
        "share of the GPU's measured matmul ceiling (its peak FLOP/s x gemm_ceilings.csv's "
        "share) a decode step's matmuls reach when compute-bound; fitted as above",
    )
    prefill_efficiency: float = _constant(
        0.8,
        "fitted",
        "share of the GPU's measured matmul ceiling prefill's matmuls and attention reach; "
        "fitted as above",
    )
    sequence_overhead_s: float = _constant(
        1e-5,
        "fitted",
        "seconds a decode step spends per sequence in its batch outside the GPU's kernels "
        "(scheduling, sampling, the runtime's bookkeeping); fitted with the efficiencies (grid "
        "0 to 20 microseconds): no source states it, and it also stands for batch limits the "
        "tables do not state",
    )
    memory_headroom: float = _constant(
        0.1,
        "measured",
        "share of the memory the weights leave that the KV cache does not take (activations, "
        "the runtime): TensorRT-LLM's KvCacheConfig free_gpu_memory_fraction defaults to 0.9, "
        "'90% of free GPU memory for KV cache' (nvidia.github.io/TensorRT-LLM/examples/"
        "kvcacheconfig.html), the engine of every scored case (vLLM's gpu_memory_utilization "
        "0.9 is a share of the whole memory instead)",
    )
    pcie_efficiency: float = _constant(
        0.625,
        "measured",
        "all-reduce bus bandwidth over PCIe as a share of the link's: nccl-tests on 8 H100 PCIe "
        "without NVLink reach 35-45 of PCIe Gen5's 64 GB/s (docs.alayanew.com/en/docs/"
        "tech-blog/2026-05-06-nccl-tests, its reference table; 40 of 64 taken); NVLink's is "
        "the training model's nvlink_efficiency (0.8)",
    )
    activation_bytes: float = _constant(
        2.0, "measured", "bytes per activation value passed between GPUs (16-bit)"
    )
    at_matmul_ceiling: bool = _constant(
        True,
        "policy",
        "compute runs at the efficiencies' share of the GPU's measured matmul ceiling for the "
        "precision (gemm_ceilings.csv: Bekman's maximum achievable matmul FLOPS table; a GPU "
        "or precision unmeasured takes the training model's rule: its BF16 share for FP8, the "
        "A100's share for BF16), so a GPU whose matmuls reach less of their datasheet peak "
        "(MI300X 51% of BF16's, H100 80%) computes proportionally slower; False: at the "
        "datasheet peak (the plain roofline baseline)",
    )
    ttft_p50_ratio: float = _constant(
        0.92,
        "measured",
        "p50 time to first token over its mean: the median over 203 MLPerf Inference v4.1 and "
        "v5.1 Server and Interactive runs' loadgen logs (p10 0.82, p90 1.00; "
        "accuracy/serving_latency.py)",
    )
    ttft_p99_ratio: float = _constant(
        2.34,
        "measured",
        "p99 time to first token over its mean, as above (p10 1.77, p90 3.25): requests queue "
        "for their prefill at a load near the bounds",
    )
    tpot_p50_ratio: float = _constant(
        1.01, "measured", "p50 time per output token over its mean, as above (p10 0.99, p90 1.03)"
    )
    tpot_step_p99_ratio: float = _constant(
        1.06,
        "measured",
        "p99 time per output token over its mean where prompts barely interrupt decoding: the "
        "median over the MLPerf Inference Server and Interactive runs whose mean prompt is at "
        "most a quarter of their mean output (8 DeepSeek-R1 runs, p10 1.02, p90 1.09; "
        "accuracy/serving_latency.py); a decode step's own jitter. The prompts that do "
        "interrupt are counted apart (``poisson_interruptions``); over every run the measured "
        "p99 TPOT is 1.17x its mean (p10 1.07, p90 1.35)",
    )

    def latency_ratio(self, measure: Literal["ttft", "tpot"], percentile: str) -> float:
        """A latency at ``percentile`` ("mean", "p50", "p99") over its mean; a p99 TPOT is
        its decode step's ratio (the prompts interrupting it are counted apart)."""
        if percentile == "mean":
            return 1.0
        if (measure, percentile) == ("tpot", "p99"):
            return float(self.tpot_step_p99_ratio)
        return float(getattr(self, f"{measure}_{percentile}_ratio"))


# the standard normal's 99th percentile
Z99 = 2.3263478740408408


def poisson_interruptions(
    arrivals: Array | float, prefills: list[Array], shares: list[float] | Array
) -> Array:
    """The 99th percentile of the prefill time that interrupts one request's decoding, when
    requests arrive at random (Poisson) and each prompt's prefill stops the batch.

    Over a request's lifetime as many requests arrive on average as decode beside it
    (Little's law: ``arrivals`` = the batch); their count is Poisson, each prefill one of
    ``prefills`` with its share, so the sum is compound Poisson: mean ``b E[x]``, variance
    ``b E[x^2]``, third cumulant ``b E[x^3]``. Its 99th percentile is taken by the
    Cornish-Fisher expansion to the skew, ``mean + z sd + (z^2 - 1) / 6 E[x^3] / E[x^2]``
    (for one prompt length, within half a prompt of the exact Poisson quantile)."""
    m1 = sum(s * x for s, x in zip(shares, prefills, strict=True))
    m2 = sum(s * x * x for s, x in zip(shares, prefills, strict=True))
    m3 = sum(s * x**3 for s, x in zip(shares, prefills, strict=True))
    return np.asarray(
        arrivals * m1 + Z99 * np.sqrt(arrivals * m2) + (Z99**2 - 1.0) / 6.0 * m3 / m2,
        dtype=float,
    )


class LengthClass(BaseModel):
    """One kind of request in a mix: its prompt and output lengths and its share of requests."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_tokens: int = Field(gt=0, le=10_000_000, description="prompt tokens per request")
    output_tokens: int = Field(gt=0, le=1_000_000, description="output tokens per request")
    share: float = Field(gt=0, le=1, description="share of the requests")


class ServingWorkload(BaseModel):
    """A model served to a load, with latency targets: the architecture of a training
    workload (its parameters, layers and heads), how its weights and KV cache are stored,
    prompt and output lengths, and what the service must meet."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: ClassVar[str] = "serving"

    name: str = Field(min_length=1, max_length=200)
    architecture: Workload
    weights: WeightPrecision = "bf16"
    kv_cache: Literal["bf16", "fp8"] = "bf16"
    input_tokens: int = Field(
        gt=0, le=10_000_000, description="prompt tokens per request (a mix's: its mean)"
    )
    output_tokens: int = Field(
        gt=0, le=1_000_000, description="output tokens per request (a mix's: its mean)"
    )
    mix: tuple[LengthClass, ...] | None = Field(
        default=None,
        min_length=1,
        max_length=32,
        description="requests of several lengths instead of one, each with its share (the "
        "shares sum to 1); input_tokens and output_tokens become the mix's means",
    )
    requests_per_s: float | None = Field(default=None, gt=0, description="the load to serve")
    output_tokens_per_s: float | None = Field(
        default=None,
        gt=0,
        description="the load in output tokens per second instead (requests/s x output tokens)",
    )
    ttft_ms: float | None = Field(default=None, gt=0, description="time to first token target")
    tpot_ms: float | None = Field(default=None, gt=0, description="time per output token target")
    latency_percentile: Literal["mean", "p50", "p99"] = Field(
        default="p99",
        description="the percentile of requests the latency targets hold for (MLPerf's bounds "
        "are p99): the model's mean latency times the ratio MLPerf's runs measured",
    )
    disaggregated: bool = Field(
        default=False,
        description="prefill and decode on separate GPUs: decoding is never interrupted by a "
        "prompt, and each request's KV cache moves from its prefill GPUs to its decode GPUs "
        "(over NVLink when both fit one node, else over the fabric)",
    )
    attention_data_parallel: bool = Field(
        default=False,
        description="a replica's GPUs split only the routed experts (expert parallelism) and "
        "each runs attention and the dense layers for its own sequences, so each holds and "
        "reads every weight but the routed experts' (TensorRT-LLM's DEP, attention DP); "
        "a dense model is the same either way",
    )
    hours: float = Field(
        default=730.0,
        gt=0,
        le=87_600,
        description="how long the service runs, for its cost (default: a 730-hour month)",
    )

    @model_validator(mode="before")
    @classmethod
    def _lengths_and_load(cls, data: Any) -> Any:
        return cls._load_in_tokens(cls._mix_means(data))

    @staticmethod
    def _mix_means(data: Any) -> Any:
        """A mix sets the lengths to its means (rounded); lengths given with it must be those."""
        if not isinstance(data, dict) or not data.get("mix"):
            return data
        try:
            classes = [LengthClass.model_validate(c) for c in data["mix"]]
        except (ValueError, TypeError):
            return data  # the field's own check says what is wrong
        total = sum(c.share for c in classes)
        if abs(total - 1.0) > 1e-6:
            raise ValueError(f"the mix's shares sum to {total:g}, not 1")
        means = {
            "input_tokens": max(1, round(sum(c.share * c.input_tokens for c in classes))),
            "output_tokens": max(1, round(sum(c.share * c.output_tokens for c in classes))),
        }
        for name, mean in means.items():
            given = data.get(name)
            if given is not None and given != mean:
                raise ValueError(
                    f"{name} {given} is not the mix's mean ({mean}): give a mix or lengths"
                )
        return {**data, **means}

    @staticmethod
    def _load_in_tokens(data: Any) -> Any:
        """A load given in output tokens per second is that many requests per second over
        the (mean) output length; both given must agree."""
        if not isinstance(data, dict) or data.get("output_tokens_per_s") is None:
            return data
        tokens, output = data["output_tokens_per_s"], data.get("output_tokens")
        if not isinstance(tokens, int | float) or not isinstance(output, int) or output <= 0:
            return data  # the fields' own checks say what is wrong
        if data.get("mix"):
            output = sum(float(c["share"]) * c["output_tokens"] for c in _plain(data["mix"]))
        rate = tokens / output
        given = data.get("requests_per_s")
        if given is None:
            return {**data, "requests_per_s": rate}
        if isinstance(given, int | float) and abs(given - rate) > 1e-9 * max(rate, 1.0):
            raise ValueError(
                f"requests_per_s {given:g} and output_tokens_per_s {tokens:g} disagree "
                f"({tokens:g} / {output} output tokens = {rate:g} requests/s): give one"
            )
        return data

    @model_validator(mode="after")
    def _context_fits(self) -> ServingWorkload:
        if self.longest_context_tokens > 10_000_000:
            raise ValueError("input_tokens + output_tokens exceed 10,000,000")
        return self

    def lengths(self) -> tuple[Array, Array, Array]:
        """Prompt and output tokens and share of each kind of request (one without a mix)."""
        if self.mix is None:
            return (
                np.array([float(self.input_tokens)]),
                np.array([float(self.output_tokens)]),
                np.array([1.0]),
            )
        return (
            np.array([float(c.input_tokens) for c in self.mix]),
            np.array([float(c.output_tokens) for c in self.mix]),
            np.array([c.share for c in self.mix]),
        )

    @property
    def mean_input_tokens(self) -> float:
        inp, _, share = self.lengths()
        return float(share @ inp)

    @property
    def mean_output_tokens(self) -> float:
        _, out, share = self.lengths()
        return float(share @ out)

    def _decoding_mean(self, values: Array) -> float:
        """``values`` averaged over the sequences decoding at any moment: each kind of request
        decodes for a time in proportion to its output length."""
        _, out, share = self.lengths()
        weight = share * out
        return float(weight @ values / weight.sum())

    @property
    def decode_context_tokens(self) -> float:
        """The context a decoding sequence attends to, on average: its prompt and half its
        output."""
        inp, out, _ = self.lengths()
        return self._decoding_mean(inp + out / 2)

    @property
    def memory_context_tokens(self) -> float:
        """The KV cache a decoding sequence is given room for: its prompt and its whole output."""
        inp, out, _ = self.lengths()
        return self._decoding_mean(inp + out)

    def lengths_text(self) -> str:
        """The request lengths as people read them: one prompt and output, or the mix."""
        if not self.mix:
            return (
                f"{self.input_tokens:,} prompt and {self.output_tokens:,} output tokens per request"
            )
        kinds = ", ".join(f"{c.share:.0%} {c.input_tokens:,}/{c.output_tokens:,}" for c in self.mix)
        return (
            f"a mix of prompt/output tokens per request ({kinds}; means {self.input_tokens:,}/"
            f"{self.output_tokens:,}; the time-to-first-token target held for the longest prompt)"
        )

    @property
    def longest_context_tokens(self) -> int:
        inp, out, _ = self.lengths()
        return int((inp + out).max())

    @property
    def weight_bytes(self) -> float:
        return self.architecture.total_params * BYTES[self.weights]

    @property
    def kv_bytes_per_token(self) -> float:
        """K and V of every layer for one token: 2 x layers x KV width x bytes; with MLA
        (``kv_lora_rank``) one latent of kv_lora_rank + rope_head_dim elements per layer,
        shared by every head."""
        arch = self.architecture
        if arch.kv_lora_rank is not None:
            latent = arch.kv_lora_rank + (arch.rope_head_dim or 0)
            return arch.layers * latent * BYTES[self.kv_cache]
        return 2.0 * arch.layers * arch.kv_dim * BYTES[self.kv_cache]

    @property
    def attention_flops_per_context_token(self) -> float:
        """FLOPs one decoded token spends on one earlier token's key and value, over every
        layer: 2 x heads x (key width + value width) per layer; with MLA (absorbed, as its
        decode kernels run it) the keys are the latent and its rotary part, the values the
        latent."""
        arch = self.architecture
        if arch.kv_lora_rank is not None:
            key = arch.kv_lora_rank + (arch.rope_head_dim or 0)
            value = arch.kv_lora_rank
        else:
            key = value = arch.head_width
        return 2.0 * arch.layers * arch.heads * (key + value)


def parse_mix(text: str) -> list[dict[str, Any]]:
    """``'500/100:0.75,8000/1000:0.25'`` (prompt/output tokens:share of requests, ...) as a
    mix's kinds; ValueError naming the part that is not one."""
    kinds = []
    for part in text.split(","):
        try:
            lengths, share = part.strip().split(":")
            prompt, output = lengths.split("/")
            kinds.append(
                {"input_tokens": int(prompt), "output_tokens": int(output), "share": float(share)}
            )
        except ValueError:
            raise ValueError(
                f"{part.strip()!r} is not prompt/output:share (e.g. 500/100:0.75)"
            ) from None
    return kinds


def mix_text(mix: tuple[LengthClass, ...] | None) -> str | None:
    """A mix as :func:`parse_mix` reads it (None without one)."""
    if not mix:
        return None
    return ",".join(f"{c.input_tokens}/{c.output_tokens}:{c.share:g}" for c in mix)


def _plain(mix: Any) -> list[dict[str, Any]]:
    return [c.model_dump() if isinstance(c, BaseModel) else dict(c) for c in mix]


@dataclass(frozen=True)
class ServingEstimate:
    """Per profile, at the best layout and batch that meet the targets (NaN where none)."""

    fits: NDArray[np.bool_]
    tp: Array
    pp: Array
    batch: Array
    replica_gpus: Array
    replicas: Array  # on the profile's GPUs
    gpus_needed: Array  # for the load (NaN without one)
    tokens_per_s_per_gpu: Array  # output tokens
    tokens_per_s_per_replica: Array
    ttft_ms: Array
    tpot_ms: Array
    fabric_share: Array  # of a decode step's time spent on the fabric (0 in one node)
    multi_node: NDArray[np.bool_]
    # of a replica's time per request spent on its prefill (the rest decodes): how the cost
    # splits between input and output tokens
    prefill_share: Array
    memory_gb_per_gpu: Array  # weights and the batch's KV cache
    # the latencies at the workload's latency_percentile (the targets are checked on these;
    # a mix's TTFT is its longest prompt's)
    ttft_ms_at_percentile: Array
    tpot_ms_at_percentile: Array
    # experts spread over more GPUs than an NVLink domain holds: all-to-all over the fabric
    expert_parallel_across: NDArray[np.bool_]
    disaggregated: NDArray[np.bool_]
    kv_transfer_ms: Array  # a request's KV cache from prefill to decode GPUs (0 when collocated)
    # the KV cache crosses the fabric; then fabric_share is its share of the time to first token
    kv_over_fabric: NDArray[np.bool_]

    def row(self, i: int) -> dict[str, Any]:
        return {f.name: getattr(self, f.name)[i].item() for f in fields(self)}


def _layouts() -> tuple[Array, Array]:
    """Every candidate (tp, pp) pair; which a profile can run is decided per profile. ``tp``
    is the expert-parallel width of a replica served attention data-parallel."""
    tp, pp = np.meshgrid(np.array(TP_DEGREES + WIDE_EP_DEGREES, float), np.array(PP_DEGREES, float))
    return tp.ravel(), pp.ravel()


def estimate_serving(
    job: ServingWorkload,
    profiles: HardwareProfiles,
    constants: ServingConstants | None = None,
    layout: tuple[int, int] | None = None,
) -> ServingEstimate:
    """The serving estimate of ``job`` on every profile (vectorised: profiles x layouts x
    batches); ``layout`` (tp, pp) fixes the layout instead of searching it (a published run's
    own)."""
    c = constants or ServingConstants()
    links = ModelConstants()
    arch = job.architecture
    if layout is None:
        tp, pp = _layouts()
    else:
        tp, pp = np.array([float(layout[0])]), np.array([float(layout[1])])
    # shapes: (profiles, layouts, batches)
    col = {
        name: getattr(profiles, name)[:, None, None]
        for name in (
            "gpu_count",
            "gpus_per_node",
            "nvlink_domain_gpus",
            "peak_bf16",
            "peak_fp8",
            "gemm_ceiling_bf16",
            "gemm_ceiling_fp8",
            "hbm_bytes",
            "hbm_bytes_per_s",
            "scaleup_bytes_per_s",
            "nic_bytes_per_s",
        )
    }
    t = tp[None, :, None]
    p = pp[None, :, None]
    b = BATCHES[None, None, :]
    gpus = t * p
    domain = np.minimum(col["nvlink_domain_gpus"], col["gpu_count"])
    kv_share = 1.0 - c.memory_headroom
    expert_parallel = job.attention_data_parallel and arch.moe is not None

    def weights_on(width: Array) -> Array:
        """Weight bytes per GPU of a replica over ``width`` GPUs: a share of every weight,
        or, served attention data-parallel, every weight but a share of the routed experts."""
        if expert_parallel:
            routed_share = arch.expert_params / arch.total_params
            return job.weight_bytes * ((1.0 - routed_share) + routed_share / width)
        return job.weight_bytes / width

    # experts spread beyond one NVLink domain reach each other over the fabric
    ep_across = expert_parallel & (t > domain) & (p == 1)
    # pipeline stages beyond one NVLink domain cross the fabric
    stages_across = np.where((gpus > domain) & ~ep_across, p, 1.0)
    if layout is None:
        # pipeline stages only once tensor parallelism fills the NVLink domain, and across
        # domains (over the fabric: stages, or experts) only when one sequence does not fit
        # in one domain
        one_domain = (
            job.longest_context_tokens * job.kv_bytes_per_token / domain
            <= (col["hbm_bytes"] - weights_on(domain)) * kv_share
        )
        valid = (
            (gpus <= col["gpu_count"])
            & (((t <= domain) & ((p == 1) | (t == domain))) | ep_across)
            & (((stages_across == 1) & ~ep_across) | ~one_domain)
        )
    else:
        valid = gpus <= col["gpu_count"]
    multi = (stages_across > 1) | ep_across

    # the FLOP/s the efficiencies are shares of: the GPU's measured matmul ceiling per precision
    # (ServingConstants.at_matmul_ceiling), or its datasheet peak for the roofline baseline
    bf16 = col["peak_bf16"] * (col["gemm_ceiling_bf16"] if c.at_matmul_ceiling else 1.0)
    fp8 = col["peak_fp8"] * (col["gemm_ceiling_fp8"] if c.at_matmul_ceiling else 1.0)
    peak = np.where(job.weights == "bf16", bf16, fp8)
    weights_per_gpu = weights_on(gpus)
    kv_per_gpu = b * job.memory_context_tokens * job.kv_bytes_per_token / gpus
    # the KV cache takes its share of the memory the weights leave (TensorRT-LLM's rule)
    fits = kv_per_gpu <= (col["hbm_bytes"] - weights_per_gpu) * kv_share

    active = arch.active_params
    output = job.mean_output_tokens
    # one decode step of a pipeline stage for b / p sequences
    micro = np.maximum(b / p, 1.0)
    read = weights_per_gpu + micro * job.decode_context_tokens * job.kv_bytes_per_token / gpus
    memory_time = read / (col["hbm_bytes_per_s"] * c.hbm_efficiency)
    # the matmuls at the weights' precision, attention over the context at 16 bits
    attention_flops = job.attention_flops_per_context_token * job.decode_context_tokens
    compute_time = (
        micro / gpus * (2.0 * active / peak + attention_flops / bf16) / c.decode_compute_efficiency
    )
    layers_per_stage = arch.layers / p
    volume = micro * arch.hidden_size * c.activation_bytes
    # a PCIe card's GPUs all-reduce over PCIe, at PCIe's share of its bandwidth
    pcie = col["scaleup_bytes_per_s"] <= PCIE_MAX_BYTES_PER_S
    link_efficiency = np.where(pcie, c.pcie_efficiency, links.nvlink_efficiency)
    scaleup = np.maximum(col["scaleup_bytes_per_s"] * link_efficiency, 1.0)
    # inside the NVLink domain: two ring all-reduces per layer (after attention and after the
    # MLP); a replica served attention data-parallel is costed the same, as it was fitted
    t_nv = np.minimum(t, domain)
    tp_comm = np.where(
        t_nv > 1,
        2.0
        * layers_per_stage
        * (
            2.0 * (t_nv - 1) * links.nvlink_step_latency_s
            + 2.0 * (t_nv - 1) / t_nv * volume / scaleup
        ),
        0.0,
    )
    nodes = np.ceil(gpus / col["gpus_per_node"])
    knee = profiles.fabric_knee_nodes[:, None, None]
    phi = np.maximum(
        profiles.fabric_floor[:, None, None],
        1.0 - profiles.fabric_kappa[:, None, None] * np.log2(np.maximum(nodes / knee, 1.0)),
    )
    efficiency = profiles.fabric_eta[:, None, None] * phi / profiles.oversubscription[:, None, None]
    # a stage's activations go to the next stage's GPU over its own NIC
    per_gpu_fabric = col["nic_bytes_per_s"] * efficiency
    hop_latency = links.network_step_latency_s * profiles.fabric_alpha_multiplier[:, None, None]
    hop_bytes_per_s = np.maximum(per_gpu_fabric, 1.0)
    hop = np.where(multi & ~ep_across, hop_latency + volume / hop_bytes_per_s, 0.0)
    # experts across domains: each MoE layer dispatches every token's activations to its
    # top-k experts and combines them back, the share held outside the GPU's own domain over
    # its NIC at the training model's all-to-all efficiency; nothing hidden under compute
    moe = arch.moe
    moe_layers = arch.layers * moe.moe_layer_fraction if moe is not None else 0.0
    top_k = moe.top_k if moe is not None else 0
    remote = np.where(ep_across, 1.0 - domain / gpus, 0.0)
    a2a_bytes_per_s = np.maximum(per_gpu_fabric * links.alltoall_efficiency, 1.0)

    def all_to_all(tokens_per_gpu: Array | float) -> Array:
        bytes_out = 2.0 * tokens_per_gpu * top_k * arch.hidden_size * c.activation_bytes * remote
        return np.where(
            ep_across, moe_layers * (2.0 * hop_latency + bytes_out / a2a_bytes_per_s), 0.0
        )

    expert_comm = all_to_all(b / gpus)
    stage_time = np.maximum(memory_time, compute_time) + tp_comm + hop + expert_comm
    # a sequence passes every stage once per token; the runtime spends its overhead on each
    step = p * stage_time + b * c.sequence_overhead_s

    def prefill_time(tokens: float) -> Array:
        """A prompt of ``tokens``: its matmuls and causal attention at the prefill
        efficiency, its all-reduces, its activations across each stage boundary and its
        experts' all-to-all, as replica time."""
        flops = 2.0 * active * tokens + 2.0 * arch.layers * tokens**2 * arch.attention_width
        activations = tokens * arch.hidden_size * c.activation_bytes
        tp_part = np.where(
            t_nv > 1, 2.0 * arch.layers * 2.0 * (t_nv - 1) / t_nv * activations / scaleup, 0.0
        )
        hops = np.where(multi & ~ep_across, p * (hop_latency + activations / hop_bytes_per_s), 0.0)
        # its tokens spread over the replica's GPUs, as its FLOPs are
        spread = all_to_all(tokens / gpus)
        return flops / gpus / (peak * c.prefill_efficiency) + tp_part + hops + spread

    inputs, _, shares = job.lengths()
    prefills = [prefill_time(float(n)) for n in inputs]
    prefill = sum(s * x for s, x in zip(shares, prefills, strict=True))
    longest_prefill = prefills[int(np.argmax(inputs))]
    fabric_decode = p * hop + expert_comm
    if job.disaggregated:
        # prefill GPUs (as many as a decode replica's) hand each request's KV cache to the
        # decode replica: over NVLink when both fit one node, else over every GPU's NIC
        same_node = 2.0 * gpus <= np.minimum(col["gpus_per_node"], domain)
        handoff_bytes_per_s = gpus * np.where(same_node, scaleup, hop_bytes_per_s)
        handoff_latency = np.where(same_node, links.nvlink_step_latency_s, hop_latency)

        def transfer(tokens: float) -> Array:
            return handoff_latency + tokens * job.kv_bytes_per_token / handoff_bytes_per_s

        kv_transfer = transfer(job.mean_input_tokens)
        tpot = step
        ttft = prefill + kv_transfer + step
        checked_ttft = longest_prefill + transfer(float(inputs.max())) + step
        # requests per second a decode replica finishes, or its GPUs' links take in
        decode_rate = b / (output * step)
        link_rate = handoff_bytes_per_s / max(job.mean_input_tokens * job.kv_bytes_per_token, 1.0)
        rate = np.minimum(decode_rate, link_rate)
        gpu_seconds = gpus * (prefill + 1.0 / rate)  # per request, prefill and decode GPUs
        per_replica = output / gpu_seconds * gpus
        prefill_part = prefill / (prefill + 1.0 / rate)
        multi = multi | ~same_node
        fabric_time = np.where(same_node, 0.0, kv_transfer)
        fabric_share = np.where(same_node, fabric_decode / step, fabric_time / ttft)
        kv_over_fabric = ~same_node
    else:
        kv_transfer = np.zeros_like(step)
        tpot = step + b * prefill / output
        ttft = prefill + step
        checked_ttft = longest_prefill + step
        per_replica = b / tpot
        prefill_part = b * prefill / (b * prefill + output * step)
        fabric_share = fabric_decode / step
        kv_over_fabric = np.zeros_like(step, dtype=bool)
    if job.latency_percentile == "p99" and not job.disaggregated:
        # the prompts that arrive in a request's lifetime, at random, at their 99th
        # percentile: a decode step's jitter plus that many prefills over its output tokens
        tpot_at = step * c.tpot_step_p99_ratio + poisson_interruptions(b, prefills, shares) / output
    else:
        tpot_at = tpot * c.latency_ratio("tpot", job.latency_percentile)
    ttft_at = checked_ttft * c.latency_ratio("ttft", job.latency_percentile)
    ok = valid & fits
    if job.tpot_ms is not None:
        ok &= tpot_at * 1e3 <= job.tpot_ms
    if job.ttft_ms is not None:
        ok &= ttft_at * 1e3 <= job.ttft_ms
    per_gpu = np.where(ok, per_replica / gpus, -np.inf)
    flat = per_gpu.reshape(len(profiles), -1)
    best = np.argmax(flat, axis=1)
    found = np.isfinite(flat[np.arange(len(profiles)), best])

    def pick(values: Array) -> Array:
        full = np.broadcast_to(values, per_gpu.shape).reshape(len(profiles), -1)
        chosen = full[np.arange(len(profiles)), best].astype(float)
        return np.where(found, chosen, np.nan)

    replica_gpus = pick(gpus)
    replicas = np.floor(profiles.gpu_count / replica_gpus)
    replica_rate = pick(per_replica)
    if job.requests_per_s is not None:
        needed_replicas = np.ceil(job.requests_per_s * output / replica_rate)
        gpus_needed = needed_replicas * replica_gpus
    else:
        gpus_needed = np.full(len(profiles), np.nan)
    return ServingEstimate(
        fits=found,
        tp=pick(t),
        pp=pick(p),
        batch=pick(b),
        replica_gpus=replica_gpus,
        replicas=replicas,
        gpus_needed=gpus_needed,
        tokens_per_s_per_gpu=pick(per_replica / gpus),
        tokens_per_s_per_replica=replica_rate,
        ttft_ms=pick(ttft) * 1e3,
        tpot_ms=pick(tpot) * 1e3,
        fabric_share=pick(fabric_share),
        multi_node=found & (pick(multi.astype(float)) > 0),
        prefill_share=pick(prefill_part),
        memory_gb_per_gpu=pick(weights_per_gpu + kv_per_gpu) / 1e9,
        ttft_ms_at_percentile=pick(ttft_at) * 1e3,
        tpot_ms_at_percentile=pick(tpot_at) * 1e3,
        expert_parallel_across=found & (pick(ep_across.astype(float)) > 0),
        disaggregated=np.full(len(profiles), job.disaggregated) & found,
        kv_transfer_ms=pick(kv_transfer) * 1e3,
        kv_over_fabric=found & (pick(kv_over_fabric.astype(float)) > 0),
    )
