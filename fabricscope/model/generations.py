"""The GPU architecture generation of each data-centre GPU the accuracy harnesses score or
the error bands (``fabricscope/model/error_bands.py``) are looked up by.

NVIDIA's product pages name each part's architecture: A100 (SXM and PCIe) Ampere, L40S Ada
Lovelace, H100, H800 (H100's export variant), H200 and GH200 Hopper, B200, B300, GB200, GB300
and the RTX PRO 6000 Blackwell.
A GPU missing here has no generation: it is refused by the harnesses and gets the band over
every held-out run, labelled so, never one guessed from its name.
"""

from __future__ import annotations

GENERATIONS: dict[str, str] = {
    "A100-SXM-80GB": "ampere",
    "A100-SXM-40GB": "ampere",
    "A100-PCIE-80GB": "ampere",
    "A100-PCIE-40GB": "ampere",
    "L40S-PCIE-48GB": "ada",
    "H100-SXM-80GB": "hopper",
    "H800-SXM-80GB": "hopper",
    "H100-NVL-94GB": "hopper",
    "H100-PCIE-80GB": "hopper",
    "H200-SXM-141GB": "hopper",
    "H200-NVL-141GB": "hopper",
    "GH200-96GB": "hopper",
    "B200-SXM-180GB": "blackwell",
    "B300-SXM-288GB": "blackwell",
    "GB200-NVL-186GB": "blackwell",
    "GB300-NVL-288GB": "blackwell",
    "RTXPRO6000-PCIE-96GB": "blackwell",
}
# each generation as NVIDIA writes it
GENERATION_NAMES: dict[str, str] = {
    "ampere": "Ampere",
    "ada": "Ada Lovelace",
    "hopper": "Hopper",
    "blackwell": "Blackwell",
}


def generation_of(gpu_model: str | None) -> str | None:
    """The GPU's generation (``GENERATIONS``), None for a GPU not there."""
    return None if gpu_model is None else GENERATIONS.get(gpu_model)
