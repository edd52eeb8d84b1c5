"""The serving (LLM inference) model: throughput, latency, replicas and the fabric's share for a
model served on each hardware profile, vectorised over profiles like the training model.

One replica of the model runs on ``tp x pp`` GPUs: tensor parallelism inside an NVLink domain
(an all-reduce per layer over the GPUs' link: NVLink, or PCIe on PCIe cards), pipeline stages
across nodes only when the weights do not fit one domain (then the fabric carries each stage's
activations); attention data-parallel (``attention_data_parallel``) splits only the routed
experts. For a batch of ``b`` sequences decoding together (continuous batching):

- a decode step reads the replica's weights and the batch's KV cache (MLA's latent where the
  architecture has one) from HBM, or is bound by compute at large batch: ``max(bytes / HBM
  bandwidth, FLOPs / peak)``, each at an efficiency, plus the runtime's overhead per sequence;
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
# candidate batches (sequences decoding together per replica) and TP and PP degrees
BATCHES = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], dtype=float)
TP_DEGREES = (1, 2, 4, 8, 16, 32, 64, 72)
PP_DEGREES = (1, 2, 4, 8, 16)
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
        0.4,
        "fitted",
        "share of peak FLOP/s a decode step's matmuls reach when compute-bound; fitted as above",
    )
    prefill_efficiency: float = _constant(
        0.6,
        "fitted",
        "share of peak FLOP/s prefill's matmuls and attention reach; fitted as above",
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
    input_tokens: int = Field(gt=0, le=10_000_000, description="prompt tokens per request")
    output_tokens: int = Field(gt=0, le=1_000_000, description="output tokens per request")
    requests_per_s: float | None = Field(default=None, gt=0, description="the load to serve")
    output_tokens_per_s: float | None = Field(
        default=None,
        gt=0,
        description="the load in output tokens per second instead (requests/s x output tokens)",
    )
    ttft_ms: float | None = Field(default=None, gt=0, description="time to first token target")
    tpot_ms: float | None = Field(default=None, gt=0, description="time per output token target")
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
    def _load_in_tokens(cls, data: Any) -> Any:
        """A load given in output tokens per second is that many requests per second over
        the output length; both given must agree."""
        if not isinstance(data, dict) or data.get("output_tokens_per_s") is None:
            return data
        tokens, output = data["output_tokens_per_s"], data.get("output_tokens")
        if not isinstance(tokens, int | float) or not isinstance(output, int) or output <= 0:
            return data  # the fields' own checks say what is wrong
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
        if self.input_tokens + self.output_tokens > 10_000_000:
            raise ValueError("input_tokens + output_tokens exceed 10,000,000")
        return self

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

    def row(self, i: int) -> dict[str, Any]:
        return {f.name: getattr(self, f.name)[i].item() for f in fields(self)}


def _layouts() -> tuple[Array, Array]:
    """Every candidate (tp, pp) pair; which a profile can run is decided per profile."""
    tp, pp = np.meshgrid(np.array(TP_DEGREES, float), np.array(PP_DEGREES, float))
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
    context = job.input_tokens + job.output_tokens
    kv_share = 1.0 - c.memory_headroom
    # pipeline stages beyond one NVLink domain cross the fabric
    stages_across = np.where(gpus > domain, p, 1.0)
    if layout is None:
        # pipeline stages only once tensor parallelism fills the NVLink domain, and across
        # domains (over the fabric) only when one sequence does not fit in one domain
        one_domain = (
            context * job.kv_bytes_per_token / domain
            <= (col["hbm_bytes"] - job.weight_bytes / domain) * kv_share
        )
        valid = (
            (t <= domain)
            & (gpus <= col["gpu_count"])
            & ((p == 1) | (t == domain))
            & ((stages_across == 1) | ~one_domain)
        )
    else:
        valid = gpus <= col["gpu_count"]
    multi = stages_across > 1

    peak = np.where(job.weights == "bf16", col["peak_bf16"], col["peak_fp8"])
    if job.attention_data_parallel and arch.moe is not None:
        routed_share = arch.expert_params / arch.total_params
        weights_per_gpu = job.weight_bytes * ((1.0 - routed_share) + routed_share / gpus)
    else:
        weights_per_gpu = job.weight_bytes / gpus
    kv_per_gpu = b * context * job.kv_bytes_per_token / gpus
    # the KV cache takes its share of the memory the weights leave (TensorRT-LLM's rule)
    fits = kv_per_gpu <= (col["hbm_bytes"] - weights_per_gpu) * kv_share

    active = arch.active_params
    # one decode step of a pipeline stage for b / p sequences
    micro = np.maximum(b / p, 1.0)
    read = (
        weights_per_gpu
        + micro * (job.output_tokens / 2 + job.input_tokens) * job.kv_bytes_per_token / gpus
    )
    memory_time = read / (col["hbm_bytes_per_s"] * c.hbm_efficiency)
    # the matmuls at the weights' precision, attention over the context at 16 bits
    attention_flops = job.attention_flops_per_context_token * (
        job.input_tokens + job.output_tokens / 2
    )
    compute_time = (
        micro
        / gpus
        * (2.0 * active / peak + attention_flops / col["peak_bf16"])
        / c.decode_compute_efficiency
    )
    layers_per_stage = arch.layers / p
    volume = micro * arch.hidden_size * c.activation_bytes
    # a PCIe card's GPUs all-reduce over PCIe, at PCIe's share of its bandwidth
    pcie = col["scaleup_bytes_per_s"] <= PCIE_MAX_BYTES_PER_S
    link_efficiency = np.where(pcie, c.pcie_efficiency, links.nvlink_efficiency)
    scaleup = np.maximum(col["scaleup_bytes_per_s"] * link_efficiency, 1.0)
    # two ring all-reduces per layer (after attention and after the MLP)
    tp_comm = np.where(
        t > 1,
        2.0
        * layers_per_stage
        * (2.0 * (t - 1) * links.nvlink_step_latency_s + 2.0 * (t - 1) / t * volume / scaleup),
        0.0,
    )
    # prefill all-reduces every prompt token's activations (its latency shared by the batch)
    prefill_tp_comm = np.where(
        t > 1,
        2.0
        * arch.layers
        * 2.0
        * (t - 1)
        / t
        * job.input_tokens
        * arch.hidden_size
        * c.activation_bytes
        / scaleup,
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
    hop = np.where(multi, hop_latency + volume / hop_bytes_per_s, 0.0)
    # a prompt's activations cross each stage boundary once
    prefill_hop = np.where(
        multi,
        hop_latency + job.input_tokens * arch.hidden_size * c.activation_bytes / hop_bytes_per_s,
        0.0,
    )
    stage_time = np.maximum(memory_time, compute_time) + tp_comm + hop
    # a sequence passes every stage once per token; the runtime spends its overhead on each
    step = p * stage_time + b * c.sequence_overhead_s
    prefill_flops = (
        2.0 * active * job.input_tokens + 2.0 * arch.layers * (job.input_tokens**2) * arch.q_dim
    )
    prefill = (
        prefill_flops / gpus / (peak * c.prefill_efficiency) + prefill_tp_comm + p * prefill_hop
    )
    tpot = step + b * prefill / job.output_tokens
    ttft = prefill + step
    ok = valid & fits
    if job.tpot_ms is not None:
        ok &= tpot * 1e3 <= job.tpot_ms
    if job.ttft_ms is not None:
        ok &= ttft * 1e3 <= job.ttft_ms
    per_replica = b / tpot
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
        needed_replicas = np.ceil(job.requests_per_s * job.output_tokens / replica_rate)
        gpus_needed = needed_replicas * replica_gpus
    else:
        gpus_needed = np.full(len(profiles), np.nan)
    fabric_time = pick(p * hop)
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
        fabric_share=fabric_time / pick(step),
        multi_node=found & (pick(stages_across) > 1),
        prefill_share=pick(b * prefill / (b * prefill + job.output_tokens * step)),
        memory_gb_per_gpu=pick(weights_per_gpu + kv_per_gpu) / 1e9,
    )
