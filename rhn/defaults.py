r"""The package's default settings, in one place, and the rule behind the bias.

:class:`rhn.RHN`, :class:`rhn.RHNCell`, :class:`rhn.train.TrainConfig` and the
``python -m rhn train`` command line all read their defaults from here, so they
cannot disagree. The values are a start for long memories, not a measured
optimum (chapter 13 says how to choose); what the book measured at them:

- **Transform-gate bias** :math:`b_T = -3` (:data:`TRANSFORM_BIAS`). Chapter 11
  trains the RHN with it (depth 2, :math:`H = 48`): the adding problem with
  :math:`T = 100` is solved (held-out MSE below 0.01) in all five seeds,
  after 500 to 550 steps, and the temporal-order task reaches 100 % held-out
  accuracy in all five seeds at depths 1 and 2. At :math:`b_T = -2`, the
  package's earlier default, chapter 11 measures that an RHN of depth
  3 or more loses gradient per step faster than a tanh RNN with weight scale
  :math:`g = 1` (factor per step 0.75 to 0.77 at :math:`D = 3`, three seeds).
  :class:`rhn.Highway` starts from the same value
  (:data:`HIGHWAY_TRANSFORM_BIAS`): chapter 5's 50-layer highway networks
  learn slowly at :math:`-2` (every run still at a loss of 0.28 or more
  after 200 steps) and go further at :math:`-3` in 43 of 50 runs. A
  chapter that uses another value says why (chapter 7's figures and the
  chorales task use :math:`-2`, the paper's Penn Treebank setting).
- **Recurrence depth** :math:`D = 2` (:data:`DEPTH`), the depth of chapter 11's
  sweeps. At a fixed parameter budget deeper cells needed more steps there
  (mean steps to solve the adding problem, over the seeds that solved it:
  500, 530, 590 and 750 at :math:`D = 1, 2, 3, 4`) and depth 4 failed one
  seed of five on each task: depth 1 did as well, and :math:`D = 2` is the
  default as the smallest depth at which a step is a deep transition.

A deeper cell keeps the same memory per time step only with a more negative
bias: each micro-layer multiplies the carried state by :math:`1 - \sigma(b)`,
so a step of depth :math:`D` keeps :math:`(1 - \sigma(b))^D`.
:func:`matched_transform_bias` solves for the bias that keeps the carry of a
reference cell; for very negative biases it is about :math:`b_1 - \ln D`
(chapter 8, exercise 1; chapter 11, exercise 4).
"""

from __future__ import annotations

import math

from . import _checks

__all__ = [
    "TRANSFORM_BIAS",
    "DEPTH",
    "HIGHWAY_TRANSFORM_BIAS",
    "matched_transform_bias",
]

TRANSFORM_BIAS = -3.0
"""Initial transform-gate bias :math:`b_T` of :class:`rhn.RHN` and its cells."""

DEPTH = 2
"""Recurrence depth :math:`D` of :class:`rhn.RHN`, its cells and the trainer."""

HIGHWAY_TRANSFORM_BIAS = TRANSFORM_BIAS
"""Initial gate bias of the feed-forward :class:`rhn.Highway` layer: the same
:math:`-3` (chapter 5: a 50-layer highway network learns slowly at :math:`-2`)."""


def matched_transform_bias(
    depth: int, reference_bias: float = TRANSFORM_BIAS, reference_depth: int = 1
) -> float:
    r"""The transform-gate bias that gives a cell of ``depth`` the carry of another.

    At initialisation, with small weights, one time step of a coupled RHN of
    depth :math:`D` multiplies its state by about :math:`(1 - \sigma(b))^D`.
    This returns the :math:`b` with

    .. math::
        (1 - \sigma(b))^{D} = (1 - \sigma(b_{\text{ref}}))^{D_{\text{ref}}},

    that is :math:`b = \operatorname{logit}\bigl(1 - (1 -
    \sigma(b_{\text{ref}}))^{D_{\text{ref}}/D}\bigr)`, close to
    :math:`b_{\text{ref}} - \ln(D / D_{\text{ref}})` for very negative biases.

    Args:
        depth: the depth ``D`` of the cell to initialise.
        reference_bias: the bias of the reference cell (default
            :data:`TRANSFORM_BIAS`).
        reference_depth: the depth of the reference cell (default 1).

    Returns:
        The bias, a float.

    Example::

        >>> round(matched_transform_bias(10, -2.0), 2)   # chapter 8, exercise 1
        -4.36
        >>> round(matched_transform_bias(4, -3.0), 1)    # chapter 11, exercise 4
        -4.4
    """
    depth = _checks.positive_int("depth", depth)
    reference_depth = _checks.positive_int("reference_depth", reference_depth)
    b = _checks.real("reference_bias", reference_bias)
    # log(1 - sigma(b)) = -softplus(b), computed without cancellation
    log_keep = -(max(b, 0.0) + math.log1p(math.exp(-abs(b))))
    log_keep_per_layer = log_keep * reference_depth / depth
    # sigma(b') = 1 - exp(log_keep_per_layer); b' = log(sigma / (1 - sigma))
    open_ = -math.expm1(log_keep_per_layer)
    if open_ <= 0.0:
        raise ValueError(
            f"reference_bias={reference_bias} keeps the state exactly: no finite "
            "bias matches it"
        )
    return math.log(open_) - log_keep_per_layer
