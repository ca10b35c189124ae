r"""A playground that trains an RHN and a tanh RNN in the reader's browser.

:func:`playground_widget` returns a :class:`Playground`, an anywidget widget
whose ES module (``static/playground.js``, bundled from
``js/playground*.js`` by :mod:`rhn.widgets.build`) trains both nets on the
adding problem with backpropagation through time and Adam, in float64, and
redraws the loss, the gradient norms and the gate activity as it trains.

What Python hands over (:func:`playground_data`) and what the browser makes
of it:

- **Weights**: the real initial weights of :class:`rhn.RHN` (coupled gates,
  ``D = max_depth`` micro-layers, hidden size ``H``) and of a linear read-out
  of the last state, from :func:`playground_nets` with the given seed. The
  seeded draws of ``RHN(2, H, D)`` are a prefix of those of
  ``RHN(2, H, max_depth)`` (``weight_ih``, then micro-layer 0, 1, ...), so
  the browser takes the first ``D`` micro-layers for depth ``D``; it sets the
  transform-gate biases to the slider's :math:`b_T` and the other biases to
  0, which is what ``RHN(..., transform_bias=b_T)`` does. For each depth, a
  tanh RNN (:class:`rhn.RNN`) whose core has the parameter count closest to
  the RHN's (:func:`matched_rnn_size`), with a read-out of its own.
  Both are sent as little-endian float64 in base64, so the browser starts
  from exactly the numbers :func:`playground_nets` builds.
- **Batches**: not sent. The browser draws each batch of the adding problem
  from a seeded 32-bit generator (mulberry32, seed ``data_seed``) with the
  distribution of :func:`rhn.tasks.adding_problem` (values :math:`U[0, 1)`,
  one marker in each half); torch's generator is not reproduced, so the
  browser's batches are not the numbers ``adding_problem`` draws. Both nets
  train on the same batch at every step. The tests compare the browser's
  numerics with torch on batches from :func:`rhn.tasks.adding_problem`.
- **Training**: batch 16, mean squared error of the read-out, global
  gradient-norm clipping at ``clip`` (``torch.nn.utils.clip_grad_norm_``),
  ``torch.optim.Adam`` with its default betas and eps. The memoryless baseline
  is :func:`rhn.tasks.adding_baseline`, 1/6.
"""

from __future__ import annotations

import base64
import functools
import math
from pathlib import Path
from typing import Any

import anywidget
import numpy as np
import torch
import traitlets
from torch import nn

from .. import _checks
from ..baselines import RNN, count_parameters, matched_hidden_size
from ..cells import RHN
from ..defaults import TRANSFORM_BIAS
from ..gradflow import micro_layer_gradient_norms
from ..tasks import adding_baseline, adding_problem
from . import figures
from .interactive import PNG_SCALE, _check_setting, _slider, with_png

__all__ = [
    "PLAYGROUND_BUNDLE",
    "PLAYGROUND_CLASS",
    "Playground",
    "PlaygroundNet",
    "initial_gradients",
    "matched_rnn_size",
    "playground_nets",
    "playground_data",
    "playground_widget",
]

PLAYGROUND_CLASS = "rhn-playground"  # CSS class of the widget, for the tests
PLAYGROUND_BUNDLE = Path(__file__).with_name("static") / "playground.js"
"""The bundled ES module of the playground (committed, like ``widget.js``)."""

INPUT_SIZE = 2  # the adding problem's two channels: value, marker
PNG_FIGSIZE = (7.2, 3.0)  # the heatmap beside the widget, in inches
PNG_DPI = 100  # its shown size: 720 px wide
BATCH = 16


class PlaygroundNet(nn.Module):
    """A recurrent body and a linear read-out of its last state: ``(T, B, 2) -> (B,)``.

    Attributes:
        body: an :class:`rhn.RHN` or :class:`rhn.RNN` with one layer.
        out: ``nn.Linear(H, 1)``.
    """

    def __init__(self, body: nn.Module, out: nn.Linear) -> None:
        super().__init__()
        self.body = body
        self.out = out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, state = self.body(x)  # (1, B, H)
        return self.out(state[0]).squeeze(-1)  # (B,)

    def browser_params(self) -> dict[str, torch.Tensor]:
        """The parameters under the names the browser uses (``weight_ih``,
        ``weight_hh_d0``, ..., ``out.weight``), in the order of ``parameters()``."""
        out = {}
        for name, p in self.named_parameters():
            name = name.removeprefix("body.cells.0.").removeprefix("body.rnn.")
            out[name] = p
        return out


