r"""How far gradients travel: gradient norm versus time lag, and versus depth.

For a recurrent model run over ``T`` steps, write :math:`s^{[t]}` for the state
after step :math:`t = 1, \dots, T` and :math:`s^{[0]}` for the initial state
(the book's notation), so :math:`s^{[t-1]}` is the state *entering* step
:math:`t`. For a scalar loss :math:`\mathcal{L}` the gradient with respect to
the state :math:`s^{[T-n]}`, ``n`` steps before the end (the lag
:math:`n = 1, \dots, T`; lag 1 is the state entering the last step, lag ``T``
the initial state), is, by the chain rule,

.. math::
    u_n = \nabla_{s^{[T-n]}} \mathcal{L}
    = \sum_{t = T-n}^{T} J^{[T-n+1]\top} \cdots J^{[t-1]\top} J^{[t]\top}
      \nabla_{y^{[t]}} \mathcal{L},
    \qquad J^{[t]} = \frac{\partial s^{[t]}}{\partial s^{[t-1]}},

where :math:`y^{[t]}` is the output of step ``t`` (the state itself, so the
term :math:`t = T-n` has an empty product and is absent for the initial
state) and ``J`` is the temporal Jacobian in numerator layout (``J[i, j] = d
s_i^[t] / d s_j^[t-1]``). With a loss on the final output only, the sum has
one term and :math:`u_n = J^{[T-n+1]\top} \cdots J^{[T]\top}\,
\nabla_{y^{[T]}} \mathcal{L}`, a product of ``n`` transposed Jacobians, as in
the book: lag ``n`` crosses ``n`` steps. (In code, with 0-based indices,
``output[t]`` is :math:`y^{[t+1]}`.)

:func:`gradient_norms` measures :math:`\lVert u_n \rVert` for every lag with
autograd, or by multiplying the analytic Jacobians of :mod:`rhn.analysis`;
:func:`factor_per_step` reads the factor per step between two lags of such
a curve; :func:`layer_gradient_norms` is the feed-forward analogue (gradient norm at
the input of every layer of a deep stack, e.g. of :class:`rhn.Highway`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from . import _checks, analysis
from .baselines import GRU, LSTM, RNN
from .cells import DTRNN, RHN, DTRNNCell, RHNCell

__all__ = [
    "factor_per_step",
    "gradient_norms",
    "layer_gradient_norms",
    "micro_layer_gradient_norms",
    "projection",
]

_MODELS = (RHN, DTRNN, RNN, LSTM, GRU)


def projection(
    size: int,
    seed: int = 0,
    *,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
) -> torch.Tensor:
    r"""The fixed random unit vector ``v`` of the default loss ``sum_b <v, y_b>``.

    Drawn from a private generator seeded with ``seed`` (the global random
    state is untouched), in float64 and then cast, so the same ``seed`` gives
    the same direction on every device and dtype.

    Args:
        size: length of the vector (the hidden size ``H``).
        seed: seed of the generator (default 0).
        device, dtype: where and in what precision to return it (default:
            the CPU and the default dtype).

    Returns:
        A tensor of shape ``(size,)`` with Euclidean norm 1.
    """
    size = _checks.positive_int("size", size)
    seed = _checks.seed("seed", seed)
    device = _checks.device("device", device)
    dtype = _checks.float_dtype("dtype", dtype) or torch.get_default_dtype()
    gen = torch.Generator().manual_seed(seed)
    v = torch.randn(size, generator=gen, dtype=torch.float64)
    return (v / v.norm()).to(device=device, dtype=dtype)


def _reduce(norms: torch.Tensor, reduction: str) -> torch.Tensor:
    """``norms`` is ``(L, B)``; average over the batch unless asked not to."""
    return norms.mean(dim=1) if reduction == "mean" else norms


def _vector_norms(g: torch.Tensor, ord: float) -> torch.Tensor:
    """Norms of ``g`` along its last dimension, safe from underflow and overflow.

    ``torch.linalg.vector_norm`` raises every entry to the power ``ord`` in
    the tensor's own dtype, so a vanished gradient of ``1e-25`` in float32
    (or ``1e-170`` in float64) squares to zero and its norm reads 0, and a
    large one overflows to ``inf``. Here each row is divided by its largest
    magnitude first (the norm is homogeneous: ``||g|| = m ||g / m||``) and the
    sum is accumulated in float64 (float32 on MPS, which has no float64).
    The result stays in that accumulation dtype; callers cast it back after
    averaging over the batch.
    """
    acc = torch.float32 if g.device.type == "mps" else torch.float64
    g = g.to(acc)
    if g.shape[-1] == 0:  # an empty vector has norm 0 (amax would raise)
        return g.new_zeros(g.shape[:-1])
    scale = g.abs().amax(dim=-1, keepdim=True)
    scale = torch.where(torch.isfinite(scale) & (scale > 0), scale, 1.0)
    return torch.linalg.vector_norm(g / scale, ord=ord, dim=-1) * scale.squeeze(-1)


def _default_loss(output: torch.Tensor, seed: int) -> torch.Tensor:
    """``sum_b <v, y_b^[T]>``: a fixed random direction of the final output."""
    v = projection(output.shape[-1], seed, device=output.device, dtype=output.dtype)
    return (output[-1] @ v).sum()


def gradient_norms(
    model: nn.Module,
    x: torch.Tensor,
    *,
    state: Any = None,
    loss_fn: Callable[[torch.Tensor], torch.Tensor] | None = None,
    method: str = "autograd",
    lstm_state: str = "h",
    layer: int | None = None,
    ord: float = 2.0,
    reduction: str = "mean",
    seed: int = 0,
) -> torch.Tensor:
    r"""Norm of the loss gradient with respect to the state ``n`` steps back.

    Runs ``model`` over ``x`` one time step at a time and returns, for every
    lag ``n = 1, ..., T``, the norm of :math:`u_n = \partial \mathcal{L} /
    \partial s^{[T-n]}` as entry ``n - 1``: entry 0 (lag 1) is the state
    *entering the last step*, entry ``T - 1`` (lag ``T``) the initial state
    (see the module docstring for the chain rule). Norms are taken per sample
    and then averaged over the batch; each gradient is divided by its largest
    entry and the sum accumulated in float64 before the result is cast back
    to the model's dtype, so a gradient that has vanished to ``1e-30`` in
    float32 reads ``1e-30``, not the 0 its underflowing squares would give.

    The default loss is :math:`\mathcal{L} = \sum_b \langle v, y_b^{[T]}
    \rangle` with :math:`v` a fixed random unit vector (:func:`projection`),
    so :math:`\lVert \partial\mathcal{L}/\partial y_b^{[T]} \rVert = 1` and
    the curve starts from a common scale for every model. ``loss_fn`` replaces
    it, e.g. to put a loss on every time step.

    What is measured, for each kind of model:

    - the output at step ``t`` is the state of the last layer after that step
      (``h`` for an LSTM): that is what every model of the package returns in
      evaluation mode, and it makes :math:`u_n` the *total* derivative, including
      a loss term on the output at that very step;
    - for ``num_layers > 1`` the state is that of all layers together, an
      ``(N * H)`` vector per sample (``layer=l`` keeps layer ``l`` only);
    - for an LSTM the state is the pair ``(h, c)``; ``lstm_state`` chooses the
      gradient with respect to ``h`` (default), ``c`` or both (``"hc"``).

    The model is put in evaluation mode for the measurement (dropout masks
    would otherwise be redrawn at every step) and its mode is restored
    afterwards. Parameter gradients (``.grad``) are left untouched, and the
    call works under ``torch.no_grad()``.

    Args:
        model: an :class:`rhn.RHN`, :class:`rhn.DTRNN`, :class:`rhn.RNN`,
            :class:`rhn.LSTM` or :class:`rhn.GRU`, at any depth and number of
            layers, on any device, freshly built or trained.
        x: input sequence ``(T, B, I)`` (``(B, T, I)`` if the model is
            ``batch_first``) or unbatched ``(T, I)``, on the model's device
            and in its dtype.
        state: initial state as the model takes it (``(N, B, H)``, a pair for
            an LSTM). Default ``None``: zeros.
        loss_fn: maps the output sequence, time-first ``(T, B, H)``, to a
            scalar. For per-sample norms to mean anything it should be a sum
            (or mean) of per-sample terms. Default ``None``: the projection
            loss above.
        method: ``"autograd"`` (default) differentiates through the model;
            ``"jacobian"`` multiplies the analytic temporal Jacobians of
            :mod:`rhn.analysis` step by step (single-layer models only). The
            two agree to rounding error.
        lstm_state: ``"h"`` (default), ``"c"`` or ``"hc"`` for an LSTM;
            ignored for the other models.
        layer: which layer's state to measure; default ``None``: all layers.
        ord: order of the vector norm (default 2), as in
            ``torch.linalg.vector_norm``.
        reduction: ``"mean"`` (default) averages over the batch, ``"none"``
            returns every sample.
        seed: seed of the projection of the default loss (default 0).

    Returns:
        A tensor of shape ``(T,)`` (``(T, B)`` with ``reduction="none"``) on
        the model's device, detached: entry ``n - 1`` is the norm at lag ``n``.

    Example::

        >>> model = rhn.RHN(2, 16, depth=3)
        >>> x = torch.randn(50, 8, 2)               # (T, B, I)
        >>> norms = gradient_norms(model, x)        # (50,), lag 1 first
    """
    if not isinstance(model, _MODELS):
        raise TypeError(
            "model must be an rhn.RHN, rhn.DTRNN, rhn.RNN, rhn.LSTM or rhn.GRU, "
            f"got {type(model).__name__}"
        )
    method = _checks.choice("method", method, ["autograd", "jacobian"])
    lstm_state = _checks.choice("lstm_state", lstm_state, ["h", "c", "hc"])
    reduction = _checks.choice("reduction", reduction, ["mean", "none"])
    ord = _checks.real("ord", ord)
    if ord <= 0:
        raise ValueError(f"ord must be > 0, got {ord}")
    seed = _checks.seed("seed", seed)
    if loss_fn is not None and not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    num_layers = model.num_layers
    if layer is not None:
        layer = _checks.positive_int("layer", layer, minimum=0)
        if layer >= num_layers:
            raise ValueError(
                f"layer must be in [0, {num_layers - 1}] for a model with "
                f"num_layers={num_layers}, got {layer}"
            )
    x_tb, unbatched = _checks.sequence(x, model.input_size, model.batch_first)
    param = next(model.parameters())
    _checks.same_dtype("x", x_tb, param)
    if state is not None and unbatched:
        # the steps below are batched (B = 1), so the shape is checked here,
        # where an error can still name the shape the caller passed
        parts = (
            [(f"state[{i}]", p) for i, p in enumerate(state)]
            if isinstance(model, LSTM) and isinstance(state, (tuple, list))
            else [("state", state)]
        )
        want = (num_layers, model.hidden_size)
        for label, part in parts:
            if isinstance(part, torch.Tensor) and tuple(part.shape) != want:
                raise ValueError(
                    f"{label} must have shape (N, H) = {want} for this unbatched "
                    f"input, got {_checks.shape_str(part.shape)}"
                )
        if isinstance(model, LSTM) and isinstance(state, (tuple, list)):
            state = tuple(
                p.unsqueeze(1) if isinstance(p, torch.Tensor) else p for p in state
            )
        elif isinstance(state, torch.Tensor):
            state = state.unsqueeze(1)
    if method == "jacobian" and num_layers != 1:
        raise ValueError(
            "method='jacobian' supports single-layer models only (the analytic "
            f"Jacobians are per cell), got num_layers={num_layers}; use "
            "method='autograd'"
        )
    was_training = model.training
    model.eval()
    try:
        # cuDNN's RNN kernels refuse to backpropagate in eval mode: on CUDA the
        # torch baselines run their native (non-cuDNN) kernels instead
        with torch.enable_grad(), torch.backends.cudnn.flags(enabled=False):
            if method == "autograd":
                grads = _autograd_state_grads(model, x_tb, state, loss_fn, seed)
            else:
                grads = _jacobian_state_grads(model, x_tb, state, loss_fn, seed)
    finally:
        model.train(was_training)
    # grads: T tensors in time order, each (N, B, H) or an LSTM pair
    lags = []
    for g in reversed(grads):
        if isinstance(model, LSTM):
            g = {"h": g[0], "c": g[1], "hc": torch.cat(g, dim=-1)}[lstm_state]
        if layer is not None:
            g = g[layer : layer + 1]
        flat = g.transpose(0, 1).reshape(g.shape[1], -1)  # (B, N*H)
        lags.append(_vector_norms(flat, ord))
    norms = _reduce(torch.stack(lags), reduction)  # (T,) or (T, B)
    return norms.to(x_tb.dtype).detach()


def factor_per_step(curve: torch.Tensor | Sequence[float], n0: int, n1: int) -> float:
    r"""The factor per step :math:`q` of a gradient between lags ``n0 < n1``.

    :math:`q = (\lVert u_{n_1} \rVert / \lVert u_{n_0} \rVert)^{1/(n_1 - n_0)}`,
    the geometric mean of the step-to-step ratios (on a log scale, the slope
    between the two points). ``curve`` is :func:`gradient_norms`' result,
    whose entry ``n - 1`` is lag ``n``; this function takes the lags
    themselves, so ``factor_per_step(curve, 6, 41)`` reads lags 6 and 41
    (entries 5 and 40).

    Args:
        curve: gradient norms, entry ``n - 1`` for lag ``n``: a 1-D tensor,
            NumPy array or sequence of numbers.
        n0, n1: the two lags, ``1 <= n0 < n1 <= len(curve)``.

    Returns:
        ``q`` as a Python float: below 1 where the gradient shrinks going back,
        0 where the norm at lag ``n1`` is 0 (an underflow).
    """
    try:  # a tensor of any dtype or device, a NumPy array or a list
        if isinstance(curve, torch.Tensor):
            values = curve.detach().to("cpu", torch.float64)
        else:
            values = torch.as_tensor(curve, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(
            "curve must be a 1-D tensor, array or sequence of gradient "
            f"norms, got {type(curve).__name__} {curve!r:.60}"
        ) from None
    if values.dim() != 1:
        raise ValueError(
            "curve must be a 1-D tensor of gradient norms (one per lag), got "
            f"shape {_checks.shape_str(values.shape)}"
        )
    n0 = _checks.positive_int("n0", n0)
    n1 = _checks.positive_int("n1", n1)
    if not n0 < n1 <= len(values):
        raise ValueError(
            f"lags must satisfy 1 <= n0 < n1 <= len(curve) = {len(values)}, "
            f"got n0={n0}, n1={n1}"
        )
    start, end = values[n0 - 1].item(), values[n1 - 1].item()
    if not 0 < start < math.inf:
        raise ValueError(
            f"curve at lag n0={n0} must be a positive finite norm to divide "
            f"by, got {start}"
        )
    if not 0 <= end < math.inf:
        raise ValueError(f"curve at lag n1={n1} must be a finite norm >= 0, got {end}")
    return (end / start) ** (1 / (n1 - n0))


def _initial_state(model: nn.Module, x: torch.Tensor, state: Any) -> Any:
    """A fresh leaf copy of the initial state (zeros by default)."""
    N, B, H = model.num_layers, x.shape[1], model.hidden_size
    if state is None:
        zeros = x.new_zeros(N, B, H)
        state = (zeros, zeros.clone()) if isinstance(model, LSTM) else zeros
    if isinstance(model, LSTM) and isinstance(state, (tuple, list)):
        return tuple(
            p.detach().clone().requires_grad_(True)
            if isinstance(p, torch.Tensor)
            else p
            for p in state
        )
    if isinstance(state, torch.Tensor):
        return state.detach().clone().requires_grad_(True)
    return state  # let the model raise its own, readable error


def _step_input(model: nn.Module, x: torch.Tensor, t: int) -> torch.Tensor:
    """Time step ``t`` of the time-first ``x`` in the layout the model takes."""
    x_t = x[t : t + 1]  # (1, B, I)
    return x_t.transpose(0, 1) if model.batch_first else x_t


def _last_output(model: nn.Module, state: Any) -> torch.Tensor:
    """The output of a step: the last layer's state (``h`` for an LSTM)."""
    return (state[0] if isinstance(model, LSTM) else state)[-1]  # (B, H)


