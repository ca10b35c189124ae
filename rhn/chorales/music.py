r"""Listening to the chorales: sampling continuations from a model, and audio.

``sample_continuation`` lets a trained model continue a piano roll frame by
frame; ``synthesize`` renders a roll as a waveform to play in a notebook. Both
are importable from :mod:`rhn.chorales` and documented there.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .. import _checks
from .data import LOWEST

__all__ = ["sample_continuation", "synthesize"]


@torch.no_grad()
def sample_continuation(
    model: torch.nn.Module,
    prime: torch.Tensor,
    steps: int,
    *,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    r"""Continue a piano roll by sampling the model one frame at a time.

    The model reads ``prime`` (after an all-silent start frame, as in
    training); then each new frame is drawn pitch by pitch from the Bernoulli
    probabilities :math:`\sigma(z_p)` the model gives and fed back as the next
    input.

    Args:
        model: a :class:`rhn.train.SequenceModel` with ``readout="all"`` (a
            recurrent ``core`` that takes and returns a state, and a ``head``).
        prime: ``(T0, P)`` the beginning to continue (``T0 >= 1``).
        steps: how many frames to sample.
        generator: CPU generator for the draws (default a fresh one, seed 0).

    Returns:
        ``(steps, P)`` tensor of 0s and 1s, on ``prime``'s device.
    """
    prime = _checks.float_tensor("prime", prime)
    if prime.dim() != 2 or prime.shape[0] == 0:
        raise ValueError(
            f"prime must have shape (T0, P) with T0 >= 1, got "
            f"{_checks.shape_str(prime.shape)}"
        )
    steps = _checks.positive_int("steps", steps)
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    was_training = model.training
    model.eval()
    x = torch.cat([torch.zeros_like(prime[:1]), prime])[:, None]  # (T0+1, 1, P)
    output, state = model.core(x)
    frames = []
    for _ in range(steps):
        p = torch.sigmoid(model.head(output[-1]))  # (1, P)
        u = torch.rand(p.shape, generator=g, dtype=p.dtype).to(p.device)
        frame = (u < p).to(prime.dtype)  # (1, P)
        frames.append(frame[0])
        output, state = model.core(frame[None], state)
    model.train(was_training)
    return torch.stack(frames)


def synthesize(
    roll: torch.Tensor | np.ndarray,
    *,
    lowest: int = LOWEST,
    rate: int = 8000,
    seconds_per_step: float = 0.5,
) -> np.ndarray:
    r"""Render a piano roll as audio: a soft organ-like tone per sounding pitch.

    A pitch that sounds over consecutive frames is one held note (the roll
    has no onsets), with a 10 ms fade in and out against clicks. Each note is
    a sine at its equal-tempered frequency :math:`440 \cdot 2^{(m - 69)/12}` Hz
    plus a quieter octave; the sum is scaled into ``[-1, 1]``.

    Args:
        roll: ``(T, P)`` 0/1 frames.
        lowest: MIDI number of column 0 (default :data:`~rhn.chorales.data.LOWEST`).
        rate: samples per second (default 8000, enough for pitches up to A5).
        seconds_per_step: duration of one frame (default 0.5: a quarter note at
            120 beats per minute).

    Returns:
        ``(T * seconds_per_step * rate,)`` float32 samples, for
        ``IPython.display.Audio(samples, rate=rate)``.
    """
    frames = np.asarray(roll.cpu() if isinstance(roll, torch.Tensor) else roll)
    if frames.ndim != 2:
        raise ValueError(f"roll must have shape (T, P), got {frames.shape}")
    rate = _checks.positive_int("rate", rate)
    n = round(_checks.real("seconds_per_step", seconds_per_step) * rate)
    if n < 1:
        raise ValueError(f"seconds_per_step must be > 0, got {seconds_per_step}")
    T, P = frames.shape
    audio = np.zeros(T * n)
    t = np.arange(T * n) / rate
    fade = max(1, round(0.01 * rate))
    on = np.asarray(frames) > 0.5
    for p in range(P):
        padded = np.concatenate([[False], on[:, p], [False]])
        edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
        for start, stop in zip(edges[::2], edges[1::2], strict=True):
            a, b = start * n, stop * n
            env = np.ones(b - a)
            ramp = np.linspace(0.0, 1.0, min(fade, (b - a) // 2) + 1)[1:]
            env[: len(ramp)] = ramp
            env[len(env) - len(ramp) :] = np.minimum(env[-len(ramp) :], ramp[::-1])
            freq = 440.0 * 2.0 ** ((lowest + p - 69) / 12)
            phase = 2 * math.pi * freq * t[a:b]
            audio[a:b] += env * (np.sin(phase) + 0.3 * np.sin(2 * phase))
    peak = np.abs(audio).max()
    return (audio / peak if peak > 0 else audio).astype(np.float32)


# ---------------------------------------------------------------- regeneration
