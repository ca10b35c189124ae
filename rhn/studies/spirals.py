r"""Deep plain against deep highway networks on two interleaved spirals (chapter 5).

A network embeds the two coordinates of a point into ``width`` features with a
linear layer, applies ``depth`` hidden layers of one kind and reads two class
scores out with another linear layer:

- ``"plain"``: ``Linear`` + ReLU with PyTorch's default initialisation;
- ``"he"``: the same with He initialisation (variance ``2 / fan_in``, zero bias);
- ``"highway"``: :class:`rhn.Highway` layers (ReLU candidate) with a
  transform-gate bias ``b_T``.

Each is trained with Adam on random batches of the training points and scored
by the held-out cross-entropy every ``every`` steps (``ln 2`` is chance).

Example::

    >>> record = run([0], settings=[("highway", -3.0)], depth=3, steps=4, every=2)
    >>> [len(r["history"]) for r in record["runs"]]
    [2]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..defaults import TRANSFORM_BIAS
from ..highway import Highway

KINDS = ("plain", "he", "highway")
# every setting the chapter trains: (kind, transform-gate bias; unused if plain)
SETTINGS = (
    ("plain", 0.0),
    ("he", 0.0),
    ("highway", 0.0),
    ("highway", -2.0),
    ("highway", -3.0),
    ("highway", -4.0),
)
# the chapter's exercise at depth 20
SETTINGS_20 = (("he", 0.0), ("highway", -2.0))


def spirals(
    n: int, seed: int, turns: float = 1.5, noise: float = 0.05
) -> tuple[torch.Tensor, torch.Tensor]:
    """Two interleaved spirals: points ``(n, 2)`` and labels ``(n,)`` in {0, 1}."""
    g = torch.Generator().manual_seed(seed)
    label = torch.randint(0, 2, (n,), generator=g)
    r = torch.rand(n, generator=g)
    angle = 2 * math.pi * turns * r + math.pi * label
    points = torch.stack([r * torch.cos(angle), r * torch.sin(angle)], dim=1)
    return 2 * (points + noise * torch.randn(n, 2, generator=g)), label


def make_net(
    kind: str,
    depth: int = 50,
    transform_bias: float = TRANSFORM_BIAS,
    seed: int = 0,
    width: int = 32,
) -> nn.Sequential:
    """Embedding, ``depth`` hidden layers of ``kind``, class scores; seeded."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {list(KINDS)}, got {kind!r}")
    torch.manual_seed(seed)
    if kind == "highway":
        hidden = [Highway(width, transform_bias=transform_bias) for _ in range(depth)]
    else:
        hidden = []
        for _ in range(depth):
            linear = nn.Linear(width, width)
            if kind == "he":
                nn.init.kaiming_normal_(linear.weight, nonlinearity="relu")
                nn.init.zeros_(linear.bias)
            hidden.append(nn.Sequential(linear, nn.ReLU()))
    return nn.Sequential(nn.Linear(2, width), *hidden, nn.Linear(width, 2))


def train_net(
    net: nn.Module,
    data: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
    steps: int = 200,
    lr: float = 3e-3,
    seed: int = 0,
    every: int = 20,
    batch_size: int = 128,
) -> list[float]:
    """Adam on random batches of the training points; held-out loss every ``every``."""
    x_train, y_train, x_test, y_test = data
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    batches = torch.Generator().manual_seed(seed)
    history = []
    for step in range(1, steps + 1):
        idx = torch.randint(0, len(x_train), (batch_size,), generator=batches)
        loss = F.cross_entropy(net(x_train[idx]), y_train[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % every == 0:
            with torch.no_grad():
                history.append(F.cross_entropy(net(x_test), y_test).item())
    return history


def mean_gates(net: nn.Sequential, x: torch.Tensor) -> list[float]:
    """The mean transform gate of every highway layer of ``net`` on inputs ``x``."""
    gates = []
    with torch.no_grad():
        z = net[0](x)
        for layer in net[1:-1]:
            gates.append(layer.gate(z).mean().item())
            z = layer(z)
    return gates


def run(
    seeds: Sequence[int],
    settings: Sequence[tuple[str, float]] = SETTINGS,
    depth: int = 50,
    steps: int = 200,
    every: int = 20,
    lr: float = 3e-3,
) -> dict[str, Any]:
    """Train every ``(kind, transform_bias)`` of ``settings`` from every seed.

    Returns ``{"settings": ..., "runs": [...]}``; a run has ``kind``,
    ``transform_bias``, ``seed``, ``history`` (held-out loss every ``every``
    steps) and, for highway networks, ``gates`` (mean transform gate per layer
    after training).
    """
    x_train, y_train = spirals(1000, seed=0)
    x_test, y_test = spirals(1000, seed=1)
    data = (x_train, y_train, x_test, y_test)
    runs = []
    for kind, bias in settings:
        for seed in seeds:
            net = make_net(kind, depth=depth, transform_bias=bias, seed=seed)
            history = train_net(net, data, steps=steps, lr=lr, seed=seed, every=every)
            run_ = {
                "kind": kind,
                "transform_bias": bias,
                "seed": seed,
                "history": history,
            }
            if kind == "highway":
                run_["gates"] = mean_gates(net, x_test)
            runs.append(run_)
    return {
        "settings": {
            "depth": depth,
            "steps": steps,
            "every": every,
            "lr": lr,
            "seeds": list(seeds),
            "settings": [list(s) for s in settings],
        },
        "runs": runs,
    }
