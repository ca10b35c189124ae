r"""RNN, LSTM and GRU baselines behind the same interface as :class:`rhn.RHN`.

Each class is a thin wrapper over the ``torch.nn`` module of the same name (so
the fast cuDNN / oneDNN kernels are used) that adds what the comparisons in the
book need: the same constructor keywords and ``forward(x, state=None) ->
(output, state)`` contract as :class:`rhn.RHN`, the same input checks with
readable errors, and the attributes ``input_size``, ``hidden_size``,
``num_layers`` and ``batch_first``.

:func:`~rhn.build_model` makes any of them, or :class:`rhn.RHN` and the
gate-free deep-transition :class:`rhn.DTRNN`, by name and
:func:`~rhn.matched_hidden_size` picks the hidden size that gives a model a target
parameter count, so that chapters compare models of equal size.
"""

from __future__ import annotations

import functools
from typing import Any

import torch
from torch import nn

from . import _checks
from ._amp import autocast_dtype, autocast_off
from .cells import DTRNN, RHN

__all__ = [
    "RNN",
    "LSTM",
    "GRU",
    "MODELS",
    "build_model",
    "count_parameters",
    "matched_hidden_size",
]


class _TorchRecurrent(nn.Module):
    """Shared wrapper around ``nn.RNN`` / ``nn.LSTM`` / ``nn.GRU``."""

    _module: type[nn.RNNBase]

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        *,
        batch_first: bool = False,
        dropout: float = 0.0,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
        **extra: Any,
    ) -> None:
        super().__init__()
        self.input_size = _checks.positive_int("input_size", input_size)
        self.hidden_size = _checks.positive_int("hidden_size", hidden_size)
        self.num_layers = _checks.positive_int("num_layers", num_layers)
        self.batch_first = _checks.boolean("batch_first", batch_first)
        self.dropout = _checks.probability("dropout", dropout)
        factory = _checks.factory(device, dtype)
        _reject_unsupported(type(self).__name__, extra)
        self.rnn = self._module(
            self.input_size,
            self.hidden_size,
            self.num_layers,
            batch_first=False,  # inputs are made time-first before the call
            dropout=self.dropout,
            **factory,
            **extra,
        )

    def _prepare(self, x: torch.Tensor, state: Any) -> tuple[torch.Tensor, bool, Any]:
        x, unbatched = _checks.sequence(x, self.input_size, self.batch_first)
        _checks.same_dtype("x", x, self.rnn.weight_ih_l0)
        if state is not None:
            state = self._check_state(state, x, unbatched)
        return x, unbatched, state

    def _check_state(self, state: Any, x: torch.Tensor, unbatched: bool) -> Any:
        return _checks.state(
            state, self.num_layers, x.shape[1], self.hidden_size, unbatched, x
        )

    def _finish(self, output: torch.Tensor, unbatched: bool) -> torch.Tensor:
        if unbatched:
            return output.squeeze(1)
        return output.transpose(0, 1) if self.batch_first else output

    def forward(self, x: torch.Tensor, state: Any = None) -> tuple[torch.Tensor, Any]:
        """Run the sequence ``x`` through the wrapped torch module.

        Args:
            x: ``(T, B, I)``, ``(B, T, I)`` with ``batch_first``, or
                unbatched ``(T, I)``.
            state: the initial hidden state ``(N, B, H)`` (``(N, H)``
                unbatched); ``None``: zeros.

        Returns:
            ``(output, state)``: the last layer's hidden state after every
            step, ``(T, B, H)``, and every layer's final one, ``(N, B, H)``.
        """
        x, unbatched, state = self._prepare(x, state)
        output, state = self.rnn(x, state)  # (T, B, H), (N, B, H)
        if unbatched:
            state = state.squeeze(1)
        return self._finish(output, unbatched), state


# torch.nn options whose outputs break the (N, B, H) state contract shared by
# every model of the package (a bidirectional model returns 2N states, a
# projected LSTM an h of size proj_size): refused at construction, with the
# value that turns them off.
_UNSUPPORTED = {"bidirectional": False, "proj_size": 0}


def _reject_unsupported(model: str, extra: dict[str, Any]) -> None:
    for key, off in _UNSUPPORTED.items():
        if key in extra and extra[key] != off:
            raise ValueError(
                f"{key} must be {off!r} for rhn.{model} (its state would not "
                f"have the (N, B, H) shape every model of rhn shares), got "
                f"{extra[key]!r}; use torch.nn.{model} directly for {key}"
            )


