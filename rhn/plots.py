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
