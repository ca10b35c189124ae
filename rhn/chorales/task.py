r"""The chorales as a task: next-step prediction, its loss, baseline and batches.

A model reads frames ``0..T-2`` of a chorale and predicts frames ``1..T-1``
(``next_step``); the loss is the negative log-likelihood of every pitch as an
independent Bernoulli, per frame (``frame_nll``), and ``baseline_nll`` the
memoryless baseline that knows only each pitch's frequency. ``generate``,
``task_loss`` and ``init_head`` plug the chorales into :mod:`rhn.tasks` and
:mod:`rhn.train`. All are importable from :mod:`rhn.chorales` and documented
there.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import torch
import torch.nn.functional as F

from .. import _checks
from .data import SPLITS, Chorales, load

__all__ = [
    "next_step",
    "frame_nll",
    "pitch_frequencies",
    "baseline_nll",
    "batches",
    "generate",
    "task_loss",
    "init_head",
]


def next_step(
    roll: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Inputs and targets for predicting every frame from the frames before it.

    The input at step ``t`` is frame ``t - 1`` (an all-silent frame at
    ``t = 0``) and the target is frame ``t``, so each of a chorale's ``T_i``
    frames is predicted once, the first one from silence.

    Args:
        roll: ``(T, B, P)`` from :func:`pad`.
        mask: ``(T, B)`` boolean.

    Returns:
        ``(inputs, targets, mask)`` of shapes ``(T, B, P)``, ``(T, B, P)`` and
        ``(T, B)``; ``targets`` is ``roll`` and ``mask`` is unchanged.
    """
    roll = _checks.float_tensor("roll", roll)
    if roll.dim() != 3 or tuple(mask.shape) != tuple(roll.shape[:2]):
        raise ValueError(
            "roll must be (T, B, P) and mask (T, B), got "
            f"{_checks.shape_str(roll.shape)} and {_checks.shape_str(mask.shape)}"
        )
    inputs = torch.cat([torch.zeros_like(roll[:1]), roll[:-1]])  # (T, B, P)
    return inputs, roll, mask


def frame_nll(
    logits: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    reduction: str = "mean",
) -> torch.Tensor:
    r"""Frame-level negative log-likelihood of a piano roll, in nats.

    Each pitch is an independent Bernoulli variable with probability
    :math:`\sigma(z_p)` given the past; the NLL of a frame :math:`y` is the sum
    of the binary cross-entropies over the ``P`` pitches,

    .. math::
        \mathcal{L}(z, y) = -\sum_{p=1}^{P} \bigl[y_p \log \sigma(z_p)
        + (1 - y_p) \log (1 - \sigma(z_p))\bigr],

    and the loss is its mean over the frames where ``mask`` is true (every
    frame counts the same, so long chorales weigh more), the convention of the
    polyphonic-music benchmarks (Boulanger-Lewandowski et al., 2012).

    Args:
        logits: ``(T, B, P)`` (any leading shape) scores :math:`z`.
        targets: 0/1 frames :math:`y` of the same shape.
        mask: boolean of the leading shape (default all true).
        reduction: ``"mean"`` (per frame, default) or ``"sum"`` (total).

    Returns:
        A scalar tensor.
    """
    logits = _checks.float_tensor("logits", logits)
    if targets.shape != logits.shape:
        raise ValueError(
            f"targets must have the shape of logits {_checks.shape_str(logits.shape)}"
            f", got {_checks.shape_str(targets.shape)}"
        )
    reduction = _checks.choice("reduction", reduction, ["mean", "sum"])
    per_frame = F.binary_cross_entropy_with_logits(
        logits, targets.to(logits.dtype), reduction="none"
    ).sum(-1)  # (T, B)
    if mask is None:
        total, count = per_frame.sum(), per_frame.numel()
    else:
        if tuple(mask.shape) != tuple(logits.shape[:-1]):
            raise ValueError(
                f"mask must have shape {_checks.shape_str(logits.shape[:-1])}, got "
                f"{_checks.shape_str(mask.shape)}"
            )
        total = per_frame.masked_fill(~mask, 0.0).sum()
        count = int(mask.sum())
    return total if reduction == "sum" else total / max(count, 1)


def pitch_frequencies(chorales: Chorales) -> torch.Tensor:
    r"""How often each pitch sounds in a set of chorales, smoothed.

    Laplace's rule, :math:`f_p = (n_p + 1) / (N + 2)` with :math:`n_p` the
    frames in which pitch :math:`p` sounds out of :math:`N` frames, so that no
    pitch gets probability 0 or 1.

    Returns:
        ``(P,)`` float64 probabilities.
    """
    if not isinstance(chorales, Chorales):
        raise TypeError(f"chorales must be Chorales, got {type(chorales).__name__}")
    counts = torch.stack([r.double().sum(0) for r in chorales.rolls]).sum(0)
    return (counts + 1.0) / (chorales.num_frames + 2.0)


