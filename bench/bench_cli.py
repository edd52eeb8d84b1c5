"""How fast the command line starts: `fabricscope --help` and one `estimate`, each as a ratio
to a bare `python -c pass` run side by side (interleaved, the median of several runs).

Start-up is what a user waits for on these commands: the model itself takes milliseconds,
the rest is Python importing what the command needs (fabricscope/cli.py imports the heavy
libraries inside the commands that use them).
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPEATS = 9
WORKLOAD = "llama3-70b"
# one profile without a provider: no stored calibration is read, as a user's first estimate
HARDWARE = {
    "gpu_model": "H100-SXM-80GB",
    "gpu_count": 512,
    "gpus_per_node": 8,
    "fabric_class": "infiniband",
    "fabric_gbps_per_gpu": 400,
}
HELP_TARGET = 10.0  # times `python -c pass`
ESTIMATE_TARGET_CPU_S = 0.5


def _run(command: Sequence[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def run(report: Callable[[str], None]) -> list[str]:
    cli = [sys.executable, "-m", "fabricscope.cli"]
    with tempfile.TemporaryDirectory() as folder:
        hardware = Path(folder) / "hardware.json"
        hardware.write_text(json.dumps(HARDWARE))
        commands = {
            "`python -c pass`": [sys.executable, "-c", "pass"],
            "`fabricscope --help`": [*cli, "--help"],
            f"`fabricscope estimate -w {WORKLOAD} --hardware <one profile>`": [
                *cli,
                "estimate",
                "-w",
                WORKLOAD,
                "--hardware",
                str(hardware),
            ],
        }
        report(f"CLI start-up: {len(commands)} commands, interleaved, {REPEATS} runs each")
        timings: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(REPEATS):  # interleaved: a busy moment slows every command alike
            for name, command in commands.items():
                timings[name].append(_run(command))
    wall = {name: statistics.median(w for w, _ in runs) for name, runs in timings.items()}
    cpu = {name: statistics.median(c for _, c in runs) for name, runs in timings.items()}
    bare, help_, estimate = list(commands)
    lines = [
        "",
        f"### CLI start-up, as a ratio to `python -c pass` (median of {REPEATS} interleaved runs)",
        "",
        "| command | wall s | CPU s | ratio (wall) | ratio (CPU) |",
        "|---|---|---|---|---|",
    ]
    for name in commands:
        lines.append(
            f"| {name} | {wall[name]:.3f} | {cpu[name]:.3f} "
            f"| {wall[name] / wall[bare]:.1f}x | {cpu[name] / cpu[bare]:.1f}x |"
        )
    return [
        *lines,
        "",
        f"**`--help`: {wall[help_] / wall[bare]:.1f}x** a bare interpreter (target: within "
        f"{HELP_TARGET:.0f}x); **`estimate`: {cpu[estimate]:.2f} s of CPU** (target: under "
        f"{ESTIMATE_TARGET_CPU_S} s), of which the model is a few milliseconds.",
    ]
