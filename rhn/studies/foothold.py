r"""The adding problem with and without its late marked value (chapter 13).

Two tasks on the same sequences (:func:`rhn.tasks.adding_problem` with
``first_within=10`` and :func:`rhn.tasks.marked_recall` with ``within=10``,
drawn from the same seeds): the first marked value lies in the first 10 of
``T = 100`` steps, so it must be held 90 to 99 steps. The adding problem also
marks a second value in the last half and asks for the sum; the recall task
drops that marker and asks for the first value alone. The late value's
gradient reaches a model over fewer than 50 steps (the study's name: a
foothold near the end); the recall task offers none.

The GRU and the package's RHN (``D = 2``, ``b_T = -3``) train on both with the
settings of chapter 11's race (:data:`SETTINGS`: its budget of 9,649
parameters, 1,000 Adam steps at ``5e-3`` decayed along a cosine, batches of
64), each from every seed, and both again at a learning rate four times
higher, ``2e-2``. The held-out set of a run is drawn with
:func:`rhn.train.train`'s usual seed ``2 s + 1``.

Example::

    >>> record = run([0], models={"GRU": ("gru", {})}, steps=2, eval_every=2)
    >>> [(r["task"], r["model"], len(r["history"]["test_loss"]))
    ...  for r in record["runs"]]
    [('adding', 'GRU', 1), ('recall', 'GRU', 1)]
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from .. import tasks

# label -> (model name for rhn.build_model, its keyword arguments)
# (a setting of SETTINGS among the arguments replaces it for that model)
MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "GRU": ("gru", {}),
    "RHN": ("rhn", {"depth": 2, "transform_bias": -3.0}),
    "GRU, lr 0.02": ("gru", {"lr": 2e-2}),
    "RHN, lr 0.02": ("rhn", {"depth": 2, "transform_bias": -3.0, "lr": 2e-2}),
}
WITHIN = 10
"""The first marked value lies in the first ``WITHIN`` steps."""
SETTINGS: dict[str, Any] = {
    "seq_len": 100,
    "num_params": 9649,
    "steps": 1000,
    "batch_size": 64,
    "lr": 5e-3,
    "lr_schedule": "cosine",
    "eval_every": 50,
    "eval_samples": 500,
}
"""Chapter 11's race (``adding_models.json``), but for the tasks."""


def task(name: str) -> tasks.Task:
    """``"adding"`` (the adding problem, first marker in the first
    :data:`WITHIN` steps) or ``"recall"`` (that marker alone) as a
    :class:`rhn.tasks.Task` that :func:`rhn.train.train` takes."""
    adding = tasks.TASKS["adding"]
    if name == "adding":
        generate = functools.partial(tasks.adding_problem, first_within=WITHIN)
        return dataclasses.replace(
            adding, name=f"adding_first{WITHIN}", generate=generate
        )
    if name == "recall":
        generate = functools.partial(tasks.marked_recall, within=WITHIN)
        return dataclasses.replace(
            adding,
            name=f"marked_recall{WITHIN}",
            generate=generate,
            baseline=lambda seq_len: tasks.marked_recall_baseline(),
        )
    raise ValueError(f"task must be 'adding' or 'recall', got {name!r}")


def run(
    seeds: Sequence[int],
    models: Mapping[str, tuple[str, dict[str, Any]]] = MODELS,
    steps: int = SETTINGS["steps"],
    eval_every: int = SETTINGS["eval_every"],
) -> dict[str, Any]:
    """Train every model of ``models`` on both tasks from every seed.

    Returns ``{"settings": ..., "runs": [...]}``; a run has ``task``
    (``"adding"`` or ``"recall"``), ``model`` (the label), ``seed``,
    ``baseline`` (the task's memoryless MSE: 1/6 and 1/12), ``history``
    (``eval_step``, ``test_loss``) and ``test_loss``, the final one.
    """
    from ..train import TrainConfig, train

    settings = {**SETTINGS, "steps": steps, "eval_every": eval_every}
    runs = []
    for task_name in ("adding", "recall"):
        built = task(task_name)
        for label, (name, kwargs) in models.items():
            for seed in seeds:
                config = TrainConfig(
                    task=built,
                    model=name,
                    hidden_size=None,
                    seed=seed,
                    progress=False,
                    threads=1,
                    device="cpu",
                    **{**settings, **kwargs},
                )
                result = train(config)
                runs.append(
                    {
                        "task": task_name,
                        "model": label,
                        "seed": seed,
                        "baseline": result.metrics["baseline"],
                        "history": {
                            "eval_step": list(result.history["eval_step"]),
                            "test_loss": list(result.history["test_loss"]),
                        },
                        "test_loss": result.metrics["test_loss"],
                    }
                )
    return {
        "settings": {
            **settings,
            "within": WITHIN,
            "seeds": list(seeds),
            "models": {k: [n, kw] for k, (n, kw) in models.items()},
        },
        "runs": runs,
    }
