r"""Recurrent Highway Networks in PyTorch, the package behind the RHN book.

Notation, shared by the code and every chapter of the book:

=========  ==============================================================
symbol     meaning
=========  ==============================================================
``T``      number of time steps
``B``      batch size
``I``      input size (features per time step)
``H``      hidden (state) size
``D``      recurrence depth: highway micro-layers per time step (the
           paper's ``L``)
``N``      number of stacked layers
``G``      gate blocks per weight matrix: 2 (``[H; T]``, coupled carry)
           or 3 (``[H; T; C]``)
``P``      pitch columns of a piano roll (:mod:`rhn.chorales`)
=========  ==============================================================

Sequences are time-first, ``(T, B, I)``, like ``torch.nn.LSTM``;
``batch_first=True`` switches to ``(B, T, I)``.
"""

import importlib

from ._stack import DropoutMasks
from .baselines import (
    GRU,
    LSTM,
    MODELS,
    RNN,
    build_model,
    count_parameters,
    matched_hidden_size,
)
from .cells import DTRNN, RHN, DTRNNCell, RHNCell
from .highway import Highway

__version__ = "0.1.0"

# Submodules load on first use (``rhn.analysis``, ``rhn.widgets``, ...), so
# ``import rhn`` stays light: plotting, widgets and training pull in matplotlib,
# ipywidgets and tqdm only when a chapter asks for them.
_SUBMODULES = (
    "analysis",
    "bench",
    "chorales",
    "defaults",
    "devices",
    "diagrams",
    "experiments",
    "fast",
    "fused",
    "gradflow",
    "graphs",
    "highway",
    "plots",
    "results",
    "spectra",
    "tasks",
    "train",
    "widgets",
)


def __getattr__(name: str) -> object:
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'rhn' has no attribute {name!r}")


__all__ = [
    "RHNCell",
    "RHN",
    "Highway",
    "DTRNNCell",
    "DTRNN",
    "DropoutMasks",
    "RNN",
    "LSTM",
    "GRU",
    "MODELS",
    "build_model",
    "count_parameters",
    "matched_hidden_size",
]
