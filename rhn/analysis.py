r"""Temporal Jacobians of recurrent cells, their Geršgorin discs and spectra.

The *temporal Jacobian* of a recurrent model is the derivative of the state
after one time step with respect to the state before it. Everywhere in this
module it is written in **numerator layout**,

.. math::
    J_{ij} = \frac{\partial s^{[t]}_i}{\partial s^{[t-1]}_j},

so that a perturbation moves as :math:`\delta s^{[t]} = J\, \delta s^{[t-1]}`
and the gradient travels back as :math:`\nabla_{s^{[t-1]}} = J^\top
\nabla_{s^{[t]}}`. The paper (Zilly et al., 2017) writes the transpose,
:math:`A = J^\top`; both have the same eigenvalues and singular values.

Every function accepts an unbatched state ``(H,)`` and returns ``(H, H)``, or
a batch ``(B, H)`` and returns ``(B, H, H)``. The RHN Jacobian is computed from
the analytic formulas (eqs. 10-13 of the paper, generalised to an uncoupled
carry gate and to any recurrence depth); :func:`temporal_jacobian_autograd`
computes the same matrix with ``torch.func`` and is the reference the tests
compare against. Dropout is not part of any Jacobian here: they describe the
cell in evaluation mode. The matrix tools (Geršgorin discs, eigenvalues,
spectral radius, largest singular value) are defined in :mod:`rhn.spectra`
and exported here.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks
from .baselines import GRU, LSTM, RNN
from .cells import DTRNNCell, RHNCell

# the spectral tools live in rhn/spectra.py; they are part of this module's API
from .spectra import (
    eigenvalues,
    gershgorin_discs,
    in_discs,
    max_singular_value,
    spectral_radius,
)

__all__ = [
    "micro_layer_jacobians",
    "temporal_jacobian",
    "temporal_jacobian_autograd",
    "dtrnn_micro_layer_jacobians",
    "dtrnn_temporal_jacobian",
    "rnn_temporal_jacobian",
    "lstm_temporal_jacobian",
    "gru_temporal_jacobian",
    "gershgorin_discs",
    "in_discs",
    "eigenvalues",
    "spectral_radius",
    "max_singular_value",
]


# ---------------------------------------------------------------------------
# input checks
# ---------------------------------------------------------------------------


def _step_inputs(
    x: object,
    states: dict[str, object],
    input_size: int,
    hidden_size: int,
    like: torch.Tensor,
) -> tuple[torch.Tensor, list[torch.Tensor], bool]:
    """Check ``x`` and the state tensors of one step; return them batched.

    ``x`` must be ``(I,)`` or ``(B, I)``; each state ``(H,)`` or ``(B, H)``
    with the same batch layout as ``x``. ``like`` (a weight) fixes dtype and
    device. Returns ``x`` as ``(B, I)``, the states as ``(B, H)`` and whether
    the input was unbatched.
    """
    x = _checks.float_tensor("x", x)
    if x.dim() not in (1, 2) or x.shape[-1] != input_size:
        raise ValueError(
            f"x must have shape (B, I) or unbatched (I,) with I = {input_size}, "
            f"got {_checks.shape_str(x.shape)}"
        )
    _checks.same_dtype("x", x, like)
    unbatched = x.dim() == 1
    expected = (hidden_size,) if unbatched else (x.shape[0], hidden_size)
    legend = "(H,)" if unbatched else "(B, H)"
    out = []
    for name, s in states.items():
        s = _checks.float_tensor(name, s)
        if tuple(s.shape) != expected:
            raise ValueError(
                f"{name} must have shape {legend} = {_checks.shape_str(expected)} "
                f"to match x of shape {_checks.shape_str(x.shape)}, got "
                f"{_checks.shape_str(s.shape)}"
            )
        _checks.same_dtype(name, s, x)
        out.append(s.unsqueeze(0) if unbatched else s)
    return (x.unsqueeze(0) if unbatched else x), out, unbatched


def _check_rhn_cell(cell: object) -> RHNCell:
    if not isinstance(cell, RHNCell):
        hint = (
            "; pass one layer, e.g. model.cells[0]"
            if isinstance(cell, nn.Module) and hasattr(cell, "cells")
            else ""
        )
        raise TypeError(f"cell must be an rhn.RHNCell, got {type(cell).__name__}{hint}")
    return cell


def _layer0_weights(
    module: object, kinds: tuple[type, ...], wrapper: type, name: str
) -> tuple[Any, torch.Tensor, torch.Tensor, tuple[Any, Any]]:
    """The torch module and its layer-0 ``W_ih``, ``W_hh`` and ``(b_ih, b_hh)``.

    Accepts the ``rhn`` wrapper (its ``.rnn``), the multi-layer ``torch.nn``
    module (layer 0, forward direction) or the ``torch.nn`` cell.
    """
    if isinstance(module, wrapper):
        module = module.rnn
    if not isinstance(module, kinds):
        expected = " or ".join(
            [f"rhn.{wrapper.__name__}"] + [f"nn.{k.__name__}" for k in kinds]
        )
        raise TypeError(f"{name} must be {expected}, got {type(module).__name__}")
    if isinstance(module, nn.RNNBase):
        if module.bidirectional:
            raise ValueError(f"{name} must not be bidirectional (no single step)")
        if getattr(module, "proj_size", 0):
            raise ValueError(f"{name} must have proj_size = 0")
        w_ih, w_hh = module.weight_ih_l0, module.weight_hh_l0
        biases = (module.bias_ih_l0, module.bias_hh_l0) if module.bias else (None, None)
    else:
        w_ih, w_hh = module.weight_ih, module.weight_hh
        biases = (module.bias_ih, module.bias_hh)
    return module, w_ih, w_hh, biases


# ---------------------------------------------------------------------------
# RHN
# ---------------------------------------------------------------------------


def micro_layer_jacobians(
    cell: RHNCell, x: torch.Tensor, s: torch.Tensor
) -> list[torch.Tensor]:
    r"""The Jacobian of each micro-layer of one RHN step, analytically.

    Micro-layer :math:`k` maps :math:`s_{k-1}` to
    :math:`s_k = h_k \odot t_k + s_{k-1} \odot c_k`. Differentiating with the
    pre-activations :math:`a^H, a^T, a^C` of the candidate and the gates
    (row blocks of :math:`R_k s_{k-1} + \dots`):

    .. math::
        J_k = \operatorname{diag}(c_k)
            + \operatorname{diag}\bigl(t_k \odot \tanh'(a^H)\bigr) R_{H,k}
            + \operatorname{diag}\bigl(h_k \odot \sigma'(a^T)\bigr) R_{T,k}
            + \operatorname{diag}\bigl(s_{k-1} \odot \sigma'(a^C)\bigr) R_{C,k}

    for an uncoupled carry gate. With the coupled gate :math:`c = 1 - t` the
    last term merges into the second-to-last:
    :math:`\operatorname{diag}\bigl((h_k - s_{k-1}) \odot \sigma'(a^T)\bigr)
    R_{T,k}`. The derivatives come from the gate values themselves,
    :math:`\tanh'(a^H) = 1 - h^2` and :math:`\sigma'(a^T) = t (1 - t)`.

    Args:
        cell: the RHN cell.
        x: the input of the step, ``(I,)`` or ``(B, I)``; it enters
            micro-layer 0 only.
        s: the incoming state :math:`s^{[t-1]}`, ``(H,)`` or ``(B, H)``.

    Returns:
        A list of ``D`` tensors, ``J_0, ..., J_{D-1}``, each ``(H, H)`` (or
        ``(B, H, H)``), in numerator layout. The step Jacobian is
        ``J_{D-1} @ ... @ J_0``.
    """
    cell = _check_rhn_cell(cell)
    H = cell.hidden_size
    x, (s,), unbatched = _step_inputs(x, {"s": s}, cell.input_size, H, cell.weight_ih)
    x_proj = F.linear(x, cell.weight_ih)  # (B, G*H)
    eye = torch.eye(H, dtype=s.dtype, device=s.device)
    jacobians = []
    for k in range(cell.depth):
        h, t, c = cell.gate_values(k, s, x_proj if k == 0 else None)  # (B, H) each
        dt = t * (1.0 - t)  # sigma'(a_T)
        coef = [t * (1.0 - h * h)]  # row scaling of R_H
        if cell.coupled:
            coef.append((h - s) * dt)  # dc = -dt folds into the R_T term
        else:
            coef.append(h * dt)
            coef.append(s * c * (1.0 - c))  # row scaling of R_C
        coef = torch.stack(coef, dim=1)  # (B, G, H)
        R = cell.recurrent_weight(k).view(cell.gates, H, H)  # (G, H, H)
        # sum_g diag(coef_g) R_g, as one batched contraction
        J = torch.einsum("bgi,gij->bij", coef, R) + c.unsqueeze(-1) * eye  # (B, H, H)
        jacobians.append(J.squeeze(0) if unbatched else J)
        s = h * t + s * c  # the state entering micro-layer k + 1
    return jacobians


def temporal_jacobian(cell: RHNCell, x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    r"""Jacobian of one whole RHN time step with respect to the incoming state.

    .. math::
        J = \frac{\partial s^{[t]}}{\partial s^{[t-1]}}
          = J_{D-1} J_{D-2} \cdots J_0 ,

    the chain rule through the ``D`` micro-layers, each given by
    :func:`micro_layer_jacobians` (eqs. 10-13 of Zilly et al. in numerator
    layout; the paper's :math:`A` is :math:`J^\top`). For ``D = 1`` and a
    coupled carry gate,

    .. math::
        J = \operatorname{diag}(1 - t)
          + \operatorname{diag}\bigl(t \odot \tanh'(a^H)\bigr) R_H
          + \operatorname{diag}\bigl((h - s^{[t-1]}) \odot \sigma'(a^T)\bigr) R_T .

    Computed analytically from the gate values, not by automatic
    differentiation; :func:`temporal_jacobian_autograd` is the reference.

    Args:
        cell: an :class:`rhn.RHNCell` (for a multi-layer :class:`rhn.RHN`, pass
            one of ``model.cells``).
        x: the input of the step, ``(I,)`` or ``(B, I)``.
        s: the incoming state :math:`s^{[t-1]}`, ``(H,)`` or ``(B, H)``.

    Returns:
        ``J`` of shape ``(H, H)``, or ``(B, H, H)`` for batched input, with
        ``J[..., i, j] = d s_i^[t] / d s_j^[t-1]``.

    Example::

        >>> cell = rhn.RHNCell(3, 8, depth=4).double()
        >>> x, s = torch.randn(3).double(), torch.zeros(8).double()
        >>> J = temporal_jacobian(cell, x, s)
        >>> J.shape
        torch.Size([8, 8])
    """
    jacobians = micro_layer_jacobians(cell, x, s)
    J = jacobians[0]
    for J_k in jacobians[1:]:
        J = J_k @ J  # later micro-layers act after earlier ones: left-multiply
    return J


def temporal_jacobian_autograd(
    cell: RHNCell, x: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    r"""The same Jacobian as :func:`temporal_jacobian`, by ``torch.func``.

    Also accepts a :class:`rhn.DTRNNCell` (the reference for
    :func:`dtrnn_temporal_jacobian`). Differentiates the cell's own ``forward``
    with reverse-mode automatic differentiation (``torch.func.jacrev``),
    vectorised over the batch with ``torch.func.vmap``. It is slower and exists
    as an independent reference for the analytic formula.

    Args and returns: as :func:`temporal_jacobian`.
    """
    if not isinstance(cell, DTRNNCell):
        cell = _check_rhn_cell(cell)
    _step_inputs(x, {"s": s}, cell.input_size, cell.hidden_size, cell.weight_ih)

    def step(s_: torch.Tensor, x_: torch.Tensor) -> torch.Tensor:
        return cell(x_, s_)  # unbatched (H,) -> (H,)

    jac = torch.func.jacrev(step)
    if x.dim() == 1:
        return jac(s, x)
    return torch.func.vmap(jac)(s, x)


# ---------------------------------------------------------------------------
# DT-RNN (deep transition without gates)
# ---------------------------------------------------------------------------


def _check_dtrnn_cell(cell: object) -> DTRNNCell:
    if not isinstance(cell, DTRNNCell):
        hint = (
            "; pass one layer, e.g. model.cells[0]"
            if isinstance(cell, nn.Module) and hasattr(cell, "cells")
            else ""
        )
        raise TypeError(
            f"cell must be an rhn.DTRNNCell, got {type(cell).__name__}{hint}"
        )
    return cell


def dtrnn_micro_layer_jacobians(
    cell: DTRNNCell, x: torch.Tensor, s: torch.Tensor
) -> list[torch.Tensor]:
    r"""The Jacobian of each micro-layer of one DT-RNN step, analytically.

    Micro-layer :math:`k` maps :math:`s_{k-1}` to :math:`s_k = \tanh(a_k)`,
    :math:`a_k = W x\,[k=0] + R_k s_{k-1} + b_k`, so

    .. math::
        J_k = \operatorname{diag}\bigl(1 - s_k^2\bigr) R_k ,

    an RNN Jacobian with no identity term: nothing carries the state past a
    micro-layer.

    Args:
        cell: the DT-RNN cell.
        x: the input of the step, ``(I,)`` or ``(B, I)``.
        s: the incoming state :math:`s^{[t-1]}`, ``(H,)`` or ``(B, H)``.

    Returns:
        A list of ``D`` tensors ``J_0, ..., J_{D-1}``, each ``(H, H)`` (or
        ``(B, H, H)``), numerator layout.
    """
    cell = _check_dtrnn_cell(cell)
    H = cell.hidden_size
    x, (s,), unbatched = _step_inputs(x, {"s": s}, cell.input_size, H, cell.weight_ih)
    x_proj = F.linear(x, cell.weight_ih)  # (B, H)
    jacobians = []
    for k in range(cell.depth):
        R = cell.recurrent_weight(k)
        a = F.linear(s, R, cell.recurrent_bias(k))
        if k == 0:
            a = a + x_proj
        s = torch.tanh(a)  # (B, H): the state leaving micro-layer k
        J = (1.0 - s * s).unsqueeze(-1) * R  # diag(tanh') R, (B, H, H)
        jacobians.append(J.squeeze(0) if unbatched else J)
    return jacobians


def dtrnn_temporal_jacobian(
    cell: DTRNNCell, x: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    r"""Jacobian of one whole DT-RNN time step, :math:`J = J_{D-1} \cdots J_0`.

    Each factor is :math:`\operatorname{diag}(1 - s_k^2) R_k`
    (:func:`dtrnn_micro_layer_jacobians`); :func:`temporal_jacobian_autograd`
    computes the same matrix by automatic differentiation.

    Args:
        cell: an :class:`rhn.DTRNNCell` (for a :class:`rhn.DTRNN`, one of
            ``model.cells``).
        x: the input of the step, ``(I,)`` or ``(B, I)``.
        s: the incoming state, ``(H,)`` or ``(B, H)``.

    Returns:
        ``(H, H)`` or ``(B, H, H)``, numerator layout.
    """
    jacobians = dtrnn_micro_layer_jacobians(cell, x, s)
    J = jacobians[0]
    for J_k in jacobians[1:]:
        J = J_k @ J
    return J


# ---------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------


def rnn_temporal_jacobian(
    rnn: RNN | nn.RNN | nn.RNNCell, x: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    r"""Temporal Jacobian of an Elman RNN step :math:`s' = f(W x + R s + b)`.

    .. math::
        J = \operatorname{diag}\bigl(f'(W x + R s + b)\bigr) R

    with :math:`f = \tanh` (:math:`f' = 1 - f^2`) or ReLU (:math:`f'` the
    step function, 0 at 0). The paper's layout is
    :math:`A = R^\top \operatorname{diag}(f')`.

    Args:
        rnn: an :class:`rhn.RNN`, ``nn.RNN`` or ``nn.RNNCell``. For a
            multi-layer RNN the Jacobian is that of **layer 0** (its weights
            ``weight_ih_l0``, ``weight_hh_l0``, biases ``bias_ih_l0 +
            bias_hh_l0``); bidirectional RNNs are rejected.
        x: the input of the step, ``(I,)`` or ``(B, I)``.
        s: the incoming state, ``(H,)`` or ``(B, H)``.

    Returns:
        ``(H, H)`` or ``(B, H, H)``, numerator layout.
    """
    module, w_ih, w_hh, (b_ih, b_hh) = _layer0_weights(
        rnn, (nn.RNN, nn.RNNCell), RNN, "rnn"
    )
    x, (s,), unbatched = _step_inputs(
        x, {"s": s}, module.input_size, module.hidden_size, w_hh
    )
    a = F.linear(x, w_ih, b_ih) + F.linear(s, w_hh, b_hh)  # (B, H)
    if module.nonlinearity == "tanh":
        d = 1.0 - torch.tanh(a) ** 2
    else:  # relu
        d = (a > 0).to(a.dtype)
    J = d.unsqueeze(-1) * w_hh  # diag(f') R, (B, H, H)
    return J.squeeze(0) if unbatched else J


def lstm_temporal_jacobian(
    lstm: LSTM | nn.LSTM | nn.LSTMCell,
    x: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
) -> torch.Tensor:
    r"""Temporal Jacobian of an LSTM step with respect to its full state ``(h, c)``.

    With PyTorch's gates :math:`i, f, g, o` (pre-activations
    :math:`W x + R h + b`), :math:`c' = f \odot c + i \odot g` and
    :math:`h' = o \odot \tanh(c')`. The state is the concatenation
    :math:`[h; c]` of length :math:`2H` and

    .. math::
        J = \begin{pmatrix}
            \partial h'/\partial h & \partial h'/\partial c \\
            \partial c'/\partial h & \partial c'/\partial c
        \end{pmatrix}

    with the blocks

    .. math::
        \begin{aligned}
        \partial c'/\partial h &= \operatorname{diag}(c\,\sigma'_f) R_f \\
            &\quad + \operatorname{diag}(g\,\sigma'_i) R_i \\
            &\quad + \operatorname{diag}(i\,\tanh'_g) R_g, \\
        \partial c'/\partial c &= \operatorname{diag}(f), \\
        \partial h'/\partial \cdot &= \operatorname{diag}(\tanh(c')\,\sigma'_o)
            R_o [\cdot = h] \\
            &\quad + \operatorname{diag}(o\,(1 - \tanh^2 c'))\,
            \partial c'/\partial \cdot .
        \end{aligned}

    The diagonal block :math:`\operatorname{diag}(f)` is the LSTM's own
    "carry": with the forget gate open the cell state passes unchanged.

    Args:
        lstm: an :class:`rhn.LSTM`, ``nn.LSTM`` (layer 0 is used, as in
            :func:`rnn_temporal_jacobian`) or ``nn.LSTMCell``.
        x: the input, ``(I,)`` or ``(B, I)``.
        h, c: the incoming hidden and cell states, each ``(H,)`` or ``(B, H)``.

    Returns:
        ``(2H, 2H)`` or ``(B, 2H, 2H)``; rows and columns ordered ``[h; c]``.
    """
    module, w_ih, w_hh, (b_ih, b_hh) = _layer0_weights(
        lstm, (nn.LSTM, nn.LSTMCell), LSTM, "lstm"
    )
    H = module.hidden_size
    x, (h, c), unbatched = _step_inputs(x, {"h": h, "c": c}, module.input_size, H, w_hh)
    a = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)  # (B, 4H)
    a_i, a_f, a_g, a_o = a.chunk(4, dim=-1)
    i, f, o = torch.sigmoid(a_i), torch.sigmoid(a_f), torch.sigmoid(a_o)
    g = torch.tanh(a_g)
    c_new = f * c + i * g
    tc = torch.tanh(c_new)
    R_i, R_f, R_g, R_o = w_hh.chunk(4, dim=0)  # (H, H) each

    def rows(v: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
        return v.unsqueeze(-1) * R  # diag(v) R, (B, H, H)

    dc_dh = (
        rows(c * f * (1 - f), R_f)
        + rows(g * i * (1 - i), R_i)
        + rows(i * (1 - g * g), R_g)
    )
    dc_dc = torch.diag_embed(f)
    dh_dc_new = o * (1 - tc * tc)  # (B, H)
    dh_dh = rows(tc * o * (1 - o), R_o) + dh_dc_new.unsqueeze(-1) * dc_dh
    dh_dc = torch.diag_embed(dh_dc_new * f)
    J = torch.cat(
        [torch.cat([dh_dh, dh_dc], dim=-1), torch.cat([dc_dh, dc_dc], dim=-1)], dim=-2
    )  # (B, 2H, 2H)
    return J.squeeze(0) if unbatched else J


def gru_temporal_jacobian(
    gru: GRU | nn.GRU | nn.GRUCell, x: torch.Tensor, h: torch.Tensor
) -> torch.Tensor:
    r"""Temporal Jacobian of a GRU step (PyTorch's formulation).

    With gates :math:`r, z` and candidate :math:`n = \tanh(W_n x + b_{in} +
    r \odot (R_n h + b_{hn}))`, the step is :math:`h' = (1 - z) \odot n + z
    \odot h` and

    .. math::
        J = \operatorname{diag}(z)
          + \operatorname{diag}\bigl((h - n)\,\sigma'_z\bigr) R_z
          + \operatorname{diag}\bigl((1 - z)\,\tanh'_n\bigr)
            \bigl[\operatorname{diag}(r) R_n
            + \operatorname{diag}\bigl((R_n h + b_{hn})\,\sigma'_r\bigr) R_r\bigr].

    The first two terms have exactly the form of the coupled RHN micro-layer
    with :math:`z` in the role of the carry gate :math:`c = 1 - t`.

    Args:
        gru: an :class:`rhn.GRU`, ``nn.GRU`` (layer 0) or ``nn.GRUCell``.
        x: the input, ``(I,)`` or ``(B, I)``.
        h: the incoming state, ``(H,)`` or ``(B, H)``.

    Returns:
        ``(H, H)`` or ``(B, H, H)``, numerator layout.
    """
    module, w_ih, w_hh, (b_ih, b_hh) = _layer0_weights(
        gru, (nn.GRU, nn.GRUCell), GRU, "gru"
    )
    x, (h,), unbatched = _step_inputs(
        x, {"h": h}, module.input_size, module.hidden_size, w_hh
    )
    gi = F.linear(x, w_ih, b_ih).chunk(3, dim=-1)  # r, z, n parts of W x + b_i
    gh = F.linear(h, w_hh, b_hh).chunk(3, dim=-1)  # r, z, n parts of R h + b_h
    r = torch.sigmoid(gi[0] + gh[0])
    z = torch.sigmoid(gi[1] + gh[1])
    n = torch.tanh(gi[2] + r * gh[2])
    R_r, R_z, R_n = w_hh.chunk(3, dim=0)
    dn = (1 - z) * (1 - n * n)  # dh'/d(pre-activation of n)
    J = (
        torch.diag_embed(z)
        + ((h - n) * z * (1 - z)).unsqueeze(-1) * R_z
        + (dn * r).unsqueeze(-1) * R_n
        + (dn * gh[2] * r * (1 - r)).unsqueeze(-1) * R_r
    )  # (B, H, H)
    return J.squeeze(0) if unbatched else J
