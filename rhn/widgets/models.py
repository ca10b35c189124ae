r"""The small models behind the interactive figures, and their numbers.

Python builds every model here (seeded weights, inputs, ``H`` of 12 to 16,
float64) and hands its parameters to the browser as plain lists of floats
(``*_data`` functions); the browser (``js/numerics.js``) runs the steps, the
Jacobians, the discs, the eigenvalues and the gradients itself. The reference
functions (:func:`example_rnn_jacobian`, :func:`example_rhn_jacobian`,
:func:`gradient_flow_curves`) compute the same numbers with
:mod:`rhn.analysis` and :mod:`rhn.gradflow`; the chapters assert their
statements on them, and the browser tests compare the page with them.

A float64 number survives the trip exactly: Python writes the shortest
decimal that reads back as the same double (``repr``), and so does
JavaScript's ``JSON.stringify``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch

from .. import _checks

__all__ = [
    "BIAS_GRID",
    "example_rnn_jacobian",
    "example_rhn_jacobian",
    "gradient_flow_curves",
    "rnn_discs_data",
    "rhn_jacobian_data",
    "gradient_flow_data",
]

INPUT_SIZE = 4  # input size of the example models
WARMUP = 20  # steps run on random inputs to reach a typical state
# the weight scale g (notation page) of the package's initialisation
# U(-1/sqrt(H), 1/sqrt(H)): its standard deviation 1/sqrt(3 H) times sqrt(H).
# The RHN figure's `scale` multiplies those weights: its g is scale * G_PACKAGE.
G_PACKAGE = 1 / math.sqrt(3)

BIAS_GRID = (-10.0, -4.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 10.0)
"""Transform-gate biases at which the chapters check their statements."""


def _seed(seed: object) -> int:
    # torch accepts seeds in [0, 2**64); a larger one would wrap silently
    seed = _checks.positive_int("seed", seed, minimum=0)
    if seed >= 2**63:
        raise ValueError(f"seed must be an int in [0, 2**63), got {seed}")
    return seed


def _ylim(ylim: object) -> tuple[float, float]:
    if not isinstance(ylim, (tuple, list)) or len(ylim) != 2:
        raise TypeError(
            f"ylim must be a pair (low, high) of positive numbers, got {ylim!r}"
        )
    lo, hi = (_checks.real("ylim", v) for v in ylim)
    if not 0 < lo < hi:
        raise ValueError(
            f"ylim must be positive with low < high (a log axis), got {tuple(ylim)}"
        )
    return lo, hi


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _flat(t: torch.Tensor) -> list[float]:
    """A float64 tensor as a flat list of Python floats (row-major, exact)."""
    return t.detach().to(torch.float64).reshape(-1).tolist()


# ---------------------------------------------------------------------------
# chapter 4: tanh RNN
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _base_rnn(hidden_size: int, seed: int) -> tuple[torch.Tensor, ...]:
    """Seeded RNN input weights, ``R0`` (entries N(0, 1/H)) and inputs; float64."""
    g = _generator(seed)
    H = hidden_size
    w_ih = torch.randn(H, INPUT_SIZE, generator=g, dtype=torch.float64)
    w_ih = w_ih / math.sqrt(INPUT_SIZE)
    w_hh = torch.randn(H, H, generator=g, dtype=torch.float64) / math.sqrt(H)
    xs = torch.randn(WARMUP + 1, INPUT_SIZE, generator=g, dtype=torch.float64)
    return w_ih, w_hh, xs


def example_rnn_jacobian(
    *,
    scale: float = 1.0,
    init: str = "gaussian",
    hidden_size: int = 12,
    seed: int = 0,
) -> torch.Tensor:
    r"""The temporal Jacobian of the chapter 4 figure, ``(H, H)`` float64.

    A tanh :class:`rhn.RNN` with recurrent matrix ``scale * R0`` (``R0`` a
    fixed Gaussian matrix with entries :math:`\mathcal{N}(0, 1/H)`, or the
    identity), zero biases, runs 20 steps on seeded random inputs; the result
    is :func:`rhn.analysis.rnn_temporal_jacobian` at the next step.
    """
    from .. import analysis
    from ..baselines import RNN

    scale = _checks.real("scale", scale)
    init = _checks.choice("init", init, ["gaussian", "identity"])
    H = _checks.positive_int("hidden_size", hidden_size)
    w_ih, w_hh, xs = _base_rnn(H, _seed(seed))
    R = w_hh if init == "gaussian" else torch.eye(H, dtype=torch.float64)
    with torch.random.fork_rng(devices=[]):  # leave the caller's random state alone
        rnn = RNN(INPUT_SIZE, H, dtype=torch.float64)
    with torch.no_grad():
        rnn.rnn.weight_ih_l0.copy_(w_ih)
        rnn.rnn.weight_hh_l0.copy_(scale * R)
        rnn.rnn.bias_ih_l0.zero_()
        rnn.rnn.bias_hh_l0.zero_()
        _, s = rnn(xs[:-1].unsqueeze(1))  # (N=1, B=1, H)
        return analysis.rnn_temporal_jacobian(rnn, xs[-1], s[0, 0])  # (H, H)


def rnn_discs_data(*, hidden_size: int = 12, seed: int = 0) -> dict[str, Any]:
    """What the browser needs to redo :func:`example_rnn_jacobian` at any scale.

    Returns:
        ``{"hidden_size", "input_size", "warmup", "w_ih", "r0", "xs"}``; the
        matrices flat and row-major.
    """
    H = _checks.positive_int("hidden_size", hidden_size)
    w_ih, w_hh, xs = _base_rnn(H, _seed(seed))
    return {
        "hidden_size": H,
        "input_size": INPUT_SIZE,
        "warmup": WARMUP,
        "w_ih": _flat(w_ih),
        "r0": _flat(w_hh),
        "xs": _flat(xs),
    }


# ---------------------------------------------------------------------------
# chapter 7: RHN temporal Jacobian
# ---------------------------------------------------------------------------


def _rhn_cell(
    depth: int, coupled: bool, hidden_size: int, seed: int, transform_bias: float
) -> Any:
    from ..cells import RHNCell

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return RHNCell(
            INPUT_SIZE,
            hidden_size,
            depth,
            coupled=coupled,
            transform_bias=transform_bias,
            dtype=torch.float64,
        )


def _rhn_inputs(seed: int) -> torch.Tensor:
    g = _generator(seed + 1)
    return torch.randn(WARMUP + 1, INPUT_SIZE, generator=g, dtype=torch.float64)


@functools.lru_cache(maxsize=64)
def _rhn_jacobian(
    transform_bias: float,
    scale: float,
    depth: int,
    coupled: bool,
    hidden_size: int,
    seed: int,
) -> torch.Tensor:
    from .. import analysis

    cell = _rhn_cell(depth, coupled, hidden_size, seed, transform_bias)
    xs = _rhn_inputs(seed)
    with torch.no_grad():
        for k in range(depth):
            cell.recurrent_weight(k).mul_(scale)
        s = torch.zeros(hidden_size, dtype=torch.float64)
        for x in xs[:-1]:
            s = cell(x, s)
        return analysis.temporal_jacobian(cell, xs[-1], s)  # (H, H)


def example_rhn_jacobian(
    *,
    transform_bias: float = -2.0,
    scale: float = 1.0,
    depth: int = 2,
    coupled: bool = True,
    hidden_size: int = 12,
    seed: int = 0,
) -> torch.Tensor:
    r"""The temporal Jacobian of the chapter 7 figure, ``(H, H)`` float64.

    An :class:`rhn.RHNCell` with the package's initialisation (seeded), its
    recurrent weights multiplied by ``scale`` and its transform-gate biases
    set to ``transform_bias``, runs 20 steps on random inputs;
    the result is :func:`rhn.analysis.temporal_jacobian` at the next step.
    Results are cached.
    """
    b = _checks.real("transform_bias", transform_bias)
    scale = _checks.real("scale", scale)
    D = _checks.positive_int("depth", depth)
    H = _checks.positive_int("hidden_size", hidden_size)
    coupled = _checks.boolean("coupled", coupled)
    return _rhn_jacobian(b, scale, D, coupled, H, _seed(seed)).clone()


def _cell_weights(cell: Any) -> dict[str, Any]:
    return {
        "w_ih": _flat(cell.weight_ih),
        "w_hh": [_flat(cell.recurrent_weight(k)) for k in range(cell.depth)],
    }


def rhn_jacobian_data(
    *, hidden_size: int = 12, seed: int = 0, max_depth: int = 5
) -> dict[str, Any]:
    """What the browser needs to redo :func:`example_rhn_jacobian`.

    The cell of depth ``D`` is the first ``D`` micro-layers of the cell of
    depth ``max_depth`` (the weights are drawn in micro-layer order, and the
    biases are set, not drawn), so one cell per carry-gate kind is sent, with
    transform bias 0: the browser sets the biases and the scale.

    Returns:
        ``{"hidden_size", "input_size", "warmup", "xs", "cells"}`` with
        ``cells = {"coupled": {"w_ih", "w_hh"}, "uncoupled": {...}}``.
    """
    H = _checks.positive_int("hidden_size", hidden_size)
    D = _checks.positive_int("max_depth", max_depth)
    seed = _seed(seed)
    cells = {
        name: _cell_weights(_rhn_cell(D, coupled, H, seed, 0.0))
        for name, coupled in (("coupled", True), ("uncoupled", False))
    }
    return {
        "hidden_size": H,
        "input_size": INPUT_SIZE,
        "warmup": WARMUP,
        "xs": _flat(_rhn_inputs(seed)),
        "cells": cells,
    }


# ---------------------------------------------------------------------------
# chapter 9: gradient norm versus lag
# ---------------------------------------------------------------------------

_BATCH = 2  # sequences in the batch of the gradient-flow figure


def _gradflow_input(steps: int, seed: int) -> torch.Tensor:
    g = _generator(seed + 2)
    return torch.randn(
        steps, _BATCH, INPUT_SIZE, generator=g, dtype=torch.float64
    )  # (T, B, I)


def _rhn_model(transform_bias: float, depth: int, hidden_size: int, seed: int) -> Any:
    from ..cells import RHN

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return RHN(
            INPUT_SIZE,
            hidden_size,
            depth,
            transform_bias=transform_bias,
            dtype=torch.float64,
        )


@functools.lru_cache(maxsize=8)
def _baseline_norms(steps: int, hidden_size: int, seed: int) -> dict[str, np.ndarray]:
    """Gradient norm versus lag of a seeded RNN and LSTM (no gate bias to vary)."""
    from .. import gradflow
    from ..baselines import LSTM, RNN

    x = _gradflow_input(steps, seed)
    out = {}
    for name, cls in (("rnn", RNN), ("lstm", LSTM)):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = cls(INPUT_SIZE, hidden_size, dtype=torch.float64)
        out[name] = gradflow.gradient_norms(model, x).numpy()
    return out


@functools.lru_cache(maxsize=64)
def _rhn_norms(
    transform_bias: float, depth: int, steps: int, hidden_size: int, seed: int
) -> np.ndarray:
    from .. import gradflow

    model = _rhn_model(transform_bias, depth, hidden_size, seed)
    return gradflow.gradient_norms(model, _gradflow_input(steps, seed)).numpy()


def gradient_flow_curves(
    *,
    transform_bias: float = -2.0,
    depth: int = 3,
    steps: int = 40,
    hidden_size: int = 16,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """The curves of the chapter 9 figure, by :func:`rhn.gradflow.gradient_norms`.

    Freshly initialised models (seeded, float64) read the same random batch
    of 2 sequences of ``steps`` steps; the loss is the package's default
    projection loss.

    Returns:
        ``{"rhn": ..., "rnn": ..., "lstm": ...}``, each an array of shape
        ``(steps,)``: the gradient norm at lag ``n`` at index ``n - 1``
        (as :func:`rhn.gradflow.gradient_norms` returns it). Cached.
    """
    b = _checks.real("transform_bias", transform_bias)
    D = _checks.positive_int("depth", depth)
    T = _checks.positive_int("steps", steps, minimum=2)
    H = _checks.positive_int("hidden_size", hidden_size)
    seed = _seed(seed)
    curves = dict(_baseline_norms(T, H, seed))
    curves["rhn"] = _rhn_norms(b, D, T, H, seed)
    return {name: values.copy() for name, values in curves.items()}


def gradient_flow_data(
    *,
    depth: int = 3,
    steps: int = 40,
    hidden_size: int = 16,
    seed: int = 0,
) -> dict[str, Any]:
    """What the browser needs to redo the RHN curve of :func:`gradient_flow_curves`.

    The RNN and LSTM curves do not depend on the slider: they are sent as
    numbers. The RHN is sent with transform bias 0 (its weights do not depend
    on the bias); the browser sets the biases.

    Returns:
        ``{"hidden_size", "input_size", "depth", "steps", "batch", "xs",
        "v", "cell", "baselines"}``: ``xs`` is ``(T, B, I)`` flat, ``v`` the
        unit vector of the loss (:func:`rhn.gradflow.projection`).
    """
    from ..gradflow import projection

    D = _checks.positive_int("depth", depth)
    T = _checks.positive_int("steps", steps, minimum=2)
    H = _checks.positive_int("hidden_size", hidden_size)
    seed = _seed(seed)
    model = _rhn_model(0.0, D, H, seed)
    base = _baseline_norms(T, H, seed)
    return {
        "hidden_size": H,
        "input_size": INPUT_SIZE,
        "depth": D,
        "steps": T,
        "batch": _BATCH,
        "xs": _flat(_gradflow_input(T, seed)),
        "v": _flat(projection(H, 0, dtype=torch.float64)),
        "cell": _cell_weights(model.cells[0]),
        "baselines": {name: [float(v) for v in base[name]] for name in base},
    }