def _autograd_state_grads(
    model: nn.Module,
    x: torch.Tensor,
    state: Any,
    loss_fn: Callable[[torch.Tensor], torch.Tensor] | None,
    seed: int,
) -> list[Any]:
    """Gradients of the loss w.r.t. the state entering each step, by autograd."""
    s = _initial_state(model, x, state)
    entering, outputs = [], []
    for t in range(x.shape[0]):
        entering.append(s)
        _, s = model(_step_input(model, x, t), s)
        # every later use of the step's state (next step, loss) goes through s
        outputs.append(_last_output(model, s))
    output = torch.stack(outputs)  # (T, B, H)
    loss = _default_loss(output, seed) if loss_fn is None else loss_fn(output)
    loss = _scalar_loss(loss)
    flat = [p for s in entering for p in (s if isinstance(s, tuple) else (s,))]
    grads = torch.autograd.grad(loss, flat, allow_unused=True)
    grads = [
        torch.zeros_like(p) if g is None else g
        for p, g in zip(flat, grads, strict=True)
    ]
    if isinstance(model, LSTM):
        return [(grads[2 * i], grads[2 * i + 1]) for i in range(len(entering))]
    return grads


def _scalar_loss(loss: object) -> torch.Tensor:
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        shape = (
            _checks.shape_str(loss.shape)
            if isinstance(loss, torch.Tensor)
            else type(loss).__name__
        )
        raise ValueError(f"loss_fn must return a scalar tensor, got {shape}")
    return loss.reshape(())


