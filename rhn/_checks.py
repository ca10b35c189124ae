"""Argument and input checks shared by the package.

Every public entry point validates what the user passed and raises a
``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind, wrong
value) whose message names the argument, what was expected and what was
given. Keeping the checks here means each message is written once.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch


def positive_int(name: str, value: object, minimum: int = 1) -> int:
    """Return ``value`` if it is an ``int`` >= ``minimum``; raise otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an int >= {minimum}, got {type(value).__name__} {value!r}"
        )
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value}")
    return int(value)


def is_batch(value: object) -> bool:
    """Whether ``value`` has the structure of a batch: ``(inputs, targets)`` or
    ``(inputs, targets, mask)``, a tuple or list whose first two items are
    tensors (the mask, if any, is checked by whoever reads it). The one test
    behind the messages of a task's ``generate`` (:mod:`rhn.train.run`) and of
    the data given to :func:`rhn.owntasks.tensor_task`."""
    return (
        isinstance(value, (tuple, list))
        and len(value) in (2, 3)
        and all(isinstance(t, torch.Tensor) for t in value[:2])
    )


def boolean(name: str, value: object) -> bool:
    """Return ``value`` if it is a ``bool``; raise a ``TypeError`` otherwise."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return value


def real(name: str, value: object) -> float:
    """Return ``value`` as a finite float; raise a ``TypeError``/``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number, got {type(value).__name__} {value!r}"
        )
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def probability(name: str, value: object) -> float:
    """Return ``value`` if it is a dropout rate in [0, 1); raise otherwise."""
    p = real(name, value)
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{name} must be a dropout rate in [0, 1), got {p}")
    return p


def choice(name: str, value: object, options: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``options`` (case-insensitive)."""
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be one of {list(options)}, got {type(value).__name__} "
            f"{value!r}"
        )
    key = value.lower()
    if key not in options:
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")
    return key


def float_tensor(name: str, value: object) -> torch.Tensor:
    """Return ``value`` if it is a floating-point tensor; raise ``TypeError``."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(
            f"{name} must be a floating-point tensor (e.g. torch.float32), got "
            f"dtype {value.dtype}; convert it with {name}.float()"
        )
    return value


def shape_str(shape: Sequence[object]) -> str:
    """Format a shape like ``(T, B, 3)`` for error messages."""
    return "(" + ", ".join(str(s) for s in shape) + ")"


def sequence(
    x: object, input_size: int, batch_first: bool, name: str = "x"
) -> tuple[torch.Tensor, bool]:
    """Check a sequence input and return it time-first with a batch axis.

    Accepts ``(T, B, I)`` (or ``(B, T, I)`` when ``batch_first``) and the
    unbatched ``(T, I)``. Returns the tensor as ``(T, B, I)`` and whether the
    input was unbatched, so the caller can restore the user's layout.
    """
    x = float_tensor(name, x)
    layout = "(B, T, I)" if batch_first else "(T, B, I)"
    if x.dim() not in (2, 3):
        raise ValueError(
            f"{name} must have shape {layout} or unbatched (T, I), got a "
            f"{x.dim()}-D tensor of shape {shape_str(x.shape)}"
        )
    if x.shape[-1] != input_size:
        raise ValueError(
            f"{name} must have {input_size} features in its last dimension "
            f"(input_size={input_size}), got shape {shape_str(x.shape)}"
        )
    unbatched = x.dim() == 2
    if unbatched:
        x = x.unsqueeze(1)
    elif batch_first:
        x = x.transpose(0, 1)
    if x.shape[0] == 0:
        raise ValueError(f"{name} must have at least one time step, got T = 0")
    nonempty_batch(name, x.shape[1])
    return x, unbatched


def state(
    value: object,
    num_layers: int,
    batch: int,
    hidden_size: int,
    unbatched: bool,
    like: torch.Tensor,
    name: str = "state",
) -> torch.Tensor:
    """Check a recurrent state of shape ``(N, B, H)`` (``(N, H)`` unbatched).

    Returns it with a batch axis. ``like`` is the input, whose dtype and
    device the state must share.
    """
    value = float_tensor(name, value)
    expected = (
        (num_layers, hidden_size)
        if unbatched
        else (
            num_layers,
            batch,
            hidden_size,
        )
    )
    if tuple(value.shape) != expected:
        legend = "(N, H)" if unbatched else "(N, B, H)"
        raise ValueError(
            f"{name} must have shape {legend} = {shape_str(expected)} for this "
            f"input, got {shape_str(value.shape)}"
        )
    same_dtype(name, value, like)
    if unbatched:
        value = value.unsqueeze(1)
    return value