def matched_rnn_size(hidden_size: int, depth: int, input_size: int = INPUT_SIZE) -> int:
    """Hidden size of the tanh RNN with the parameter count closest to that of a
    coupled RHN of ``hidden_size`` and ``depth`` (the recurrent cores, as
    :func:`rhn.matched_hidden_size` counts them; the read-outs add ``H + 1``)."""
    H = _checks.positive_int("hidden_size", hidden_size)
    D = _checks.positive_int("depth", depth)
    core = count_parameters(RHN(input_size, H, D, device="meta"))
    return matched_hidden_size("rnn", input_size, core)


def playground_nets(
    depth: int,
    transform_bias: float = TRANSFORM_BIAS,
    *,
    hidden_size: int = 16,
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> tuple[PlaygroundNet, PlaygroundNet]:
    """The RHN and the RNN the playground starts from at this setting.

    Seeded without touching the global random state: ``torch.manual_seed(seed)``
    in a forked generator, the read-out ``nn.Linear(H, 1)`` first, then the body.

    Returns:
        ``(rhn_net, rnn_net)``, both in ``dtype``.
    """
    depth = _checks.positive_int("depth", depth)
    transform_bias = _checks.real("transform_bias", transform_bias)
    hidden_size = _checks.positive_int("hidden_size", hidden_size)
    seed = _checks.seed("seed", seed)
    nets = []
    for kind in ("rhn", "rnn"):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            if kind == "rhn":
                out = nn.Linear(hidden_size, 1, dtype=dtype)
                body: nn.Module = RHN(
                    INPUT_SIZE,
                    hidden_size,
                    depth,
                    transform_bias=transform_bias,
                    impl="loop",
                    dtype=dtype,
                )
            else:
                n = matched_rnn_size(hidden_size, depth)
                out = nn.Linear(n, 1, dtype=dtype)
                body = RNN(INPUT_SIZE, n, dtype=dtype)
        nets.append(PlaygroundNet(body, out))
    return nets[0], nets[1]


def _b64(t: torch.Tensor) -> str:
    array = t.detach().to(torch.float64).contiguous().numpy().astype("<f8")
    return base64.b64encode(array.tobytes()).decode("ascii")


def _unb64(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f8")


def playground_data(
    *, hidden_size: int = 16, max_depth: int = 5, seed: int = 0, data_seed: int = 1
) -> dict[str, Any]:
    """The numbers the playground's browser side needs (see the module doc).

    Returns:
        ``{"hidden_size", "input_size", "batch", "max_depth", "baseline",
        "clip", "data_seed", "rhn": {name: base64}, "rnn": [{"hidden_size",
        name: base64, ...} for depth 1..max_depth]}``.
    """
    hidden_size = _checks.positive_int("hidden_size", hidden_size)
    if hidden_size > 32:
        raise ValueError(f"hidden_size must be an int in [1, 32], got {hidden_size}")
    max_depth = _checks.positive_int("max_depth", max_depth)
    if max_depth > 8:
        raise ValueError(f"max_depth must be an int in [1, 8], got {max_depth}")
    seed = _checks.seed("seed", seed)
    data_seed = _checks.seed("data_seed", data_seed, limit=2**32)
    rhn_net, _ = playground_nets(max_depth, 0.0, hidden_size=hidden_size, seed=seed)
    rhn = {
        name: _b64(p)
        for name, p in rhn_net.browser_params().items()
        if not name.startswith("bias_hh_d")  # zeros but for b_T: set in the browser
    }
    rnns = []
    for depth in range(1, max_depth + 1):
        _, rnn_net = playground_nets(depth, hidden_size=hidden_size, seed=seed)
        entry: dict[str, Any] = {"hidden_size": rnn_net.body.hidden_size}
        entry.update({n: _b64(p) for n, p in rnn_net.browser_params().items()})
        rnns.append(entry)
    return {
        "hidden_size": hidden_size,
        "input_size": INPUT_SIZE,
        "batch": BATCH,
        "max_depth": max_depth,
        "baseline": adding_baseline(),
        "clip": 1.0,
        "seed": seed,
        "data_seed": data_seed,
        "rhn": rhn,
        "rnn": rnns,
    }


def initial_gradients(
    depth: int = 2,
    transform_bias: float = TRANSFORM_BIAS,
    seq_len: int = 30,
    *,
    hidden_size: int = 16,
    seed: int = 0,
    data_seed: int = 1,
) -> dict[str, Any]:
    """The playground's heatmap before the first step, computed with torch.

    The nets are those of :func:`playground_nets`; the batch is one of
    :func:`rhn.tasks.adding_problem` (``BATCH`` sequences of ``seq_len``
    steps, seed ``data_seed``, float64). The browser draws its batches with
    a generator of its own, so its heatmap shows other numbers of the same
    kind. Each entry is the 2-norm of the gradient of the mean squared error
    with respect to one sequence's state, averaged over the batch.

    Returns:
        ``{"rhn": (D, T), "rnn": (1, T), "loss_rhn": float, "loss_rnn":
        float}``: the gradient norms after micro-layer ``k`` (row) of step
        ``t`` (column ``t - 1``) of the RHN, and after each step of the RNN.
    """
    seq_len = _checks.positive_int("seq_len", seq_len)
    rhn_net, rnn_net = playground_nets(
        depth, transform_bias, hidden_size=hidden_size, seed=seed
    )
    x, y = adding_problem(BATCH, seq_len, seed=data_seed, dtype=torch.float64)

    def mse(net: PlaygroundNet, last: torch.Tensor) -> torch.Tensor:
        return torch.mean((net.out(last).squeeze(-1) - y) ** 2)

    rhn_map = micro_layer_gradient_norms(
        rhn_net.body, x, loss_fn=lambda output: mse(rhn_net, output[-1])
    ).T  # (D, T)
    with torch.enable_grad():
        state, states = None, []
        for x_t in x.split(1):  # one step at a time, to keep every state
            _, state = rnn_net.body(x_t, state)  # (1, B, H)
            states.append(state)
        loss_rnn = mse(rnn_net, state[0])
        grads = torch.autograd.grad(loss_rnn, states)
    rnn_map = torch.stack([g[0].norm(dim=-1).mean() for g in grads])[None]
    with torch.no_grad():
        loss_rhn = mse(rhn_net, rhn_net.body(x)[1][0]).item()
    return {
        "rhn": rhn_map,
        "rnn": rnn_map.detach(),
        "loss_rhn": loss_rhn,
        "loss_rnn": loss_rnn.item(),
    }


def _draw_initial(ax: Any, maps: dict[str, Any], transform_bias: float) -> None:
    """The heatmap of :func:`initial_gradients`: RHN rows, a gap, the RNN."""
    from matplotlib.colors import LogNorm

    depth, steps = maps["rhn"].shape
    gap = torch.full((1, steps), float("nan"), dtype=torch.float64)
    rows = torch.cat([maps["rhn"], gap, maps["rnn"]]).numpy()  # (D + 2, T)
    image = ax.imshow(
        np.ma.masked_invalid(rows),
        aspect="auto",
        interpolation="nearest",
        cmap="viridis",
        norm=LogNorm(),
        extent=(0.5, steps + 0.5, depth + 1.5, -0.5),
    )
    # render_png's margins are for one plot without a colour bar: set our own
    ax.set_position((0.12, 0.2, 0.74, 0.66))
    colour_bar = ax.figure.add_axes((0.88, 0.2, 0.02, 0.66))
    ax.figure.colorbar(image, cax=colour_bar, label="gradient norm")
    ax.set_yticks(
        [*range(depth), depth + 1], [*(f"RHN k={k}" for k in range(depth)), "RNN"]
    )
    ax.set_xlabel("time step t")
    ax.set_title(
        f"Before training: $D$ = {depth}, $b_T$ = {transform_bias:g}, "
        f"$T$ = {steps}; "
        f"loss RHN {maps['loss_rhn']:.3f}, RNN {maps['loss_rnn']:.3f}"
    )


@functools.lru_cache(maxsize=1)
def _bundle_source() -> str:
    if not PLAYGROUND_BUNDLE.is_file():
        raise FileNotFoundError(
            f"{PLAYGROUND_BUNDLE} is missing: rebuild it with "
            "`python -m rhn.widgets.build`"
        )
    return PLAYGROUND_BUNDLE.read_text(encoding="utf-8")


class Playground(anywidget.AnyWidget):
    """The training playground: numbers from Python, training and drawing in JS.

    Attributes:
        data: from ``rhn.widgets.playground.playground_data``, plus
            ``controls``.
        values: the sliders' setting, ``{"depth", "transform_bias", "log_lr",
            "seq_len"}``; setting it from Python moves the sliders and, for
            anything but the learning rate, restarts the training.
    """

    data = traitlets.Dict().tag(sync=True)
    values = traitlets.Dict().tag(sync=True)

    def __init__(self, data: dict[str, Any], values: dict[str, Any]) -> None:
        super().__init__(_esm=_bundle_source(), data=data, values=values)
        self.add_class(PLAYGROUND_CLASS)

    @traitlets.validate("values")
    def _check_values(self, proposal: dict[str, Any]) -> dict[str, Any]:
        return _check_setting(self.data.get("controls", []), proposal["value"])

    def png(self) -> bytes:
        """The heatmap before training at the current setting, as PNG."""
        values, data = self.values, self.data
        maps = initial_gradients(
            int(values["depth"]),
            float(values["transform_bias"]),
            int(values["seq_len"]),
            hidden_size=data["hidden_size"],
            seed=data["seed"],
            data_seed=data["data_seed"],
        )
        return figures.render_png(
            _draw_initial,
            {"maps": maps, "transform_bias": float(values["transform_bias"])},
            figsize=PNG_FIGSIZE,
            dpi=PNG_DPI * PNG_SCALE,
            record_text=True,
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        # the PNG beside the widget view is what a page without JavaScript,
        # nbconvert (PDF) and front ends without widgets show (none in Colab);
        # shown 720 px wide, drawn with 3 times the pixels
        width = round(PNG_FIGSIZE[0] * PNG_DPI)
        return with_png(super()._repr_mimebundle_(**kwargs), self.png, width)


def playground_widget(
    *,
    depth: int = 2,
    transform_bias: float = TRANSFORM_BIAS,
    learning_rate: float = 1e-2,
    seq_len: int = 30,
    hidden_size: int = 16,
    max_depth: int = 5,
    seed: int = 0,
    data_seed: int = 1,
) -> Playground:
    """The playground at a starting setting.

    Args:
        depth: the RHN's recurrence depth ``D`` (default 2).
        transform_bias: initial transform-gate bias :math:`b_T` (default -3,
            the package's :data:`rhn.defaults.TRANSFORM_BIAS`).
        learning_rate: Adam's learning rate (default 1e-2), in [1e-4, 1e-1].
        seq_len: the adding problem's ``T`` (default 30), in [2, 100].
        hidden_size: the RHN's ``H`` (default 16, at most 32).
        max_depth: the largest depth on the slider (default 5, at most 8).
        seed: seed of the initial weights (default 0).
        data_seed: seed of the browser's batch generator (default 1).
    """
    learning_rate = _checks.real("learning_rate", learning_rate)
    if not 1e-4 <= learning_rate <= 1e-1:
        raise ValueError(f"learning_rate must be in [1e-4, 0.1], got {learning_rate}")
    data = playground_data(
        hidden_size=hidden_size, max_depth=max_depth, seed=seed, data_seed=data_seed
    )
    data["controls"] = [
        _slider("depth", "RHN depth D", 1, data["max_depth"], integer=True),
        _slider("transform_bias", "transform-gate bias b_T", -6.0, 2.0),
        _slider("log_lr", "learning rate", -4.0, -1.0, power_of_ten=True),
        _slider("seq_len", "sequence length T", 2, 100, integer=True),
    ]
    values = {
        "depth": depth,
        "transform_bias": transform_bias,
        "log_lr": math.log10(learning_rate),
        "seq_len": seq_len,
    }
    return Playground(data, values)