def baseline_nll(chorales: Chorales, train: Chorales | None = None) -> float:
    r"""NLL per frame of the memoryless model on ``chorales``.

    The memoryless model predicts every frame with the pitch frequencies of
    ``train`` (:func:`pitch_frequencies`; default the shipped training
    split), whatever came before. On the training split no constant
    prediction does better (up to the smoothing, under 1e-3 nats); a model
    that beats it on held-out chorales does so by using the past.
    """
    if train is None:
        train = load("train")
    f = pitch_frequencies(train)
    logits = torch.log(f) - torch.log1p(-f)  # (P,) the logits of f
    total = 0.0
    for r in chorales.rolls:
        total += frame_nll(
            logits.expand(r.shape[0], -1), r.double(), reduction="sum"
        ).item()
    return total / chorales.num_frames


def batches(
    chorales: Chorales, batch_size: int, *, generator: torch.Generator
) -> Iterable[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Endless shuffled minibatches: ``(inputs, targets, mask)`` of :func:`next_step`.

    Each pass over ``chorales`` visits every chorale once, in an order drawn
    from ``generator``; a pass ends with a smaller batch when ``batch_size``
    does not divide the number of chorales.
    """
    batch_size = _checks.positive_int("batch_size", batch_size)
    while True:
        order = torch.randperm(len(chorales), generator=generator).tolist()
        for start in range(0, len(order), batch_size):
            yield next_step(*chorales.padded(order[start : start + batch_size]))


@functools.lru_cache(maxsize=8)
def _cached(split: str) -> Chorales:
    return load(split)


def generate(
    num_samples: int,
    seq_len: int | None = None,
    *,
    seed: int = 0,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
    split: str = "train",
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""The chorales in the interface of :mod:`rhn.tasks`: inputs and targets.

    With ``split="train"``, a minibatch of ``num_samples`` different training
    chorales drawn from ``generator`` (or a fresh one seeded with ``seed``);
    with ``"valid"`` or ``"test"``, the whole split in its stored order
    (``num_samples``, ``seed`` and ``generator`` are then ignored). Whole
    chorales are used; ``seq_len`` is ignored.

    Args:
        num_samples: batch size ``B`` for the training split (>= 1).
        seq_len: ignored (the task's sequences are the chorales).
        seed, generator, device: as in :func:`rhn.tasks.adding_problem`.
        dtype: floating-point dtype of inputs and targets (default float32).
        split: ``"train"`` (default), ``"valid"`` or ``"test"``.

    Returns:
        ``(inputs, targets)``, both ``(T_max, B, P)``: the inputs of
        :func:`next_step` and the target frames, which are ``-1`` on padding so
        that the targets carry the mask (``targets[..., 0] >= 0``);
        :func:`frame_nll` with that mask is the task's loss.

    >>> x, y = generate(4, seed=0)
    >>> x.shape == y.shape, x.shape[1:], bool((y[..., 0] >= 0).any(1).all())
    (True, torch.Size([4, 46]), True)
    """
    split = _checks.choice("split", split, list(SPLITS))
    data = _cached(split)
    if split == "train":
        B = _checks.positive_int("num_samples", num_samples)
        if B > len(data):
            raise ValueError(
                f"num_samples (the batch size, --batch-size) must be at most "
                f"{len(data)}, the number of training chorales, got {B}"
            )
        if generator is None:
            seed = _checks.positive_int("seed", seed, minimum=0)
            generator = torch.Generator().manual_seed(seed)
        indices = torch.randperm(len(data), generator=generator)[:B].tolist()
    else:
        indices = list(range(len(data)))
    inputs, targets, mask = next_step(*data.padded(indices))
    targets = targets.masked_fill(~mask[..., None], -1.0)
    return inputs.to(device, dtype), targets.to(device, dtype)


def task_loss(prediction: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """:func:`frame_nll` of targets from :func:`generate` (``-1`` marks padding)."""
    mask = targets[..., 0] >= 0  # (T, B)
    return frame_nll(prediction, targets.clamp(min=0.0), mask)


@torch.no_grad()
def init_head(head: torch.nn.Linear) -> None:
    r"""Start an output layer at the memoryless baseline.

    Sets the bias to the log-odds :math:`\log f_p - \log(1 - f_p)` of the
    training frequencies (:func:`pitch_frequencies`) and the weights to zero,
    so the untrained model predicts exactly like :func:`baseline_nll`'s model;
    whatever it gains below the baseline it learns from the past.
    """
    if not isinstance(head, torch.nn.Linear):
        raise TypeError(f"head must be an nn.Linear, got {type(head).__name__}")
    f = pitch_frequencies(_cached("train"))
    if head.out_features != f.numel():
        raise ValueError(
            f"head must have {f.numel()} outputs (one per pitch), got "
            f"{head.out_features}"
        )
    head.weight.zero_()
    head.bias.copy_(torch.log(f) - torch.log1p(-f))