def _jacobian_state_grads(
    model: nn.Module,
    x: torch.Tensor,
    state: Any,
    loss_fn: Callable[[torch.Tensor], torch.Tensor] | None,
    seed: int,
) -> list[Any]:
    r"""The same gradients as a backward product of analytic temporal Jacobians.

    Runs forward without autograd, takes :math:`\partial\mathcal{L}/\partial
    y^{[t]}` from the loss alone, and accumulates backwards, from
    :math:`g = \partial\mathcal{L}/\partial y^{[T]}`,
    :math:`g \leftarrow g\, J^{[t]} + \partial\mathcal{L}/\partial y^{[t-1]}`
    with the Jacobians of :mod:`rhn.analysis` (single-layer models).
    """
    is_lstm = isinstance(model, LSTM)
    s = _initial_state(model, x, state)
    entering, outputs = [], []
    with torch.no_grad():
        for t in range(x.shape[0]):
            entering.append(s)
            _, s = model(_step_input(model, x, t), s)
            outputs.append(_last_output(model, s))
    output = torch.stack(outputs).requires_grad_(True)  # (T, B, H) leaf
    loss = _default_loss(output, seed) if loss_fn is None else loss_fn(output)
    (direct,) = torch.autograd.grad(_scalar_loss(loss), [output], allow_unused=True)
    if direct is None:
        direct = torch.zeros_like(output)
    direct = direct.detach()
    if is_lstm:  # the output is h: no direct gradient reaches c
        direct = torch.cat([direct, torch.zeros_like(direct)], dim=-1)  # (T, B, 2H)
    g = direct[-1]  # dL/ds^[T-1], (B, H) or (B, 2H)
    grads: list[Any] = [None] * x.shape[0]
    for t in range(x.shape[0] - 1, -1, -1):
        s_in, x_t = entering[t], x[t]
        if isinstance(model, RHN):
            J = analysis.temporal_jacobian(model.cells[0], x_t, s_in[0].detach())
        elif isinstance(model, DTRNN):
            J = analysis.dtrnn_temporal_jacobian(model.cells[0], x_t, s_in[0].detach())
        elif isinstance(model, RNN):
            J = analysis.rnn_temporal_jacobian(model, x_t, s_in[0].detach())
        elif isinstance(model, GRU):
            J = analysis.gru_temporal_jacobian(model, x_t, s_in[0].detach())
        else:
            h, c = (p[0].detach() for p in s_in)
            J = analysis.lstm_temporal_jacobian(model, x_t, h, c)
        g = torch.einsum("bi,bij->bj", g, J.detach())  # g^T J: back through step t
        if t > 0:  # the state entering step t is also the output of step t - 1
            g = g + direct[t - 1]
        if is_lstm:
            grads[t] = tuple(part.unsqueeze(0) for part in g.chunk(2, dim=-1))
        else:
            grads[t] = g.unsqueeze(0)  # (1, B, H)
    return grads


