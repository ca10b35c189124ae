r"""Small, seeded experiments that the book's chapters run, as functions.

Each study is a plain function of its settings and seeds that returns a
JSON-ready ``dict``, so the same computation runs on a chapter page (a few
seeds, live) and from the command line under several arithmetic variants of
the CPU (``tools/portable.py record``), where many seeds are run once and the
result is committed as a record of the package (:mod:`rhn.results`).

- :mod:`rhn.studies.spirals`: deep plain against deep highway networks on two
  interleaved spirals (chapter 5).
- :mod:`rhn.studies.race`: RNN, LSTM, GRU and RHN trained briefly on the adding
  problem, with gradient norms before and after (chapter 9).
- :mod:`rhn.studies.memory`: the five models on a long memory under noise,
  each at the learning rate its own search chose (the chapter "When to use an
  RHN").
- :mod:`rhn.studies.foothold`: the GRU and the RHN on the adding problem and on
  recall of one marked value, the same sequences without the late marker (the
  same chapter).

From a terminal: ``python -m rhn.studies spirals --seeds 0-9 --out FILE``.
"""

from __future__ import annotations

import os
import platform
from typing import Any

import torch

__all__ = ["cpu_model", "machine", "parse_seeds"]

# the variables that change which code paths (and roundings) torch, MKL and
# oneDNN take on an x86 CPU; a record keeps the ones that were set
ARITHMETIC_VARIABLES = (
    "ATEN_CPU_CAPABILITY",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "ONEDNN_MAX_CPU_ISA",
    "OMP_NUM_THREADS",
)


def cpu_model() -> str:
    """The CPU's model name (from ``/proc/cpuinfo`` where there is one)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def machine() -> dict[str, Any]:
    """What made a result: CPU, torch, SIMD capability, threads, variables set."""
    return {
        "cpu": cpu_model(),
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "variables": {
            k: os.environ[k] for k in ARITHMETIC_VARIABLES if k in os.environ
        },
    }


def parse_seeds(text: str) -> list[int]:
    """``"0-9"``, ``"0,1,2"`` or ``"3"`` as a list of seeds (``ValueError`` if not)."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            if "-" in part.strip()[1:]:
                first, last = part.split("-", 1)
                seeds.extend(range(int(first), int(last) + 1))
            else:
                seeds.append(int(part))
    except ValueError:
        raise ValueError(
            f"seeds must look like 0-9 or 0,1,2 (non-negative integers), got {text!r}"
        ) from None
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct non-negative integers, got {text!r}")
    return seeds
