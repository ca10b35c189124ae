r"""The feed-forward highway layer, the RHN's ancestor.

It is defined by Srivastava et al., 2015 (*Training very deep networks*).

Its transform-gate bias is called ``transform_bias``, as in :class:`rhn.RHN`;
the old keyword ``gate_bias`` still works and warns.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks
from .defaults import HIGHWAY_TRANSFORM_BIAS

__all__ = ["Highway"]

_ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": torch.relu,
    "tanh": torch.tanh,
    "identity": lambda a: a,
}

_UNSET = object()  # tells "not given" from any value a caller could pass


class Highway(nn.Module):
    r"""A feed-forward highway layer.

    As defined by Srivastava et al., 2015 (*Training very deep networks*):

    .. math::
        y = t \odot f(W_H x + b_H) + (1 - t) \odot x, \qquad
        t = \sigma(W_T x + b_T)

    Args:
        size: number of features, the same in and out.
        activation: ``"relu"`` (default), ``"tanh"``, ``"identity"`` or a
            callable applied element-wise to the candidate.
        transform_bias: initial value of :math:`b_T` (default ``-3.0``,
            :data:`rhn.defaults.HIGHWAY_TRANSFORM_BIAS`, the package's one
            transform-bias default, as for :class:`rhn.RHN`), negative so the layer
            starts by mostly carrying its input through; deeper networks want
            more negative values. The same name as in :class:`rhn.RHN`.
        gate_bias: the former name of ``transform_bias``; still accepted, with
            a ``DeprecationWarning``.

    Shape:
        - Input: ``(*, size)``. Output: the same shape.

    Attributes:
        weight: ``(2*size, size)``, row blocks ``[W_H; W_T]``.
        bias: ``(2*size,)``, blocks ``[b_H; b_T]``.
        transform_bias: the initial :math:`b_T` (``gate_bias`` reads it too,
            with a ``DeprecationWarning``).
    """

    def __init__(
        self,
        size: int,
        *,
        activation: str | Callable[[torch.Tensor], torch.Tensor] = "relu",
        transform_bias: float = HIGHWAY_TRANSFORM_BIAS,
        gate_bias: object = _UNSET,
        device: torch.device | str | None = None,
        dtype: torch.dtype | None = None,
    ) -> None:
        super().__init__()
        name = "transform_bias"
        if gate_bias is not _UNSET:
            if transform_bias != HIGHWAY_TRANSFORM_BIAS:
                raise TypeError(
                    "give transform_bias or its former name gate_bias, not both "
                    f"(got transform_bias={transform_bias}, gate_bias={gate_bias})"
                )
            warnings.warn(
                "Highway(gate_bias=...) is deprecated: the keyword is now "
                "transform_bias, as in rhn.RHN",
                DeprecationWarning,
                stacklevel=2,
            )
            name, transform_bias = "gate_bias", gate_bias
        self.size = _checks.positive_int("size", size)
        if callable(activation):
            self.activation = activation
        else:
            key = _checks.choice("activation", activation, list(_ACTIVATIONS))
            self.activation = _ACTIVATIONS[key]
        factory = _checks.factory(device, dtype)
        self.transform_bias = _checks.representable(
            name, _checks.real(name, transform_bias), factory["dtype"]
        )
        self.weight = nn.Parameter(torch.empty(2 * self.size, self.size, **factory))
        self.bias = nn.Parameter(torch.empty(2 * self.size, **factory))
        self.reset_parameters()

    @property
    def gate_bias(self) -> float:
        """The former name of :attr:`transform_bias` (deprecated)."""
        warnings.warn(
            "Highway.gate_bias is deprecated: read Highway.transform_bias",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.transform_bias

    def reset_parameters(self) -> None:
        """Weights uniform in ``±1/sqrt(size)``; ``b_H = 0``, ``b_T`` = the bias."""
        scale = 1.0 / math.sqrt(self.size)
        with torch.no_grad():
            self.weight.uniform_(-scale, scale)
            self.bias.zero_()
            self.bias[self.size :] = self.transform_bias

    def gate(self, x: torch.Tensor) -> torch.Tensor:
        """The transform gate ``t`` for input ``x`` (same shape as ``x``)."""
        return torch.sigmoid(
            F.linear(x, self.weight[self.size :], self.bias[self.size :])
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The highway layer's output for ``x`` of shape ``(*, size)``, same shape."""
        x = _checks.float_tensor("x", x)
        if x.dim() == 0 or x.shape[-1] != self.size:
            raise ValueError(
                f"x must have shape (*, {self.size}) (size={self.size}), got "
                f"{_checks.shape_str(x.shape)}"
            )
        _checks.same_dtype("x", x, self.weight)
        a = F.linear(x, self.weight, self.bias)  # (*, 2*size)
        h = self.activation(a[..., : self.size])
        t = torch.sigmoid(a[..., self.size :])
        return h * t + x * (1.0 - t)

    def extra_repr(self) -> str:
        return f"{self.size}, transform_bias={self.transform_bias}"