def layer_gradient_norms(
    layers: Sequence[nn.Module],
    x: torch.Tensor,
    *,
    loss_fn: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ord: float = 2.0,
    reduction: str = "mean",
    seed: int = 0,
) -> torch.Tensor:
    r"""Norm of the loss gradient at the input of every layer of a deep stack.

    The feed-forward analogue of :func:`gradient_norms`: depth plays the role
    of time. With :math:`z_0 = x` and :math:`z_{l+1} = f_l(z_l)` for the ``L``
    layers, entry ``l`` is the per-sample norm of
    :math:`\partial \mathcal{L} / \partial z_l`, the gradient arriving at the
    input of layer ``l``, averaged over the batch (index 0 is the network's
    input, index ``L - 1`` the input of the last layer).

    Args:
        layers: the layers, applied in order (an ``nn.Sequential`` works).
        x: input batch ``(B, F)``.
        loss_fn: maps the final output ``(B, F_out)`` to a scalar (for
            example a classifier head followed by a summed cross-entropy).
            Default ``None``: :math:`\sum_b \langle v, z_{L,b} \rangle` with a
            fixed random unit vector :math:`v` (:func:`projection`).
        ord, reduction, seed: as in :func:`gradient_norms`.

    Returns:
        A detached tensor of shape ``(L,)`` (``(L, B)`` with
        ``reduction="none"``).
    """
    layers = list(layers)
    if not layers or not all(isinstance(m, nn.Module) for m in layers):
        raise TypeError("layers must be a non-empty sequence of nn.Module")
    x = _checks.float_tensor("x", x)
    if x.dim() != 2:
        raise ValueError(f"x must have shape (B, F), got {_checks.shape_str(x.shape)}")
    _checks.nonempty_batch("x", x.shape[0])
    if loss_fn is not None and not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    ord = _checks.real("ord", ord)
    if ord <= 0:
        raise ValueError(f"ord must be > 0, got {ord}")
    reduction = _checks.choice("reduction", reduction, ["mean", "none"])
    seed = _checks.seed("seed", seed)
    with torch.enable_grad():
        z = x.detach().clone().requires_grad_(True)
        inputs = []
        for f in layers:
            inputs.append(z)
            z = f(z)
        if loss_fn is None:
            v = projection(z.shape[-1], seed, device=z.device, dtype=z.dtype)
            loss = (z @ v).sum()
        else:
            loss = _scalar_loss(loss_fn(z))
        grads = torch.autograd.grad(loss, inputs, allow_unused=True)
    norms = torch.stack(
        [
            _vector_norms(torch.zeros_like(z_in) if g is None else g, ord)
            for z_in, g in zip(inputs, grads, strict=True)
        ]
    )  # (L, B)
    return _reduce(norms, reduction).to(x.dtype).detach()


