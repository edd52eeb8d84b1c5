"""Training workloads: what is trained, on how many tokens, with which precision and memory plan.

Units: sizes in elements (hidden_size, ffn_size...), tokens as counts, parameters as
counts (``params_billion`` in billions). Pure: no I/O; presets are loaded elsewhere.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)


class Precision(StrEnum):
    BF16 = "bf16"
    FP8 = "fp8"
    # NVIDIA's 4-bit training recipe (Transformer Engine's NVFP4BlockScaling, Megatron-Bridge's
    # "nvfp4"): the linear layers' three GEMMs take E2M1 values with an E4M3 scale per 16
    # (weights in 16x16 blocks), random Hadamard transforms on the weight-gradient inputs and
    # stochastic rounding of the gradients, on Blackwell's FP4 tensor cores; attention, the
    # embeddings, the output layer and a MoE router stay in BF16, as in an FP8 job, and so does
    # the multi-token-prediction block (Megatron-Core runs no FP4 in it)
    NVFP4 = "nvfp4"


class Fp8Recipe(StrEnum):
    """How an FP8 job scales the FP8 tensors of its linear layers (docs/MODEL.md, "FP8
    recipes"); the layers it applies to are the same for every recipe: the linear layers only
    (attention, the embeddings, the output layer and a MoE router stay in BF16)."""

    # one scale per tensor from its own amax (Transformer Engine's Float8CurrentScaling,
    # Megatron-Bridge's "FP8-CS", torchao's tensorwise)
    TENSORWISE = "tensorwise"
    # one scale per tensor from an amax history (Transformer Engine's DelayedScaling, NeMo
    # 24.07's "FP8")
    DELAYED = "delayed"
    # one scale per row of each operand (torchao's rowwise)
    ROWWISE = "rowwise"
    # one E8M0 scale per 32 elements on Blackwell's block-scaled tensor cores (Transformer
    # Engine's MXFP8BlockScaling, Megatron-Bridge's "MXFP8" / "FP8-MX", torchao's mxfp8)
    MXFP8 = "mxfp8"
    # one scale per 128x128 block of a weight and per 1x128 of an activation or gradient
    # (DeepSeek-V3's; Transformer Engine's Float8BlockScaling, Megatron-Bridge's "fp8_sc")
    BLOCKWISE = "blockwise"


# spellings a workload may use for a recipe, and recipes the model cannot cost, with why
FP8_RECIPE_ALIASES = {
    "current": Fp8Recipe.TENSORWISE,
    "fp8-cs": Fp8Recipe.TENSORWISE,
    "fp8-mx": Fp8Recipe.MXFP8,
    "fp8-sc": Fp8Recipe.BLOCKWISE,
    "fp8_sc": Fp8Recipe.BLOCKWISE,
    "subchannel": Fp8Recipe.BLOCKWISE,
}
# 4-bit spellings the model does not take as a training precision, with why
UNCOSTED_PRECISIONS = {
    "fp4": "say which 4-bit recipe: nvfp4 (NVIDIA's, Transformer Engine's NVFP4BlockScaling) "
    "is costed; MXFP4 training is not",
    "mxfp4": "no public measurement of MXFP4 training's GEMM speed in a training framework "
    "was found; nvfp4 (NVIDIA's 4-bit recipe) is costed",
}
UNCOSTED_FP8_RECIPES: dict[str, str] = {}


class Recompute(StrEnum):
    NONE = "none"
    SELECTIVE = "selective"  # attention's softmax/dropout recomputed (Korthikanti et al.)
    FULL = "full"  # every layer's forward re-run in backward


class Stack(StrEnum):
    """The training software, as far as it moves compute efficiency (docs/MODEL.md)."""

    MEGATRON = "megatron"  # Megatron-LM / Megatron-Core / NeMo / Megatron-Bridge: fused kernels
    FSDP = "fsdp"  # PyTorch FSDP with fused or compiled kernels (torchtitan, llm-foundry...)
    EAGER = "eager"  # PyTorch eager: FSDP without torch.compile, a Hugging Face Trainer loop


# spellings a workload may use for a stack, and stacks the model cannot cost, with why
STACK_ALIASES = {"hf": Stack.EAGER, "huggingface": Stack.EAGER, "megatron-core": Stack.MEGATRON}
UNCOSTED_STACKS = {
    "deepspeed": "no published measurement of DeepSpeed's efficiency against the others is "
    "bundled (docs/MODEL.md); Megatron-DeepSpeed runs Megatron's kernels (use megatron), "
    "DeepSpeed ZeRO over a Hugging Face model runs eager PyTorch (use eager)",
}


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# MoE.latent_size, as Megatron-Core runs a LatentMoE layer
LATENT_SIZE = (
    "LatentMoE (Nemotron 3 Super): the routed experts run on a latent this "
    "wide, behind one down-projection (hidden -> latent) before the dispatch and one "
    "up-projection (latent -> hidden) after the combine, both per token and shared by the "
    "experts; the all-to-all and the token shuffles move latent-wide activations; the "
    "shared experts and the router keep the hidden size (Megatron-Core moe_layer.py's "
    "fc1_latent_proj / fc2_latent_proj); default: no latent"
)


# MoE.load_imbalance: what a step waits on when routing is not balanced
LOAD_IMBALANCE = (
    "the routed tokens the most-loaded expert-parallel rank receives over the mean (1: "
    "balanced, as NVIDIA's published benchmarks force it; a token-dropping capacity factor "
    "caps it): that rank's routed-expert GEMMs and its all-to-all take this much longer, "
    "and every rank waits on it at the combine; default 1"
)


class Dispatcher(StrEnum):
    """How a MoE layer's tokens travel to their experts' ranks (Megatron-Core's
    ``moe_token_dispatcher_type`` and ``moe_flex_dispatcher_backend``)."""

    ALLTOALL = "alltoall"  # NCCL all-to-all: one copy per (token, routed expert)
    DEEPEP = "deepep"  # DeepEP: one copy per destination node over the fabric
    HYBRIDEP = "hybridep"  # NVIDIA's HybridEP: the same over the fabric


# MoE.dispatcher
DISPATCHER = (
    "the token dispatcher: alltoall (Megatron-Core's NCCL all-to-all, one copy of a token "
    "per routed expert on another rank), deepep or hybridep (the flex dispatcher's kernels: "
    "a token crosses the fabric once per destination node that holds any of its experts, "
    "then fans out over NVLink: DeepSeek-V3 report 3.2.2, deepseek-ai/DeepEP); default "
    "alltoall"
)

# MoE.fused_grouped_mlp
FUSED_GROUPED_MLP = (
    "the routed experts run Transformer Engine's fused grouped MLP (Megatron-Bridge's "
    "cutedsl_fused_grouped_mlp, NVTE_CUTEDSL_FUSED_GROUPED_MLP=1; MXFP8 on Blackwell): one "
    "graph-safe grouped kernel over the local experts with their token counts on the device, "
    "so no per-expert GEMM call is paid; default false (Megatron-Core's grouped MLP: one "
    "cuBLAS GEMM per local expert)"
)


class MoE(_Spec):
    """Mixture of experts: ``experts`` per MoE layer, each token routed to ``top_k``."""

    experts: int = Field(gt=1, le=4096)
    top_k: int = Field(ge=1, le=64)
    expert_ffn_size: int | None = Field(default=None, gt=0, description="default: ffn_size")
    shared_experts: int = Field(default=0, ge=0, le=64)
    moe_layer_fraction: float = Field(default=1.0, gt=0, le=1, description="share of MoE layers")
    expert_parallel: int | None = Field(
        default=None, ge=1, description="EP degree; default: experts up to the DP group"
    )
    latent_size: int | None = Field(default=None, gt=0, le=262_144, description=LATENT_SIZE)
    load_imbalance: float = Field(default=1.0, ge=1.0, le=64.0, description=LOAD_IMBALANCE)
    dispatcher: Dispatcher = Field(default=Dispatcher.ALLTOALL, description=DISPATCHER)
    fused_grouped_mlp: bool = Field(default=False, description=FUSED_GROUPED_MLP)

    @model_validator(mode="after")
    def _top_k_fits(self) -> Self:
        if self.top_k > self.experts:
            raise ValueError(f"moe.top_k ({self.top_k}) cannot exceed moe.experts ({self.experts})")
        return self


# Mamba.pattern's letters (Megatron-Core's hybrid_layer_pattern): a Mamba-2 layer, an
# attention layer, an MLP, an MoE layer
HYBRID_LAYER_KINDS = ("M", "*", "-", "E")


class Mamba(_Spec):
    """A hybrid Mamba-Transformer's state-space layers (Nemotron-H, Nemotron 3): Mamba-2
    mixers (Dao & Gu 2024, arXiv:2405.21060) beside attention, as Megatron-Core's hybrid
    stack places them (``hybrid_layer_pattern``: ``M`` a Mamba-2 layer, ``*`` an attention
    layer, ``-`` an MLP, ``E`` an MoE layer, each its own layer with its own norm). With it a
    workload's ``layers`` are the MLP (or MoE) layers; attention runs on ``attention_layers``
    and Mamba-2 on ``layers`` of this spec. The mixer's sizes are Megatron-Core's MambaMixer's
    (megatron/core/ssm/mamba_mixer.py): ``heads`` x ``head_dim`` channels (d_inner), ``groups``
    of B and C of ``state_size`` each, a depthwise causal convolution ``conv_kernel`` wide and
    the SSD scan in chunks of ``chunk_size`` tokens."""

    layers: int = Field(ge=0, le=1000, description="Mamba-2 layers (the pattern's M)")
    attention_layers: int = Field(
        ge=0, le=1000, description="attention layers (the pattern's *); 0 for a pure SSM"
    )
    state_size: int = Field(gt=0, le=4096, description="the SSM state per group (d_state, N)")
    heads: int = Field(gt=0, le=4096, description="Mamba-2 heads (nheads)")
    head_dim: int = Field(gt=0, le=4096, description="channels per head (headdim, P)")
    groups: int = Field(default=1, gt=0, le=4096, description="B and C groups (ngroups)")
    conv_kernel: int = Field(default=4, gt=0, le=64, description="causal convolution (d_conv)")
    chunk_size: int = Field(default=128, gt=0, le=65_536, description="SSD chunk (Q)")
    pattern: str | None = Field(
        default=None,
        min_length=1,
        max_length=4000,
        description="the layers in order, as Megatron-Core's hybrid_layer_pattern spells "
        "them (M Mamba-2, * attention, - MLP, E MoE); needed only to say which layers a "
        "layer_precision's first or last layers are",
    )

    @model_validator(mode="after")
    def _groups_divide_heads(self) -> Self:
        if self.heads % self.groups:
            raise ValueError(f"mamba.groups ({self.groups}) must divide mamba.heads ({self.heads})")
        if self.pattern is not None:
            unknown = sorted(set(self.pattern) - set(HYBRID_LAYER_KINDS))
            if unknown:
                raise ValueError(
                    f"mamba.pattern: {''.join(unknown)!r} is not a layer (M Mamba-2, * "
                    "attention, - MLP, E MoE)"
                )
            counts = (
                ("M", self.layers, "layers"),
                ("*", self.attention_layers, "attention_layers"),
            )
            for kind, count, field in counts:
                if self.pattern.count(kind) != count:
                    raise ValueError(
                        f"mamba.pattern has {self.pattern.count(kind)} {kind!r} layers where "
                        f"mamba.{field} says {count}"
                    )
        return self

    @property
    def inner(self) -> int:
        """The mixer's channels, heads x head_dim (Megatron's d_inner)."""
        return self.heads * self.head_dim

    @property
    def in_proj_width(self) -> int:
        """in_proj's output: z and x (d_inner each), B and C (groups x state each), dt per
        head."""
        return 2 * self.inner + 2 * self.groups * self.state_size + self.heads

    def params_per_layer(self, hidden_size: int) -> int:
        """in_proj and out_proj, the convolution's weights and bias over x, B and C, A, D
        and dt's bias per head, and the gated norm over d_inner (MambaMixer's parameters)."""
        conv_channels = self.inner + 2 * self.groups * self.state_size
        projections = hidden_size * self.in_proj_width + self.inner * hidden_size
        return projections + conv_channels * (self.conv_kernel + 1) + 3 * self.heads + self.inner

    @property
    def scan_flops_per_token(self) -> float:
        """One layer's SSD scan, forward, per token: the chunked algorithm's matmuls
        (arXiv:2405.21060 section 6, Listing 1), with chunk Q, state N and head dim P: the
        diagonal blocks' C B^T (2 Q N per token, once per group, as mamba_ssm's _bmm_chunk
        computes it) and their product with X (2 Q P per head), each chunk's state B^T X
        (2 N P per head) and the output from the carried states C h (2 N P per head); the
        states passed between chunks (N P per head per chunk) are left out. At N = P = Q it is
        the paper's O(T N^2). Dense blocks, as the kernels' tiles run them."""
        q, n, p = float(self.chunk_size), float(self.state_size), float(self.head_dim)
        return self.heads * (2.0 * q * p + 4.0 * n * p) + self.groups * 2.0 * q * n


class PrecisionModule(StrEnum):
    """A kind of linear layer a recipe may run at another precision than the rest."""

    ATTENTION = "attention"  # the query-key-value and output projections (linear_qkv, linear_proj)
    MLP = "mlp"  # a dense MLP's matrices
    EXPERTS = "experts"  # the routed experts' grouped GEMMs
    SHARED_EXPERTS = "shared_experts"  # a MoE layer's shared experts
    LATENT = "latent"  # a LatentMoE's down- and up-projections (fc1/fc2_latent_proj)
    MAMBA_IN = "mamba_in"  # a Mamba-2 mixer's in_proj
    MAMBA_OUT = "mamba_out"  # a Mamba-2 mixer's out_proj
    MTP = "mtp"  # the multi-token-prediction block, every linear layer of it


LAYER_PRECISION = (
    "which linear layers of an fp8 or nvfp4 job run at another precision than the rest "
    "(Megatron-Core's first_last_layers_bf16 and a Transformer Engine precision config): "
    "the first and last layers whole in BF16, modules in BF16 in every layer, and an nvfp4 "
    "job's modules in FP8 (MXFP8); default: every linear layer at the job's precision"
)


class LayerPrecision(_Spec):
    """A mixed-precision recipe's exceptions to the job's precision, by layer and module.

    Megatron-Core keeps ``num_layers_at_start_in_bf16`` and ``num_layers_at_end_in_bf16``
    layers whole in BF16 (``first_last_layers_bf16``; megatron/core/fp4_utils.py and
    fp8_utils.py ``get_fp4_context`` / ``get_fp8_context``), counting a hybrid's layers in its
    ``hybrid_layer_pattern``. A precision config file (``--te-precision-config-file``,
    megatron/core/extensions/TransformerEngineMixedPrecision.md) moves the modules it names
    to another recipe in the other layers, never in a layer already in BF16."""

    bf16_first_layers: int = Field(default=0, ge=0, le=1000, description="whole, in BF16")
    bf16_last_layers: int = Field(default=0, ge=0, le=1000, description="whole, in BF16")
    bf16_modules: tuple[PrecisionModule, ...] = Field(
        default=(), description="modules in BF16 in every layer"
    )
    fp8_modules: tuple[PrecisionModule, ...] = Field(
        default=(), description="an nvfp4 job's modules in FP8 (MXFP8) in the other layers"
    )

    @model_validator(mode="after")
    def _disjoint(self) -> Self:
        both = sorted(set(self.bf16_modules) & set(self.fp8_modules))
        if both:
            raise ValueError(
                f"layer_precision: {', '.join(both)} cannot be both in bf16_modules and in "
                "fp8_modules"
            )
        return self


class LoRA(_Spec):
    """Low-rank adapters on ``matrices_per_layer`` weight matrices of every layer.

    The base weights are frozen: no weight gradients or optimizer states for them, and
    data-parallel gradient traffic is adapter-sized.
    """

    rank: int = Field(gt=0, le=4096)
    matrices_per_layer: int = Field(default=4, ge=1, le=16, description="q, k, v, o by default")


class Workload(_Spec):
    """A transformer training job (dense or MoE; full training or LoRA fine-tuning)."""

    # the kind of workload, which names its estimator (fabricscope/rank/estimators.py);
    # a class attribute, not a field: a workload's JSON does not carry it
    kind: ClassVar[str] = "training"

    name: str = Field(min_length=1, max_length=200)
    params_billion: float | None = Field(
        default=None, gt=0, le=100_000, description="total parameters; derived if omitted"
    )
    active_params_billion: float | None = Field(
        default=None, gt=0, description="MoE: parameters used per token; derived if omitted"
    )
    layers: int = Field(gt=0, le=1000)
    hidden_size: int = Field(gt=0, le=262_144)
    heads: int = Field(gt=0, le=4096)
    kv_heads: int | None = Field(default=None, gt=0, description="GQA/MQA; default: heads")
    head_dim: int | None = Field(
        default=None,
        gt=0,
        le=4096,
        description="width of one attention head (query, key and value); default: "
        "hidden_size / heads",
    )
    ffn_size: int | None = Field(default=None, gt=0, description="default: 4 x hidden_size")
    kv_lora_rank: int | None = Field(
        default=None,
        gt=0,
        le=65_536,
        description="multi-head latent attention (MLA, DeepSeek-V2/V3): the width of the "
        "compressed key-value latent every head shares; a serving KV cache holds this and "
        "rope_head_dim per layer per token instead of K and V (training reads neither)",
    )
    rope_head_dim: int | None = Field(
        default=None,
        gt=0,
        le=4096,
        description="MLA: the width of the decoupled rotary key cached beside the latent",
    )
    mla_qk_head_dim: int | None = Field(
        default=None,
        gt=0,
        le=4096,
        description="MLA: each head's query and key width without the rotary part "
        "(qk_nope_head_dim); attention's scores run over it plus rope_head_dim per head",
    )
    mla_v_head_dim: int | None = Field(
        default=None,
        gt=0,
        le=4096,
        description="MLA: each head's value width (v_head_dim); attention's product with V "
        "runs over it per head",
    )
    gated_mlp: bool = Field(default=False, description="SwiGLU-style MLP: 3 matrices, not 2")
    attention_window: int | None = Field(
        default=None,
        gt=0,
        le=10_000_000,
        description="sliding-window (banded) attention: each token attends to at most this "
        "many tokens before it, on window_layer_fraction of the layers (GPT-OSS: 128 on "
        "every other layer); default: every layer attends to the whole sequence",
    )
    window_layer_fraction: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="the share of the layers whose attention is banded to attention_window "
        "(the rest attend to the whole sequence)",
    )
    seq_len: int = Field(gt=0, le=10_000_000)
    vocab_size: int = Field(gt=0, le=10_000_000)
    tied_embeddings: bool = False
    moe: MoE | None = None
    mamba: Mamba | None = Field(
        default=None,
        description="hybrid Mamba-Transformer: Mamba-2 layers beside attention; layers then "
        "counts the MLP (or MoE) layers",
    )
    mtp_layers: int = Field(
        default=0,
        ge=0,
        le=16,
        description="multi-token prediction depths (Megatron-Core mtp_num_layers; DeepSeek-V3 "
        "section 2.2): each runs one more attention layer and MLP (the MoE layer of an MoE "
        "model) on the main model's last hidden states, behind a 2h -> h projection, and its "
        "own pass of the output layer and loss, on the last pipeline stage; default: none",
    )
    mtp_shared_layer: bool = Field(
        default=False,
        description="the MTP depths run one physical block in turn (Megatron-Core "
        "mtp_use_repeated_layer): one block of weights however many depths run",
    )
    lora: LoRA | None = None
    tokens: float = Field(gt=0, le=1e16, description="training tokens")
    global_batch_tokens: int | None = Field(default=None, gt=0)
    global_batch_size: int | None = Field(default=None, gt=0, description="sequences per step")
    exact_batch: bool = Field(
        default=False,
        description="the global batch is exact: never moved; a layout that does not divide "
        "it is not planned (default: the batch is a target, and where no layout divides it "
        "the plan runs the nearest batch one does, and says so)",
    )
    micro_batch_size: int | None = Field(
        default=None, gt=0, le=1024, description="sequences per micro-batch; searched if omitted"
    )
    precision: Precision = Precision.BF16
    fp8_recipe: Fp8Recipe = Field(
        default=Fp8Recipe.TENSORWISE,
        description="how an FP8 job scales its linear layers' tensors: tensorwise (current "
        "scaling, the default), delayed, rowwise (torchao's measured cost per GPU generation), "
        "mxfp8 (Blackwell's block-scaled tensor cores; costed as tensorwise, docs/MODEL.md), "
        "blockwise (DeepSeek-V3's 128-element blocks; Transformer Engine's measured cost per "
        "GPU generation); only with precision fp8",
    )
    layer_precision: LayerPrecision | None = Field(default=None, description=LAYER_PRECISION)
    activation_recompute: Recompute | None = Field(
        default=None,
        description="searched if omitted (with full recompute of a share of the layers too)",
    )
    zero_stage: int = Field(default=1, ge=0, le=3, description="3 means FSDP full shard")
    bf16_weights: bool = Field(
        default=False,
        description="the parameters, their gradients and Adam's moments kept in BF16, no FP32 "
        "master copy: 8 bytes of state per parameter instead of 16 (NeMo AutoModel builds its "
        "models in BF16 unless model.torch_dtype says float32; torch.optim.Adam keeps its "
        "moments in the parameter's dtype)",
    )
    tp_comm_overlap: bool = Field(
        default=False, description="TP collectives overlapped with GEMMs (--tp-comm-overlap)"
    )
    ep_comm_overlap: bool = Field(
        default=False,
        description="MoE all-to-all overlapped with another micro-batch's compute "
        "(Megatron-Core --overlap-moe-expert-parallel-comm, DeepSeek's DualPipe)",
    )
    moe_act_recompute: bool = Field(
        default=False,
        description="the routed experts' activation recomputed in the backward instead of "
        "kept (Megatron-Core --recompute-modules moe_act): its forward runs twice",
    )
    flash_attention: bool = Field(
        default=True, description="fused attention keeps no s x s scores (FlashAttention)"
    )
    dropout: bool = Field(
        default=False,
        description="hidden and attention dropout on (GPT-3-era recipes); stores their masks",
    )
    stack: Stack = Field(
        default=Stack.MEGATRON,
        description="training software: megatron (Megatron-Core, NeMo; the default, the "
        "best-tuned), fsdp (PyTorch FSDP, compiled or fused kernels), eager (hf: no "
        "torch.compile)",
    )

    @field_validator("stack", "fp8_recipe", "precision", mode="before")
    @classmethod
    def _spelling(cls, value: object, info: ValidationInfo) -> object:
        """A stack's, FP8 recipe's or precision's accepted spellings; one the model cannot
        cost is refused with why (UNCOSTED_STACKS, UNCOSTED_FP8_RECIPES, UNCOSTED_PRECISIONS)."""
        kind, aliases, uncosted = {
            "stack": (Stack, STACK_ALIASES, UNCOSTED_STACKS),
            "fp8_recipe": (Fp8Recipe, FP8_RECIPE_ALIASES, UNCOSTED_FP8_RECIPES),
            "precision": (Precision, {}, UNCOSTED_PRECISIONS),
        }[str(info.field_name)]
        if isinstance(value, str) and not isinstance(value, kind):
            key = value.strip().lower()
            if key in uncosted:
                raise ValueError(f"{info.field_name} {value!r}: {uncosted[key]}")
            return aliases.get(key, key)
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if (self.global_batch_tokens is None) == (self.global_batch_size is None):
            raise ValueError(
                f"workload {self.name!r}: give exactly one of global_batch_tokens and "
                "global_batch_size"
            )
        if self.head_dim is None and self.hidden_size % self.heads:
            raise ValueError(
                f"workload {self.name!r}: hidden_size {self.hidden_size} is not a multiple of "
                f"heads {self.heads} (give head_dim when the heads are not hidden_size / heads "
                "wide)"
            )
        if self.kv_heads is not None and (self.kv_heads > self.heads or self.heads % self.kv_heads):
            raise ValueError(
                f"workload {self.name!r}: kv_heads {self.kv_heads} must divide heads {self.heads}"
            )
        if self.global_batch_tokens is not None and self.global_batch_tokens < self.seq_len:
            raise ValueError(
                f"workload {self.name!r}: global_batch_tokens {self.global_batch_tokens} is less "
                f"than one sequence ({self.seq_len} tokens)"
            )
        if self.tokens < self.batch_tokens:
            raise ValueError(f"workload {self.name!r}: fewer training tokens than one step's batch")
        if self.fp8_recipe is not Fp8Recipe.TENSORWISE and self.precision is not Precision.FP8:
            raise ValueError(
                f"workload {self.name!r}: fp8_recipe {self.fp8_recipe.value} needs precision fp8"
            )
        if self.ep_comm_overlap and self.moe is None:
            raise ValueError(f"workload {self.name!r}: ep_comm_overlap needs an MoE model (moe)")
        if self.moe_act_recompute and self.moe is None:
            raise ValueError(f"workload {self.name!r}: moe_act_recompute needs an MoE model (moe)")
        if (
            self.moe is not None
            and self.moe.fused_grouped_mlp
            and (self.precision is not Precision.FP8 or self.fp8_recipe is not Fp8Recipe.MXFP8)
        ):
            raise ValueError(
                f"workload {self.name!r}: moe.fused_grouped_mlp needs MXFP8 (precision fp8, "
                "fp8_recipe mxfp8): Transformer Engine's fused grouped MLP runs MXFP8 only"
            )
        if self.rope_head_dim is not None and self.kv_lora_rank is None:
            raise ValueError(f"workload {self.name!r}: rope_head_dim is MLA's: give kv_lora_rank")
        mla_heads = (self.mla_qk_head_dim, self.mla_v_head_dim)
        if any(d is not None for d in mla_heads) and (
            None in mla_heads or self.kv_lora_rank is None or self.rope_head_dim is None
        ):
            raise ValueError(
                f"workload {self.name!r}: mla_qk_head_dim and mla_v_head_dim are MLA's: give "
                "both, with kv_lora_rank and rope_head_dim"
            )
        if self.lora is not None and self.moe is not None:
            raise ValueError(f"workload {self.name!r}: LoRA on MoE models is not modelled")
        if self.lora is not None and self.mamba is not None:
            raise ValueError(f"workload {self.name!r}: LoRA on hybrid models is not modelled")
        if self.lora is not None and self.mtp_layers:
            raise ValueError(
                f"workload {self.name!r}: LoRA with multi-token prediction is not modelled"
            )
        if self.mtp_shared_layer and not self.mtp_layers:
            raise ValueError(f"workload {self.name!r}: mtp_shared_layer needs mtp_layers >= 1")
        self._check_pattern()
        self._check_layer_precision()
        return self

    def _check_pattern(self) -> None:
        """A hybrid's pattern names as many MLP and MoE layers as the workload has."""
        pattern = self.mamba.pattern if self.mamba is not None else None
        if pattern is None:
            return
        for kinds, count, what in (
            ("-E", self.layers, "MLP and MoE layers (- and E) where layers says"),
            ("E", self.moe_layers, "MoE layers (E) where the MoE spec makes"),
        ):
            found = sum(pattern.count(kind) for kind in kinds)
            if found != count:
                raise ValueError(
                    f"workload {self.name!r}: mamba.pattern has {found} {what} {count}"
                )

    def _check_layer_precision(self) -> None:
        """A layer_precision says what the job and the model can run."""
        lp = self.layer_precision
        if lp is None:
            return
        if self.precision is Precision.BF16:
            raise ValueError(
                f"workload {self.name!r}: layer_precision needs precision fp8 or nvfp4 (a "
                "bf16 job runs every layer in BF16)"
            )
        if lp.fp8_modules and self.precision is not Precision.NVFP4:
            raise ValueError(
                f"workload {self.name!r}: layer_precision.fp8_modules needs precision nvfp4"
            )
        if lp.bf16_first_layers or lp.bf16_last_layers:
            order = self._layer_order()
            if order is None:
                raise ValueError(
                    f"workload {self.name!r}: layer_precision's first and last layers of a "
                    "hybrid need mamba.pattern (the layers' order)"
                )
            if lp.bf16_first_layers + lp.bf16_last_layers > len(order):
                raise ValueError(
                    f"workload {self.name!r}: layer_precision keeps "
                    f"{lp.bf16_first_layers + lp.bf16_last_layers} layers in BF16 of "
                    f"{len(order)}"
                )
        present = self._modules_present()
        absent = [m.value for m in (*lp.bf16_modules, *lp.fp8_modules) if m not in present]
        if absent:
            raise ValueError(
                f"workload {self.name!r}: layer_precision names {', '.join(absent)}, which "
                "the model does not have"
            )

    @property
    def precision_label(self) -> str:
        """The precision as a summary states it: "fp8 (rowwise)" for a recipe other than the
        default, and what a ``layer_precision`` keeps off it ("nvfp4 (last 14 layers,
        attention in bf16; mamba_out in fp8)"), else the precision alone."""
        notes: list[str] = []
        if self.precision is Precision.FP8 and self.fp8_recipe is not Fp8Recipe.TENSORWISE:
            notes.append(self.fp8_recipe.value)
        lp = self.layer_precision
        if lp is not None:
            bf16 = [
                f"{where} {n} layer{'s' if n > 1 else ''}"
                for where, n in (("first", lp.bf16_first_layers), ("last", lp.bf16_last_layers))
                if n
            ] + [m.value for m in lp.bf16_modules]
            if bf16:
                notes.append(", ".join(bf16) + " in bf16")
            if lp.fp8_modules:
                notes.append(", ".join(m.value for m in lp.fp8_modules) + " in fp8")
        return f"{self.precision.value} ({'; '.join(notes)})" if notes else self.precision.value

    # ---- derived sizes (elements and parameter counts)
    @property
    def batch_sequences(self) -> int:
        if self.global_batch_size is not None:
            return self.global_batch_size
        assert self.global_batch_tokens is not None
        return max(1, round(self.global_batch_tokens / self.seq_len))

    @property
    def batch_tokens(self) -> int:
        return self.batch_sequences * self.seq_len

    @property
    def ffn(self) -> int:
        return self.ffn_size or 4 * self.hidden_size

    @property
    def head_width(self) -> int:
        """One attention head's width: head_dim, else hidden_size / heads."""
        return self.head_dim or self.hidden_size // self.heads

    @property
    def q_dim(self) -> int:
        """The queries' (and the attention output's) width: heads x head width."""
        return self.heads * self.head_width

    @property
    def kv_dim(self) -> int:
        return (self.kv_heads or self.heads) * self.head_width

    @property
    def attention_width(self) -> float:
        """The per-token width attention's two matmuls run over, the mean of the scores'
        (query-key) and the values' (heads x head width for both in standard attention). MLA
        (DeepSeek-V2/V3, Kimi K2) scores over heads x (mla_qk_head_dim + rope_head_dim) and
        multiplies by V over heads x mla_v_head_dim (Megatron-Core's MultiLatentAttention
        runs core attention on the decompressed heads; arXiv:2412.19437 section 2.1.1)."""
        if self.mla_qk_head_dim is None or self.mla_v_head_dim is None:
            return float(self.q_dim)
        scores = self.heads * (self.mla_qk_head_dim + (self.rope_head_dim or 0))
        return (scores + self.heads * self.mla_v_head_dim) / 2.0

    @property
    def attention_layers(self) -> int:
        """The layers with attention: every layer, or a hybrid's ``mamba.attention_layers``."""
        return self.layers if self.mamba is None else self.mamba.attention_layers

    @property
    def mamba_layers(self) -> int:
        """A hybrid's Mamba-2 layers (0 for a transformer)."""
        return 0 if self.mamba is None else self.mamba.layers

    @property
    def windowed_layers(self) -> float:
        """The layers whose attention is banded to attention_window (0 without a window)."""
        if self.attention_window is None:
            return 0.0
        return self.attention_layers * self.window_layer_fraction

    @property
    def attended_tokens_windowed(self) -> float:
        """A banded layer's keys per query on the same count as a full layer's s: under a
        causal mask a full layer attends to s/2 keys on average and a band of w to
        w - w^2/(2s), so on the unmasked count (s) the band is 2w - w^2/s; it is s at w = s."""
        s = float(self.seq_len)
        w = min(float(self.attention_window or self.seq_len), s)
        return 2.0 * w - w * w / s

    @property
    def attention_flops_per_token(self) -> float:
        """Scores and their product with V, forward and backward, non-causal (model-notes
        4.1's 12 l s h, with h the query width heads x head width, or MLA's
        :attr:`attention_width`); a sliding-window layer
        attends to :attr:`attended_tokens_windowed` keys per query instead of s; each
        multi-token-prediction depth's attention layer attends to the whole sequence."""
        windowed = self.windowed_layers
        # each multi-token-prediction depth runs one more attention layer, unbanded
        full = self.attention_layers - windowed + self.mtp_layers
        keys = full * self.seq_len + windowed * self.attended_tokens_windowed
        return 12.0 * keys * self.attention_width

    @property
    def ssm_scan_flops_per_token(self) -> float:
        """A hybrid's SSD scans, forward and backward (twice the forward, as for a matmul),
        over its Mamba-2 layers (:attr:`Mamba.scan_flops_per_token`); 0 for a transformer.
        The projections around them are matmuls over parameters, in 6N."""
        if self.mamba is None:
            return 0.0
        return 3.0 * self.mamba.layers * self.mamba.scan_flops_per_token

    @property
    def activation_bytes_per_token_width(self) -> float:
        """Bytes stored per layer per token per unit of hidden size, without recompute.

        Korthikanti et al. (2022)'s 34 (bf16, GPT: 11 attention + 19 MLP + 4 norms, dropout
        masks included) generalised: attention keeps its GEMM input, Q, K and V (K and V at
        kv/h of the width) and the output projection's input; the MLP keeps its input, the
        first GEMM's output (2f wide when gated) and the second GEMM's input; each dropout
        keeps a 1-byte mask. The s x s scores are counted separately (none with Flash).
        Q and the output projection's input are heads x head width wide.

        A hybrid's are per MLP layer: its attention layers' and Mamba-2 layers' spread over
        the MLP layers the pipeline stages count. A Mamba-2 layer keeps its norm's input, the
        in_proj's input and output (z, x, B, C, dt) and the out_proj's input (d_inner wide);
        the fused kernel recomputes the convolution and the scan's inner states.
        """
        h = self.hidden_size
        q = self.q_dim / h
        kv = self.kv_dim / h
        f = self.ffn / h
        attention = 2 + 2 * q + 4 * kv + 2 * q
        mlp = 2 + (6 if self.gated_mlp else 4) * f
        masks = 2 if self.dropout else 0
        if self.mamba is None:
            return attention + mlp + 4 + masks
        mamba = 2 + 2 * self.mamba.in_proj_width / h + 2 * self.mamba.inner / h
        sublayer = 2 + masks / 2  # each sublayer's norm input and dropout mask
        mixers = self.attention_layers * (attention + sublayer) + self.mamba_layers * (
            mamba + sublayer
        )
        return mlp + sublayer + mixers / self.layers

    @property
    def _attention_params_per_layer(self) -> int:
        h = self.hidden_size
        return 2 * h * self.q_dim + 2 * h * self.kv_dim  # q and o, k and v

    def _mlp_params(self, ffn: int) -> int:
        return (3 if self.gated_mlp else 2) * self.hidden_size * ffn

    @property
    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size * (1 if self.tied_embeddings else 2)

    @property
    def routed_width(self) -> int:
        """The width a routed expert reads and writes, and the all-to-all and the token
        shuffles move: a LatentMoE's latent, else the hidden size."""
        latent = self.moe.latent_size if self.moe is not None else None
        return latent or self.hidden_size

    @property
    def routed_active_params(self) -> float:
        """The routed experts' weights a token passes through per step's forward: top-k
        experts in each MoE layer it passes (multi-token prediction's among them); 0 when
        dense."""
        if self.moe is None:
            return 0.0
        return float(self.moe_layer_passes * self.moe.top_k * self._routed_expert_params())

    def _routed_expert_params(self) -> int:
        """One routed expert: its MLP on :attr:`routed_width` (a LatentMoE's latent)."""
        assert self.moe is not None
        ffn = self.moe.expert_ffn_size or self.ffn
        return (3 if self.gated_mlp else 2) * self.routed_width * ffn

    def _moe_block_params(self, active: bool) -> int:
        """One MoE layer's MLP part: its routed experts (top-k of them when ``active``), its
        shared experts on the hidden size, and a LatentMoE's down- and up-projection
        (hidden x latent each, per token, shared by the experts); the router not counted."""
        assert self.moe is not None
        moe = self.moe
        routed = (moe.top_k if active else moe.experts) * self._routed_expert_params()
        shared = moe.shared_experts * self._mlp_params(moe.expert_ffn_size or self.ffn)
        latent = 2 * self.hidden_size * moe.latent_size if moe.latent_size else 0
        return routed + shared + latent

    def _mtp_block_params(self, active: bool) -> int:
        """One multi-token-prediction depth's weights: an attention layer, an MLP (the MoE
        layer of an MoE model) and the projection of the concatenated embedding and hidden
        state back to the hidden size (2h x h, DeepSeek-V3 section 2.2's M_k); the
        embedding and the output layer are the main model's, shared; norms not counted."""
        h = self.hidden_size
        mlp = self._mlp_params(self.ffn) if self.moe is None else self._moe_block_params(active)
        return self._attention_params_per_layer + mlp + 2 * h * h

    @property
    def _mtp_blocks(self) -> int:
        """The multi-token-prediction blocks of weights: one per depth, or one in all when
        the depths share it (``mtp_shared_layer``); 0 without MTP."""
        if not self.mtp_layers:
            return 0
        return 1 if self.mtp_shared_layer else self.mtp_layers

    @property
    def mtp_block_params_active(self) -> float:
        """The weights a token passes in one multi-token-prediction depth (0 without MTP)."""
        return float(self._mtp_block_params(active=True)) if self.mtp_layers else 0.0

    @property
    def mtp_params(self) -> float:
        """The multi-token-prediction weights (derived): :attr:`_mtp_blocks` blocks."""
        return float(self._mtp_blocks * self._mtp_block_params(active=False))

    @property
    def mtp_head_params(self) -> int:
        """The output layer's weights each multi-token-prediction depth runs again (h x
        vocabulary per depth, the main model's, shared); 0 without MTP."""
        return self.mtp_layers * self.hidden_size * self.vocab_size

    @property
    def mtp_flops_per_token(self) -> float:
        """Multi-token prediction's matrix FLOPs per token, forward and backward: each depth
        runs its block (active parameters, :meth:`_mtp_block_params`) and its own pass of
        the output layer (h x vocabulary), 6 FLOPs per weight and token as the main model's;
        its core attention is in :attr:`attention_flops_per_token`. Repeated depths run the
        shared block once each (Megatron-Bridge flop_utils.py's ``(1 + mtp_num_layers)``
        logits and MTP MoE layers @067f987df03b)."""
        return 6.0 * (self.mtp_layers * self._mtp_block_params(active=True) + self.mtp_head_params)

    def _layer_order(self) -> list[str] | None:
        """The main model's layers in order: a hybrid's pattern (None without one), else
        ``layers`` transformer layers (``T``: attention and an MLP or MoE layer)."""
        if self.mamba is None:
            return ["T"] * self.layers
        return list(self.mamba.pattern) if self.mamba.pattern is not None else None

    def _layer_weights(self, kind: str) -> dict[PrecisionModule, float]:
        """One layer's linear weights a token passes (forward), by module: a pattern's
        letter, or ``T`` for a transformer layer, whose MLP part is the mean of the model's
        MLP and MoE layers (exact when every layer has the same)."""
        h = self.hidden_size
        if kind == "*":
            return {PrecisionModule.ATTENTION: float(self._attention_params_per_layer)}
        if kind == "M":
            assert self.mamba is not None
            return {
                PrecisionModule.MAMBA_IN: float(h * self.mamba.in_proj_width),
                PrecisionModule.MAMBA_OUT: float(self.mamba.inner * h),
            }
        if kind == "-":
            return {PrecisionModule.MLP: float(self._mlp_params(self.ffn))}
        if kind == "E":
            assert self.moe is not None
            moe = self.moe
            return {
                PrecisionModule.EXPERTS: float(moe.top_k * self._routed_expert_params()),
                PrecisionModule.SHARED_EXPERTS: float(
                    moe.shared_experts * self._mlp_params(moe.expert_ffn_size or self.ffn)
                ),
                PrecisionModule.LATENT: float(2 * h * (moe.latent_size or 0)),
            }
        share = self.moe_layers / self.layers
        weights = self._layer_weights("*")
        for sub, part in (("E", share), ("-", 1.0 - share)):
            if part > 0:
                for module, w in self._layer_weights(sub).items():
                    weights[module] = weights.get(module, 0.0) + part * w
        return weights

    def _layer_kinds(self) -> list[tuple[str, float, int]]:
        """The main model's layers as (kind, count, position): each of a known order at its
        position, a hybrid without its pattern as its kinds' counts (position -1: no first or
        last layers can be named)."""
        order = self._layer_order()
        if order is not None:
            return [(kind, 1.0, i) for i, kind in enumerate(order)]
        counts = {"M": self.mamba_layers, "*": self.attention_layers, "E": self.moe_layers}
        counts["-"] = self.layers - self.moe_layers
        return [(kind, float(n), -1) for kind, n in counts.items() if n]

    def _mtp_kinds(self) -> tuple[str, str]:
        """A multi-token-prediction depth's layers: an attention layer and an MLP (MoE)."""
        return ("*", "E" if self.moe is not None else "-")

    def _modules_present(self) -> set[PrecisionModule]:
        """The kinds of linear layer the model has (multi-token prediction's among them)."""
        kinds = {kind for kind, _, _ in self._layer_kinds()}
        if self.mtp_layers:
            kinds.update(self._mtp_kinds())
        present = {m for kind in kinds for m, w in self._layer_weights(kind).items() if w > 0}
        return present | ({PrecisionModule.MTP} if self.mtp_layers else set())

    def _layer_kinds_in_bf16(self, lp: LayerPrecision) -> list[tuple[str, float, bool]]:
        """:meth:`_layer_kinds` as (kind, count, whole): whether ``lp`` keeps the layer whole
        in BF16, one of its first or last layers (a layer of no known place is not)."""
        first, last = lp.bf16_first_layers, len(self._layer_order() or ()) - lp.bf16_last_layers
        return [
            (kind, count, i >= 0 and (i < first or i >= last))
            for kind, count, i in self._layer_kinds()
        ]

    def _mtp_in_bf16(self, lp: LayerPrecision) -> bool:
        """Whether the multi-token-prediction block runs whole in BF16: with the ``mtp``
        module, and always in an nvfp4 job (:meth:`_off_precision_weights`)."""
        return PrecisionModule.MTP in lp.bf16_modules or self.precision is Precision.NVFP4

    def _off_precision_weights(self, lp: LayerPrecision) -> tuple[float, float]:
        """The linear weights a token passes per step's forward that ``lp`` keeps in BF16 and
        runs in FP8. Main-model weights scale to a stated size as :attr:`active_params` does
        (the embeddings are the vocabulary's); each multi-token-prediction depth runs an
        attention layer, an MLP (MoE) layer and its 2h x h projection, in BF16 whole with the
        ``mtp`` module, and always in an nvfp4 job: Megatron-Core runs no FP4 in the MTP block
        ("currently ignoring FP4 in MTP layers", megatron/core/transformer/
        multi_token_prediction.py @d98e8a64ddf3)."""
        bf16 = fp8 = 0.0

        def add(kind: str, weight: float, whole: bool) -> None:
            nonlocal bf16, fp8
            for module, w in self._layer_weights(kind).items():
                if whole or module in lp.bf16_modules:
                    bf16 += weight * w
                elif module in lp.fp8_modules:
                    fp8 += weight * w

        embeddings = self.embedding_params
        scale = (self.active_params - embeddings) / (self._derived_params(active=True) - embeddings)
        for kind, count, whole in self._layer_kinds_in_bf16(lp):
            add(kind, count * scale, whole)
        if self.mtp_layers:
            whole = self._mtp_in_bf16(lp)
            for kind in self._mtp_kinds():
                add(kind, float(self.mtp_layers), whole)
            if whole:  # the projection of the concatenated embedding and hidden state
                bf16 += 2.0 * self.hidden_size**2 * self.mtp_layers
        return bf16, fp8

    @property
    def linear_params_bf16(self) -> float:
        """The linear weights a token passes per step's forward that an fp8 or nvfp4 job
        keeps in BF16: its ``layer_precision``'s, and an nvfp4 job's multi-token-prediction
        block (0 in a bf16 job, where every layer is)."""
        if self.precision is Precision.BF16:
            return 0.0
        return self._off_precision_weights(self.layer_precision or LayerPrecision())[0]

    @property
    def linear_params_fp8(self) -> float:
        """The linear weights a token passes per step's forward that ``layer_precision`` runs
        in FP8 in an nvfp4 job (0 without one)."""
        if self.layer_precision is None:
            return 0.0
        return self._off_precision_weights(self.layer_precision)[1]

    @property
    def routed_expert_passes(self) -> dict[Precision, float]:
        """The MoE layer passes a token makes per step's forward (:attr:`moe_layer_passes`)
        by the precision its routed experts run in: the job's; BF16 where ``layer_precision``
        keeps the layer whole or the experts in BF16, and in an nvfp4 job's multi-token-
        prediction block (:meth:`_off_precision_weights`); FP8 where an nvfp4 job's
        ``fp8_modules`` name the experts. Empty for a dense model."""
        if self.moe is None:
            return {}
        lp = self.layer_precision or LayerPrecision()
        passes: dict[Precision, float] = {}

        def add(count: float, whole: bool) -> None:
            if (
                self.precision is Precision.BF16
                or whole
                or PrecisionModule.EXPERTS in lp.bf16_modules
            ):
                precision = Precision.BF16
            elif PrecisionModule.EXPERTS in lp.fp8_modules:
                precision = Precision.FP8
            else:
                precision = self.precision
            passes[precision] = passes.get(precision, 0.0) + count

        share = self.moe_layers / self.layers  # a transformer layer's MoE part
        for kind, count, whole in self._layer_kinds_in_bf16(lp):
            moe = count if kind == "E" else count * share if kind == "T" else 0.0
            if moe:
                add(moe, whole)
        if self.mtp_layers:
            add(float(self.mtp_layers), self._mtp_in_bf16(lp))
        return passes

    @property
    def moe_layers(self) -> int:
        """The main model's MoE layers (``moe_layer_fraction`` of its layers); 0 when dense."""
        return 0 if self.moe is None else round(self.layers * self.moe.moe_layer_fraction)

    @property
    def moe_layer_passes(self) -> int:
        """The MoE layers a token passes per step's forward: the model's and one per
        multi-token-prediction depth (its block's MoE layer); 0 for a dense model."""
        return 0 if self.moe is None else self.moe_layers + self.mtp_layers

    def _derived_params(self, active: bool) -> float:
        """The main model's parameters (multi-token prediction's are :attr:`mtp_params`)."""
        dense_mlp = self._mlp_params(self.ffn)
        if self.moe is None:
            layers = self.layers * dense_mlp
        else:
            moe_layers = self.moe_layers
            layers = (
                moe_layers * self._moe_block_params(active) + (self.layers - moe_layers) * dense_mlp
            )
        mixers = self.attention_layers * self._attention_params_per_layer
        if self.mamba is not None:
            mixers += self.mamba.layers * self.mamba.params_per_layer(self.hidden_size)
        return float(layers + mixers + self.embedding_params)

    @property
    def _derived_total(self) -> float:
        """Every weight trained, derived: the main model's and multi-token prediction's."""
        return self._derived_params(active=False) + self.mtp_params

    @property
    def total_params(self) -> float:
        """The stated total, else the derived main model plus its multi-token-prediction
        weights (:attr:`mtp_params`)."""
        return (self.params_billion or 0) * 1e9 or self._derived_total

    @property
    def active_params(self) -> float:
        """Parameters each token passes through in the main model (all of them for a dense
        model); multi-token prediction's passes are :attr:`mtp_flops_per_token`."""
        if self.moe is None and not self.mtp_layers:
            return self.total_params
        if self.active_params_billion:
            return self.active_params_billion * 1e9
        # scale the derived ratio to the stated total when one is given
        return self.total_params * self._derived_params(active=True) / self._derived_total

    @property
    def expert_params(self) -> float:
        """The routed experts' parameters (what expert parallelism splits), multi-token
        prediction's MoE layer's among them; 0 when dense. Shared experts and a LatentMoE's
        projections run for every token and count with the dense part."""
        if self.moe is None:
            return 0.0
        blocks = self.moe_layers + self._mtp_blocks
        routed = blocks * self.moe.experts * self._routed_expert_params()
        # scale the derived share to the stated total when one is given
        return self.total_params * routed / self._derived_total

    @property
    def trainable_params(self) -> float:
        if self.lora is None:
            return self.total_params
        return float(
            self.layers * self.lora.matrices_per_layer * 2 * self.lora.rank * self.hidden_size
        )

    @property
    def steps(self) -> float:
        return self.tokens / self.batch_tokens
