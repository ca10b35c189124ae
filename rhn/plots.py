"""Plotting helpers shared by every chapter.

Every function is pure: ``f(data, ax=None, **style) -> Axes``. It draws on
``ax`` (or on a new figure's axes) and returns the axes, so chapters and
widgets compose them freely. One colour scheme, :data:`COLORS`, is used for
the same thing everywhere in the book.
"""

from __future__ import annotations

__all__ = ["COLORS"]

COLORS: dict[str, str] = {
    # models
    "rhn": "#1f77b4",  # blue
    "lstm": "#ff7f0e",  # orange
    "gru": "#2ca02c",  # green
    "rnn": "#d62728",  # red
    # spectra
    "disc": "#1f77b4",
    "eigenvalue": "#d62728",
    "unit_circle": "#555555",
    "baseline": "#7f7f7f",  # constant-prediction baselines, reference lines
}
"""Colour for each model and each element of a spectrum plot."""


# --- gradient norm versus lag or layer (rhn.gradflow) --------------------------


def plot_gradient_norms(
    curves: dict[str, object],
    ax: object = None,
    *,
    colors: dict[str, str] | None = None,
    styles: dict[str, str] | None = None,
    xlabel: str = "lag $k$ (steps before the end)",
    ylabel: str = "mean gradient norm",
    title: str | None = None,
    legend: bool = True,
) -> object:
    r"""Gradient norm against lag (or layer) on a log scale, one line per curve.

    Made for :func:`rhn.gradflow.gradient_norms` and
    :func:`rhn.gradflow.layer_gradient_norms`. Zeros (an underflow) and
    non-finite values are left out of the line rather than drawn at the axis.

    Args:
        curves: ``{label: values}``, each a 1-D tensor, array or list.
        ax: the axes to draw on (default: a new figure).
        colors: ``{label: colour}``; a label without one takes the model
            colour of :data:`COLORS` whose key starts it (``"lstm"``,
            ``"RHN D=3"`` ...), else matplotlib's cycle.
        styles: ``{label: linestyle}`` (default solid).
        xlabel, ylabel, title: axis labels and title.
        legend: draw a legend (default ``True``).

    Returns:
        The axes.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    if not isinstance(curves, dict) or not curves:
        raise TypeError("curves must be a non-empty dict {label: 1-D values}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    colors = colors or {}
    styles = styles or {}
    for label, values in curves.items():
        if hasattr(values, "detach"):
            values = values.detach().cpu().double().numpy()
        y = np.asarray(values, dtype=float)
        if y.ndim != 1:
            raise ValueError(
                f"curves[{label!r}] must be 1-D, got shape {tuple(y.shape)}"
            )
        y = np.where(np.isfinite(y) & (y > 0), y, np.nan)
        color = colors.get(label)
        if color is None:
            key = str(label).split()[0].lower() if str(label).split() else ""
            color = COLORS.get(key) if key in ("rhn", "lstm", "gru", "rnn") else None
        ax.plot(
            np.arange(len(y)),
            y,
            label=str(label),
            color=color,
            linestyle=styles.get(label, "-"),
        )
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if legend:
        ax.legend(fontsize="small")
    return ax


__all__ += ["plot_gradient_norms"]