def _micro_states(
    cell: RHNCell | DTRNNCell, x_proj: torch.Tensor, s: torch.Tensor
) -> list[torch.Tensor]:
    """The states after each micro-layer of one step, ``s_0, ..., s_{D-1}``.

    The same arithmetic as the cells' ``step`` methods, kept apart so that
    every intermediate state is a node autograd can differentiate with
    respect to (a test checks that the last one equals ``cell.step``).
    """
    states = []
    for k in range(cell.depth):
        x_k = x_proj if k == 0 else None
        if isinstance(cell, RHNCell):
            h, t, c = cell.gate_values(k, s, x_k)
            s = h * t + s * c
        else:
            a = torch.nn.functional.linear(
                s, cell.recurrent_weight(k), cell.recurrent_bias(k)
            )
            s = torch.tanh(a if x_k is None else a + x_k)
        states.append(s)
    return states


def micro_layer_gradient_norms(
    model: RHN | DTRNN,
    x: torch.Tensor,
    *,
    loss_fn: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ord: float = 2.0,
    reduction: str = "mean",
    seed: int = 0,
) -> torch.Tensor:
    r"""Gradient norm at every micro-layer of every time step: the ``D x T`` path.

    For a deep-transition model (:class:`rhn.RHN` or :class:`rhn.DTRNN`, one
    layer) entry ``[t - 1, k]`` is the norm of :math:`\partial \mathcal{L} /
    \partial s_k^{[t]}`, the gradient with respect to the state after
    micro-layer ``k`` of step :math:`t = 1, \dots, T` (row ``t - 1`` in
    0-based indexing). Between that state and the output of the last step
    lie :math:`(T - t) D + (D - 1 - k)` micro-layers, so read row by row the
    map is the gradient along the whole credit-assignment path of length
    :math:`D \times T`. Column ``D - 1`` is the state after each step: row
    ``i`` of it equals :func:`gradient_norms` at lag ``T - 1 - i`` (its entry
    ``T - 2 - i``).

    Args:
        model: a single-layer :class:`rhn.RHN` or :class:`rhn.DTRNN`.
        x: input ``(T, B, I)`` (``(B, T, I)`` if ``batch_first``).
        loss_fn, ord, reduction, seed: as in :func:`gradient_norms` (the
            default loss is a fixed random projection of the last output).

    Returns:
        A detached tensor ``(T, D)`` (``(T, D, B)`` with ``reduction="none"``):
        time steps in rows (step 1 first) and micro-layer ``k`` in columns.
    """
    if not isinstance(model, (RHN, DTRNN)):
        raise TypeError(
            f"model must be an rhn.RHN or rhn.DTRNN, got {type(model).__name__}"
        )
    if model.num_layers != 1:
        raise ValueError(
            f"model must have num_layers=1 (one cell), got {model.num_layers}"
        )
    if loss_fn is not None and not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    reduction = _checks.choice("reduction", reduction, ["mean", "none"])
    ord = _checks.real("ord", ord)
    if ord <= 0:
        raise ValueError(f"ord must be > 0, got {ord}")
    seed = _checks.positive_int("seed", seed, minimum=0)
    x_tb, _ = _checks.sequence(x, model.input_size, model.batch_first)
    cell = model.cells[0]
    _checks.same_dtype("x", x_tb, cell.weight_ih)
    was_training = model.training
    model.eval()
    try:
        with torch.enable_grad():
            s = x_tb.new_zeros(x_tb.shape[1], model.hidden_size)  # (B, H)
            states, outputs = [], []
            x_proj = torch.nn.functional.linear(x_tb, cell.weight_ih)  # (T, B, G*H)
            for x_t in x_proj.unbind(0):
                step_states = _micro_states(cell, x_t, s)
                states.extend(step_states)
                s = step_states[-1]
                outputs.append(s)
            output = torch.stack(outputs)  # (T, B, H)
            loss = _default_loss(output, seed) if loss_fn is None else loss_fn(output)
            grads = torch.autograd.grad(_scalar_loss(loss), states, allow_unused=True)
    finally:
        model.train(was_training)
    norms = torch.stack(
        [
            _vector_norms(torch.zeros_like(st) if g is None else g, ord)
            for st, g in zip(states, grads, strict=True)
        ]
    )  # (T * D, B)
    norms = norms.reshape(x_tb.shape[0], cell.depth, -1)  # (T, D, B)
    norms = norms.mean(dim=-1) if reduction == "mean" else norms
    return norms.to(x_tb.dtype).detach()
