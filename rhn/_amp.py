"""Autocast helpers shared by the fast and the Triton RHN layers.

The layers choose their dtypes explicitly: :func:`autocast_dtype` says which
low precision autocast asks for, and :func:`autocast_off` turns autocast off
around the hand-written loops.
"""

from __future__ import annotations

import contextlib

import torch


def autocast_dtype(device_type: str, dtype: torch.dtype) -> torch.dtype | None:
    """The low precision autocast asks for now, or ``None``.

    ``None`` when autocast is off for ``device_type`` or when the parameters'
    ``dtype`` is not ``float32`` (autocast leaves other dtypes alone).
    """
    if dtype != torch.float32:
        return None
    try:
        if not torch.is_autocast_enabled(device_type):
            return None
        low = torch.get_autocast_dtype(device_type)
    except (TypeError, RuntimeError, AttributeError):  # torch < 2.4
        if device_type == "cpu":
            on, low = torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()
        elif device_type == "cuda":
            on, low = torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype()
        else:
            return None
        if not on:
            return None
    return None if low == torch.float32 else low


def autocast_off(device_type: str) -> contextlib.AbstractContextManager:
    """Autocast disabled (the dtypes here are chosen explicitly), if it is on."""
    try:
        on = torch.is_autocast_enabled(device_type)
    except (TypeError, RuntimeError, AttributeError):  # torch < 2.4, or no autocast
        on = device_type in ("cpu", "cuda")
    if not on:
        return contextlib.nullcontext()
    return torch.autocast(device_type, enabled=False)