class RNN(_TorchRecurrent):
    r"""Elman RNN, :math:`s^{[t]} = f(W x^{[t]} + R s^{[t-1]} + b)`, over ``nn.RNN``.

    Args:
        input_size, hidden_size, num_layers, batch_first: as in :class:`rhn.RHN`.
        nonlinearity: ``"tanh"`` (default) or ``"relu"``.
        dropout: ``nn.RNN``'s dropout between layers (not variational).

    Inputs and outputs: as :class:`rhn.RHN`; ``state`` is ``(N, B, H)``.
    """

    _module = nn.RNN

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        *,
        nonlinearity: str = "tanh",
        **kwargs: Any,
    ) -> None:
        nonlinearity = _checks.choice("nonlinearity", nonlinearity, ["tanh", "relu"])
        super().__init__(
            input_size, hidden_size, num_layers, nonlinearity=nonlinearity, **kwargs
        )


class GRU(_TorchRecurrent):
    r"""Gated recurrent unit (Cho et al., 2014) over ``nn.GRU``.

    Arguments, inputs and outputs as :class:`RNN` (without ``nonlinearity``).
    """

    _module = nn.GRU


class LSTM(_TorchRecurrent):
    r"""Long short-term memory (Hochreiter and Schmidhuber, 1997) over ``nn.LSTM``.

    Arguments as :class:`RNN` (without ``nonlinearity``), plus:

    Args:
        forget_bias: the initial forget-gate bias of every layer, or ``None``
            (default) to keep ``nn.LSTM``'s initialisation, in which every bias
            is uniform in :math:`[-1/\sqrt{H}, 1/\sqrt{H}]` (so the effective
            forget bias, a sum of two of them, is 0 on average). Fair LSTM
            baselines use ``1.0`` (Gers et al., 2000; Jozefowicz et al., 2015):
            with small inputs and weights the forget gates then start near
            :math:`\sigma(1) \approx 0.73` instead of :math:`0.5`.

    ``nn.LSTM`` stacks its gates by rows in the order input, forget, cell,
    output (``i, f, g, o``) and adds two bias vectors, ``bias_ih_l{k}`` and
    ``bias_hh_l{k}``, each ``(4H,)``; the forget gate's pre-activation gets
    their sum over rows ``H:2H``. A given ``forget_bias`` is put whole into
    ``bias_ih_l{k}[H:2H]`` and ``bias_hh_l{k}[H:2H]`` is zeroed, so the
    effective forget-gate bias is exactly ``forget_bias``; the other gates keep
    their default initialisation.

    The state is the pair ``(h, c)``, each ``(N, B, H)`` (``(N, H)``
    unbatched); the output is the sequence of ``h`` of the last layer,
    ``(T, B, H)``.
    """

    _module = nn.LSTM

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        *,
        forget_bias: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(input_size, hidden_size, num_layers, **kwargs)
        if forget_bias is not None:
            forget_bias = _checks.representable(
                "forget_bias",
                _checks.real("forget_bias", forget_bias),
                self.rnn.weight_ih_l0.dtype,
            )
        self.forget_bias = forget_bias
        if forget_bias is not None:
            H = self.hidden_size
            with torch.no_grad():
                for k in range(self.num_layers):
                    getattr(self.rnn, f"bias_ih_l{k}")[H : 2 * H].fill_(forget_bias)
                    getattr(self.rnn, f"bias_hh_l{k}")[H : 2 * H].zero_()

    def _check_state(self, state: Any, x: torch.Tensor, unbatched: bool) -> Any:
        if not isinstance(state, (tuple, list)) or len(state) != 2:
            raise TypeError(
                "state must be a pair (h, c) of tensors for an LSTM, got "
                f"{type(state).__name__}"
            )
        return tuple(
            _checks.state(
                part,
                self.num_layers,
                x.shape[1],
                self.hidden_size,
                unbatched,
                x,
                name=f"state[{i}]",
            )
            for i, part in enumerate(state)
        )

    def forward(self, x: torch.Tensor, state: Any = None) -> tuple[torch.Tensor, Any]:
        """Run the sequence ``x`` through the LSTM.

        Args:
            x: ``(T, B, I)``, ``(B, T, I)`` with ``batch_first``, or
                unbatched ``(T, I)``.
            state: the initial pair ``(h, c)``, each ``(N, B, H)``
                (``(N, H)`` unbatched); ``None``: zeros.

        Returns:
            ``(output, (h, c))``: ``h`` of the last layer after every step,
            ``(T, B, H)``, and every layer's final ``h`` and ``c``.
        """
        x, unbatched, state = self._prepare(x, state)
        if x.device.type == "cpu" and not _cpu_low_precision_lstm_runs(
            self.rnn.weight_ih_l0.dtype
        ):
            # oneDNN has no low-precision LSTM on this CPU (those without
            # AVX-512, for one): this layer runs in float32, as x and the
            # state already are (_prepare checks x's dtype)
            with autocast_off("cpu"):
                output, (h, c) = self.rnn(x, state)
        else:
            output, (h, c) = self.rnn(x, state)
        if unbatched:
            h, c = h.squeeze(1), c.squeeze(1)
        return self._finish(output, unbatched), (h, c)


