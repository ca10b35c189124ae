r"""Five models trained briefly on the adding problem, gradients before and after.

Chapter 9: RNN, LSTM (forget-gate bias from PyTorch's initialisation, and
+1), GRU and an RHN (``D = 3``, ``b_T = -4``) at one parameter budget (an
LSTM with 32 units) are trained on the adding problem of length ``seq_len`` with
:func:`rhn.train.train`, and the gradient norm versus lag
(:func:`rhn.gradflow.gradient_norms`) is measured on the same held-out batch
before and after training.

Example::

    >>> record = run([0], models={"GRU": ("gru", {})}, steps=2, eval_every=2)
    >>> run_ = record["runs"][0]
    >>> (run_["model"], len(run_["before"]), len(run_["history"]["test_loss"]))
    ('GRU', 50, 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from .. import tasks
from ..baselines import LSTM, count_parameters
from ..gradflow import gradient_norms

# label -> (model name for rhn.build_model, its keyword arguments)
MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "RNN": ("rnn", {}),
    "LSTM": ("lstm", {}),
    "LSTM $b_f$=1": ("lstm", {"forget_bias": 1.0}),
    "GRU": ("gru", {}),
    "RHN D=3": ("rhn", {"depth": 3, "transform_bias": -4.0}),
}
SCHEDULE = "constant"  # the learning rate: short runs need no schedule


def run(
    seeds: Sequence[int],
    models: Mapping[str, tuple[str, dict[str, Any]]] = MODELS,
    seq_len: int = 50,
    steps: int = 250,
    eval_every: int = 25,
    lr: float = 1e-2,
) -> dict[str, Any]:
    """Train every model of ``models`` from every seed; gradient norms before/after.

    Returns ``{"settings": ..., "runs": [...]}``; a run has ``model`` (the
    label), ``seed``, ``history`` (``eval_step``, ``test_loss``) and ``before``
    / ``after``: the gradient norm at lags ``0 .. seq_len - 1`` on a fixed
    held-out batch of 16 sequences.
    """
    from ..train import TrainConfig, make_model, train

    budget = count_parameters(LSTM(2, 32))
    x_test, _ = tasks.adding_problem(16, seq_len, seed=7)  # (T, B, I)
    runs = []
    for label, (name, kwargs) in models.items():
        for seed in seeds:
            config = TrainConfig(
                task="adding",
                seq_len=seq_len,
                model=name,
                hidden_size=None,
                num_params=budget,
                steps=steps,
                batch_size=32,
                lr=lr,
                lr_schedule=SCHEDULE,
                eval_every=eval_every,
                eval_samples=500,
                seed=seed,
                progress=False,
                threads=1,
                device="cpu",
                amp=False,
                **kwargs,
            )
            torch.manual_seed(config.seed)  # the initial weights train() draws
            initial = make_model(config).core
            result = train(config)
            runs.append(
                {
                    "model": label,
                    "seed": seed,
                    "history": {
                        "eval_step": list(result.history["eval_step"]),
                        "test_loss": list(result.history["test_loss"]),
                    },
                    "before": gradient_norms(initial, x_test).tolist(),
                    "after": gradient_norms(result.model.core, x_test).tolist(),
                }
            )
    return {
        "settings": {
            "seq_len": seq_len,
            "steps": steps,
            "eval_every": eval_every,
            "lr": lr,
            "lr_schedule": SCHEDULE,
            "num_params": budget,
            "batch_size": 32,
            "seeds": list(seeds),
            "models": {k: [n, kw] for k, (n, kw) in models.items()},
        },
        "runs": runs,
    }