def same_dtype(name: str, value: torch.Tensor, like: torch.Tensor) -> None:
    """Raise a ``TypeError`` if ``value`` and ``like`` differ in dtype or device."""
    if value.dtype != like.dtype:
        raise TypeError(
            f"{name} must have dtype {like.dtype} to match, got {value.dtype}; "
            f"convert it with {name}.to({like.dtype})"
        )
    if value.device != like.device:
        raise ValueError(
            f"{name} must be on device {like.device} to match, got {value.device}"
        )


def finite_tensor(name: str, value: torch.Tensor) -> torch.Tensor:
    """Raise a ``ValueError`` if ``value`` holds a NaN or an infinity.

    Called before every matrix decomposition: LAPACK is not defined on
    non-finite input (float32 NaN can crash the interpreter), and a diverged
    model hands exactly such matrices to the analysis functions.
    """
    if not bool(torch.isfinite(value).all()):
        bad = int((~torch.isfinite(value)).sum())
        raise ValueError(
            f"{name} must be finite, got {bad} NaN or infinite entr"
            f"{'y' if bad == 1 else 'ies'} of {value.numel()} (a diverged model?)"
        )
    return value


def nonempty_batch(name: str, batch: int) -> None:
    """Raise a ``ValueError`` for a batch of zero sequences.

    Every path of the package (the loop, the fast path, the baselines,
    :mod:`rhn.gradflow`) refuses ``B = 0`` the same way: a mean over an empty
    batch has no meaning, and an empty result would hide the mistake.
    """
    if batch == 0:
        raise ValueError(f"{name} must hold at least one sequence, got batch size 0")


def device(name: str, value: object) -> torch.device | None:
    """Return ``value`` as a ``torch.device`` (``None`` stays ``None``).

    Strings are case-insensitive (``"CPU"`` is ``"cpu"``), as every other
    name in the package.
    """
    if value is None or isinstance(value, torch.device):
        return value
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a torch.device or a string such as 'cpu' or "
            f"'cuda:0', got {type(value).__name__} {value!r}"
        )
    try:
        return torch.device(value.strip().lower())
    except (RuntimeError, ValueError) as err:
        raise ValueError(
            f"{name} must be a device torch knows, such as 'cpu', 'cuda', "
            f"'cuda:1' or 'mps', got {value!r}"
        ) from err


def float_dtype(name: str, value: object) -> torch.dtype | None:
    """Return ``value`` if it is ``None`` or a floating-point ``torch.dtype``."""
    if value is None:
        return None
    if not isinstance(value, torch.dtype) or not value.is_floating_point:
        raise TypeError(
            f"{name} must be a floating-point torch.dtype such as torch.float32 "
            f"or torch.float64, got {value!r}"
        )
    return value


def representable(name: str, value: float, dtype: torch.dtype | None) -> float:
    """Raise a ``ValueError`` if ``value`` overflows ``dtype`` (default dtype if None).

    A float such as ``1e39`` is finite in Python but infinite in float32.
    """
    dtype = dtype or torch.get_default_dtype()
    limit = torch.finfo(dtype).max
    if abs(value) > limit:
        raise ValueError(
            f"{name} must fit in the parameters' dtype {dtype} (|{name}| <= "
            f"{limit:.4g}), got {value}"
        )
    return value


# torch.Generator keeps only the low 32 bits of a seed for its Mersenne
# Twister on the CPU: seeds that differ by a multiple of 2**32 give the same
# numbers. Seeds are therefore limited to [0, 2**32).
SEED_LIMIT = 2**32


def seed(name: str, value: object, limit: int = SEED_LIMIT) -> int:
    """Return ``value`` if it is an int in ``[0, limit)``; raise otherwise."""
    value = positive_int(name, value, minimum=0)
    if value >= limit:
        raise ValueError(
            f"{name} must be an int in [0, {limit}) (larger seeds wrap around and "
            f"repeat the data of a smaller one), got {value}"
        )
    return value


def factory(where: object, dtype: object) -> dict[str, object]:
    """Checked ``device=`` (``where``) and ``dtype=`` keywords for parameters."""
    return {"device": device("device", where), "dtype": float_dtype("dtype", dtype)}


def init_scale(value: object, dtype: torch.dtype | None) -> float | None:
    """Return ``value`` if it is ``None`` or a positive float that fits ``dtype``."""
    if value is None:
        return None
    value = real("init_scale", value)
    if value <= 0:
        raise ValueError(f"init_scale must be > 0 or None, got {value}")
    return representable("init_scale", value, dtype)