def _cpu_low_precision_lstm_runs(dtype: torch.dtype) -> bool:
    """Whether ``nn.LSTM`` runs under the CPU autocast in force now.

    True when autocast is off on the CPU (or leaves ``dtype`` alone); otherwise
    whether this CPU runs the LSTM in the low precision, found once by trying
    (``nn.LSTM`` under CPU bfloat16 autocast raises "could not create a
    primitive descriptor" where oneDNN lacks it, as on processors without
    AVX-512).
    """
    low = autocast_dtype("cpu", dtype)
    return low is None or _lstm_runs_in(low)


@functools.cache
def _lstm_runs_in(low: torch.dtype) -> bool:
    probe = nn.LSTM(2, 2)
    try:
        with torch.autocast("cpu", dtype=low):
            probe(torch.zeros(1, 1, 2))
    except RuntimeError:
        return False
    return True


MODELS: dict[str, type[nn.Module]] = {
    "rhn": RHN,
    "rnn": RNN,
    "lstm": LSTM,
    "gru": GRU,
    "dtrnn": DTRNN,
}
"""The recurrent models :func:`build_model` knows, by name."""


def build_model(
    name: str, input_size: int, hidden_size: int, **kwargs: Any
) -> nn.Module:
    """Build a recurrent model by name, a key of ``rhn.MODELS``.

    The names are ``"rhn"``, ``"rnn"``, ``"lstm"``, ``"gru"`` and ``"dtrnn"``
    (the gate-free deep-transition RNN, :class:`rhn.DTRNN`). Keyword arguments
    go to the model's constructor; ``"rhn"`` and ``"dtrnn"`` need ``depth``.
    Every model returned takes ``(T, B, I)`` inputs and returns
    ``(output, state)`` with ``output`` of shape ``(T, B, H)``.

    >>> model = build_model("rhn", 2, 32, depth=3, num_layers=2)
    >>> model(torch.randn(10, 4, 2))[0].shape
    torch.Size([10, 4, 32])
    """
    key = _checks.choice("name", name, list(MODELS))
    if key in ("rhn", "dtrnn") and "depth" not in kwargs:
        raise ValueError(
            f"build_model({key!r}, ...) needs the keyword depth=D (D >= 1)"
        )
    return MODELS[key](input_size, hidden_size, **kwargs)


def count_parameters(model: nn.Module) -> int:
    """The number of trainable scalars in ``model``."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def matched_hidden_size(
    name: str, input_size: int, num_params: int, **kwargs: Any
) -> int:
    """The hidden size whose parameter count is closest to ``num_params``.

    Builds candidate models on the ``meta`` device (no memory is allocated)
    and bisects on the hidden size, so it works for any model and keyword
    arguments :func:`build_model` accepts.

    >>> H = matched_hidden_size("lstm", 64, count_parameters(RHN(64, 256, 5)))
    """
    num_params = _checks.positive_int("num_params", num_params)
    kwargs = {**kwargs, "device": "meta"}

    def size(h: int) -> int:
        return count_parameters(build_model(name, input_size, h, **kwargs))

    lo, hi = 1, 1
    while size(hi) < num_params:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # size(lo) < num_params <= size(hi), or lo == hi == 1
        mid = (lo + hi) // 2
        if size(mid) < num_params:
            lo = mid
        else:
            hi = mid
    return min((lo, hi), key=lambda h: (abs(size(h) - num_params), h))
