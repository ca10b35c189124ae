r"""What a device does natively: the training precision and the Triton kernels.

A reader's GPU may be anything from Colab's free T4 to an H100, and the fast
choice differs between them. The decisions are made here, from the GPU's
compute capability (``torch.cuda.get_device_capability``), in one place:

- compute capability 8.0 and newer (A100, H100, L4, RTX 30xx and 40xx):
  bfloat16 autocast, with tensor cores for bfloat16 and float32's range, so
  no loss scaling;
- 7.x (V100, T4, RTX 20xx): float16 autocast with a ``GradScaler``, as these
  have tensor cores for float16 and none for bfloat16;
- below 7.0 (P100, K80): full precision; without tensor cores 16 bits gain
  little (the P100's faster float16 arithmetic aside) and need loss scaling.

This is what ``TrainConfig(amp=None)`` does (:func:`precision`).
``torch.cuda.is_bf16_supported()`` is not asked: by default it counts
emulation and answers ``True`` on a T4 (7.5), where bfloat16 runs emulated
and slowly. On the CPU mixed precision is off unless asked for
(``amp=True``: bfloat16 autocast, slower, so that CI runs the code path;
:class:`rhn.LSTM` runs in float32 where oneDNN has no bfloat16 LSTM);
Apple's MPS runs in full precision.

The Triton kernels (:mod:`rhn.fused`) need compute capability 8.0, as
Triton itself states; :func:`check_triton` refuses older GPUs with a message
that names the fast path instead.

Example (on the CPU)::

    >>> import torch
    >>> from rhn import devices
    >>> devices.precision(torch.device("cpu")).dtype is None   # full precision
    True
    >>> devices.precision("cpu", amp=True).dtype
    torch.bfloat16
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = [
    "BF16_CAPABILITY",
    "FP16_CAPABILITY",
    "TRITON_CAPABILITY",
    "Precision",
    "capability",
    "precision",
    "triton_problem",
    "check_triton",
]

BF16_CAPABILITY = (8, 0)
"""The first compute capability with bfloat16 tensor cores (Ampere)."""

FP16_CAPABILITY = (7, 0)
"""The first compute capability with float16 tensor cores (Volta)."""

TRITON_CAPABILITY = (8, 0)
"""The oldest compute capability Triton supports."""


@dataclass(frozen=True)
class Precision:
    """A training precision for one device.

    Attributes:
        dtype: the autocast dtype (``torch.bfloat16`` or ``torch.float16``),
            or ``None`` for full precision (no autocast).
        grad_scaler: whether the loss is scaled (a ``GradScaler``): float16
            only, whose small range lets gradients underflow otherwise.
        reason: why, in words (for logs and error messages).
    """

    dtype: torch.dtype | None
    grad_scaler: bool
    reason: str


def capability(device: torch.device | str) -> tuple[int, int] | None:
    """The compute capability ``(major, minor)`` of a CUDA device, else ``None``."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    major, minor = torch.cuda.get_device_capability(device)
    return int(major), int(minor)


def _name(device: torch.device, cap: tuple[int, int]) -> str:
    name = torch.cuda.get_device_name(device)
    return f"{name} (compute capability {cap[0]}.{cap[1]})"


def precision(device: torch.device | str, amp: bool | None = None) -> Precision:
    """The mixed precision to train with on ``device`` (see the module's table).

    Args:
        device: where the model runs.
        amp: ``None`` (default) picks by the device; ``False`` is full
            precision everywhere; ``True`` asks for mixed precision: on CUDA
            below capability 7.0 that is float16 with a ``GradScaler``, with
            no tensor cores to use; on the CPU bfloat16 autocast; MPS stays
            in full precision.
    """
    device = torch.device(device)
    if amp is False:
        return Precision(None, False, "amp=False: full precision")
    if device.type == "cpu":
        if amp:
            return Precision(torch.bfloat16, False, "amp=True on the CPU: bfloat16")
        return Precision(None, False, "the CPU: full precision unless amp=True")
    if device.type != "cuda":
        return Precision(None, False, f"{device.type}: full precision")
    cap = capability(device)
    assert cap is not None
    name = _name(device, cap)
    if cap >= BF16_CAPABILITY:
        return Precision(torch.bfloat16, False, f"{name}: bfloat16 tensor cores")
    if cap >= FP16_CAPABILITY or amp:
        return Precision(
            torch.float16, True, f"{name}: float16 with loss scaling (no bfloat16)"
        )
    return Precision(None, False, f"{name}: full precision (no tensor cores)")


def triton_problem(device: torch.device | str) -> str | None:
    """Why the Triton kernels cannot run on ``device``, or ``None`` if they can.

    Only the compute capability of a CUDA device is judged here; whether
    Triton is installed, and CPU tensors, are :mod:`rhn.fused`'s concern.
    """
    cap = capability(device)
    if cap is None or cap >= TRITON_CAPABILITY:
        return None
    return (
        f"impl='triton' needs a GPU of compute capability "
        f"{TRITON_CAPABILITY[0]}.{TRITON_CAPABILITY[1]} or newer (Triton's "
        f"requirement), got {_name(torch.device(device), cap)}; use impl='fast', "
        "which runs on every device"
    )


def check_triton(device: torch.device | str) -> None:
    """Raise ``RuntimeError`` if the Triton kernels cannot run on ``device``'s GPU."""
    problem = triton_problem(device)
    if problem is not None:
        raise RuntimeError(problem)
