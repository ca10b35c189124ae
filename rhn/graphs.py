r"""A whole training step captured once as a CUDA graph, then replayed.

At the sizes of this book an RHN training step on a GPU is bound by launch
overhead, not arithmetic: the forward issues a few kernels per micro-layer
and step (:mod:`rhn.fast`, :mod:`rhn.fused`), the backward as many again, and
the CPU has to issue each of them. A CUDA graph records the kernels of one
step once and replays them with a single launch (``torch.cuda.graph``), so
the CPU cost of issuing them is paid once.

:class:`GraphedStep` captures forward, loss, backward, gradient clipping and
the optimizer step for inputs of one fixed shape::

    model = rhn.RHN(64, 256, depth=5, device="cuda")
    head = torch.nn.Linear(256, 10, device="cuda")
    params = [*model.parameters(), *head.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3, capturable=True)

    def loss_fn(x, y):
        return F.cross_entropy(head(model(x)[0][-1]), y)

    step = rhn.graphs.GraphedStep(loss_fn, params, opt, x0, y0, clip=1.0)
    for x, y in batches:               # every batch of x0's and y0's shape
        loss = step(x, y)              # a tensor: .item() only when needed

The rules of CUDA graphs apply (see the PyTorch documentation on CUDA graphs):
shapes, dtypes and devices are fixed; nothing in the step may synchronise
with the CPU (no ``.item()``, no ``GradScaler``, which checks for infinities
on the CPU, so float16 autocast is out and bfloat16 is in); an Adam-type
optimizer needs ``capturable=True``; a learning rate stored as a Python float
is frozen into the graph (give the optimizer a tensor ``lr`` and change it in
place to schedule it). Dropout works: every replay draws fresh masks from the
graph's own random-number offsets, so they differ from an eager run's.

The warm-up steps that must run before a capture (they create the optimizer
state and the libraries' workspaces) are undone: the parameters are put back
and the optimizer state is reset, so the first replay is the first step,
exactly for Adam, AdamW and SGD without dampening.

On the CPU there is nothing to capture: ``GraphedStep`` raises a
``RuntimeError`` unless ``capture=False``, which runs the same step with the
same static buffers eagerly (the stand-in that the tests use).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterable

import torch

__all__ = ["GraphedStep", "capture_forward_backward", "training_step"]


def training_step(
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    params: list[torch.Tensor],
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    clip: float | None = None,
    amp_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """One training step that never synchronises with the CPU.

    Forward and loss (under ``torch.autocast`` with ``amp_dtype`` if given,
    its weight cache off as graph capture requires), backward, optional
    gradient-norm clipping to ``clip``, optimizer step. The gradients must be
    ``None`` or zero on entry. Returns the loss, detached, as a tensor.
    """
    amp = (
        torch.autocast(x.device.type, dtype=amp_dtype, cache_enabled=False)
        if amp_dtype is not None
        else contextlib.nullcontext()
    )
    with amp:
        loss = loss_fn(x, y)
    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(params, clip, foreach=True)
    optimizer.step()
    return loss.detach()


def _check_optimizer(optimizer: torch.optim.Optimizer, capture: bool) -> None:
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError(
            f"optimizer must be a torch.optim.Optimizer, got {type(optimizer).__name__}"
        )
    if capture and optimizer.defaults.get("capturable") is False:
        raise ValueError(
            f"optimizer must be created with capturable=True to be captured in a "
            f"CUDA graph, got {type(optimizer).__name__}(capturable=False)"
        )


class GraphedStep:
    r"""A training step for fixed-shape inputs, captured as a CUDA graph.

    Args:
        loss_fn: ``loss_fn(x, y)`` returns the scalar loss of a batch.
        params: the parameters that ``optimizer`` updates (all of them are
            clipped together when ``clip`` is given).
        optimizer: the optimizer; Adam-type optimizers need
            ``capturable=True``.
        x, y: an example batch; every later batch must have the same shapes,
            dtypes and device. This batch is used for the warm-up steps,
            which are undone.
        clip: clip the gradient norm to this value (default ``None``: no
            clipping).
        amp_dtype: run forward and loss under ``torch.autocast`` with this
            dtype (default ``None``). ``torch.bfloat16`` works; float16
            needs a ``GradScaler``, which cannot be captured.
        warmup: eager steps before the capture (default 3).
        capture: ``True`` (default) captures a CUDA graph and requires CUDA
            tensors; ``False`` runs the same step eagerly on any device.

    Call it with a batch ``(x, y)``: the batch is copied into the static
    input buffers, the graph is replayed, and the loss tensor (valid until
    the next call) is returned.

    Raises:
        RuntimeError: if ``capture`` and the batch is not on a CUDA device.
        ValueError: if a later batch has another shape, dtype or device, or an
            Adam-type optimizer is not capturable.
    """

    def __init__(
        self,
        loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        params: Iterable[torch.Tensor],
        optimizer: torch.optim.Optimizer,
        x: torch.Tensor,
        y: torch.Tensor,
        *,
        clip: float | None = None,
        amp_dtype: torch.dtype | None = None,
        warmup: int = 3,
        capture: bool = True,
    ) -> None:
        if capture and (x.device.type != "cuda" or not torch.cuda.is_available()):
            raise RuntimeError(
                f"GraphedStep captures a CUDA graph and needs CUDA tensors, got x on "
                f"{x.device}; use capture=False to run the same step eagerly"
            )
        _check_optimizer(optimizer, capture)
        if amp_dtype == torch.float16 and capture:
            raise ValueError(
                "amp_dtype=torch.float16 needs a GradScaler, which synchronises "
                "with the CPU and cannot be captured; use torch.bfloat16"
            )
        self.params = list(params)
        self.optimizer = optimizer
        self.capture = capture
        self._run = lambda: training_step(
            loss_fn, self.params, optimizer, self.x, self.y, clip=clip,
            amp_dtype=amp_dtype,
        )  # fmt: skip
        self.x = x.detach().clone()  # the static input buffers
        self.y = y.detach().clone()
        # the warm-up and the capture draw random numbers (dropout masks) that
        # no real step uses: the generators go back to where they were, so the
        # first replay draws what the first eager step would, and a run
        # resumed from a checkpoint (which captures again) draws as the
        # uninterrupted one
        rng = torch.get_rng_state()
        cuda_rng = torch.cuda.get_rng_state(x.device) if capture else None
        self._warm_up(max(0, int(warmup)))
        self.graph = None
        self.loss: torch.Tensor | None = None
        if capture:
            self.optimizer.zero_grad(set_to_none=True)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.loss = self._run()
        torch.set_rng_state(rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state(cuda_rng, x.device)

    def _warm_up(self, steps: int) -> None:
        """Run ``steps`` eager steps (on a side stream on CUDA), then undo them."""
        saved_params = [p.detach().clone() for p in self.params]
        saved_state = copy.deepcopy(self.optimizer.state_dict()["state"])
        stream = None
        if self.capture:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream) if stream else contextlib.nullcontext():
            for _ in range(steps):
                self.optimizer.zero_grad(set_to_none=True)
                self._run()
        if stream is not None:
            torch.cuda.current_stream().wait_stream(stream)
        with torch.no_grad():
            for p, saved in zip(self.params, saved_params, strict=True):
                p.copy_(saved)
            # in place, so that a captured optimizer sees the same tensors
            ids = {id(p): i for i, p in enumerate(self._all_params())}
            for p, state in self.optimizer.state.items():
                before = saved_state.get(ids[id(p)], {})
                for key, value in state.items():
                    if not isinstance(value, torch.Tensor):
                        continue
                    if key in before:
                        value.copy_(before[key])
                    else:  # created by the warm-up: a fresh state is zero
                        value.zero_()
        self.optimizer.zero_grad(set_to_none=True)

    def _all_params(self) -> list[torch.Tensor]:
        """The optimizer's parameters in ``state_dict`` order."""
        return [p for group in self.optimizer.param_groups for p in group["params"]]

    def _check_batch(self, name: str, value: object, like: torch.Tensor) -> None:
        if not isinstance(value, torch.Tensor):
            raise TypeError(
                f"{name} must be a torch.Tensor, got {type(value).__name__}"
            )
        if (value.shape, value.dtype, value.device) != (
            like.shape,
            like.dtype,
            like.device,
        ):
            raise ValueError(
                f"{name} must have the captured shape {tuple(like.shape)}, dtype "
                f"{like.dtype} and device {like.device}, got {tuple(value.shape)}, "
                f"{value.dtype}, {value.device}"
            )

    def __call__(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        self._check_batch("x", x, self.x)
        self._check_batch("y", y, self.y)
        self.x.copy_(x)
        self.y.copy_(y)
        if self.graph is not None:
            self.graph.replay()
            assert self.loss is not None
            return self.loss
        self.optimizer.zero_grad(set_to_none=True)
        self.loss = self._run()
        return self.loss


def capture_forward_backward(
    model: torch.nn.Module, x: torch.Tensor, warmup: int = 3
) -> Callable[[], None]:
    """Capture ``model(x)[0].sum().backward()`` as a CUDA graph; return its replay.

    The benchmark's graphed variant: each call of the returned function
    recomputes the output for the current contents of ``x`` and leaves the
    gradients in the parameters' ``.grad`` (overwritten, not accumulated).

    Raises:
        RuntimeError: if ``x`` is not a CUDA tensor.
    """
    if x.device.type != "cuda" or not torch.cuda.is_available():
        raise RuntimeError(
            f"capture_forward_backward captures a CUDA graph and needs a CUDA "
            f"tensor, got x on {x.device}"
        )
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            model.zero_grad(set_to_none=True)
            model(x)[0].sum().backward()
    torch.cuda.current_stream().wait_stream(stream)
    model.zero_grad(set_to_none=True)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        model(x)[0].sum().backward()
    return graph.replay
