r"""Long memory under noise: five models, each at its own best learning rate.

The study behind the chapter "When to use an RHN". The task is
:func:`rhn.tasks.sine_memory`: a noisy sine at one of four frequencies for the
first 10 steps, then only noise until the end, where the frequency must be
named. A tanh RNN, an LSTM (forget-gate bias from PyTorch's initialisation,
and +1), a GRU and an RHN (:math:`D = 2`, :math:`b_T = -3`, the package's
defaults) are trained at one parameter budget (that of an LSTM with 32 units)
with :func:`rhn.train.train`.

So that no model loses by its learning rate, the study runs in two stages:

1. **Search**: every model at every rate of ``lrs`` from the ``search_seeds``;
   a model's rate is the one with the lowest mean final held-out loss.
2. **Final**: every model at its chosen rate from the ``seeds`` (distinct from
   the search seeds, so the choice is not scored on the runs that made it).

A run *solves* the task when its held-out accuracy reaches ``solve_accuracy``;
its steps to solve are the first evaluation step at which it does.

Example::

    >>> record = run([0], models={"GRU": ("gru", {})}, lrs=(1e-2,),
    ...              search_seeds=(9,), steps=4, eval_every=2, seq_len=12)
    >>> record["chosen_lr"], len(record["search"]), len(record["runs"])
    ({'GRU': 0.01}, 1, 1)
    >>> run_ = record["runs"][0]
    >>> run_["model"], run_["lr"], run_["history"]["eval_step"]
    ('GRU', 0.01, [2, 4])

A record can grow by a model, with the first record's settings, and say so in
its ``extended`` list (:func:`extend`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..baselines import LSTM, count_parameters

# label -> (model name for rhn.build_model, its keyword arguments)
MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "RNN": ("rnn", {}),
    "LSTM": ("lstm", {}),
    "LSTM $b_f$=1": ("lstm", {"forget_bias": 1.0}),
    "GRU": ("gru", {}),
    "RHN D=2": ("rhn", {"depth": 2, "transform_bias": -3.0}),
    # the forget-gate bias that gives the LSTM the RHN's carry per step at
    # initialisation: sigma(b_f) = (1 - sigma(-3))^2 = 0.907, b_f = 2.28
    "LSTM $b_f$=2.28": ("lstm", {"forget_bias": 2.28}),
}

LRS = (1e-3, 3e-3, 1e-2)
"""The Adam learning rates searched for every model."""

SEARCH_SEEDS = (100, 101)
"""Seeds of the search stage (the final runs use others)."""


def train_one(
    name: str,
    kwargs: Mapping[str, Any],
    seed: int,
    lr: float,
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """One run of the study: model ``name`` from ``seed`` at the rate ``lr``.

    Every run of :func:`run`, in the search and in the final stage, is a call
    of this function, so a chapter can repeat one run of a record at its
    settings.

    Args:
        name: the model's name for :func:`rhn.build_model` (``"rhn"``,
            ``"lstm"``, ...), as in the values of ``MODELS``.
        kwargs: the model's keyword arguments (``depth``, ``forget_bias``,
            ...), the other half of such a value.
        seed: the run's seed (``TrainConfig.seed``).
        lr: the Adam learning rate.
        settings: the study's settings, as :func:`run` returns them in its
            record (``record["settings"]``): ``seq_len``, ``num_params``,
            ``steps``, ``batch_size``, ``eval_every``, ``eval_samples`` and
            ``solve_accuracy`` are read.

    Returns:
        The run as a record stores it: ``seed``, ``lr``, the final held-out
        ``loss`` and ``accuracy``, ``steps_to_solve`` (the first evaluation
        step with accuracy at least ``solve_accuracy``, ``None`` if none),
        ``hidden_size``, ``num_params`` and the ``history`` of evaluations
        (``eval_step``, ``test_loss``, ``test_accuracy``).
    """
    from ..train import TrainConfig, train

    config = TrainConfig(
        task="sine_memory",
        seq_len=settings["seq_len"],
        model=name,
        hidden_size=None,
        num_params=settings["num_params"],
        steps=settings["steps"],
        batch_size=settings["batch_size"],
        lr=lr,
        eval_every=settings["eval_every"],
        eval_samples=settings["eval_samples"],
        seed=seed,
        progress=False,
        threads=1,
        device="cpu",
        amp=False,
        **kwargs,
    )
    result = train(config)
    history = result.history
    accuracy = list(history["test_accuracy"])
    solved = [
        s
        for s, a in zip(history["eval_step"], accuracy, strict=True)
        if a >= settings["solve_accuracy"]
    ]
    return {
        "seed": seed,
        "lr": lr,
        "loss": history["test_loss"][-1],
        "accuracy": accuracy[-1],
        "steps_to_solve": solved[0] if solved else None,
        "hidden_size": result.metrics["hidden_size"],
        "num_params": result.metrics["num_params"],
        "history": {
            "eval_step": list(history["eval_step"]),
            "test_loss": list(history["test_loss"]),
            "test_accuracy": accuracy,
        },
    }


def run(
    seeds: Sequence[int],
    models: Mapping[str, tuple[str, dict[str, Any]]] = MODELS,
    lrs: Sequence[float] = LRS,
    search_seeds: Sequence[int] = SEARCH_SEEDS,
    seq_len: int = 60,
    steps: int = 2500,
    eval_every: int = 100,
    batch_size: int = 32,
    eval_samples: int = 500,
    solve_accuracy: float = 0.9,
    progress: bool = False,
) -> dict[str, Any]:
    """Search a learning rate per model, then train each at it from ``seeds``.

    Returns ``{"settings", "search", "chosen_lr", "runs"}``: ``search`` and
    ``runs`` are lists of runs, each with ``model``, ``seed``, ``lr``, the
    final held-out ``loss`` and ``accuracy``, ``steps_to_solve`` (``None``
    if never solved), ``hidden_size``, ``num_params`` and the ``history`` of
    evaluations; ``chosen_lr`` maps each model's label to its rate.
    """
    if set(seeds) & set(search_seeds):
        raise ValueError(
            f"seeds must differ from the search seeds {list(search_seeds)}, got "
            f"{list(seeds)}"
        )
    settings = {
        "task": "sine_memory",
        "seq_len": seq_len,
        "steps": steps,
        "eval_every": eval_every,
        "batch_size": batch_size,
        "eval_samples": eval_samples,
        "num_params": count_parameters(LSTM(1, 32)),
        "lr_schedule": "cosine",
        "optimizer": "adam",
        "solve_accuracy": solve_accuracy,
        "lrs": list(lrs),
        "search_seeds": list(search_seeds),
        "seeds": list(seeds),
        "models": {k: [n, kw] for k, (n, kw) in models.items()},
    }
    search, chosen, runs = [], {}, []
    for label, (name, kwargs) in models.items():
        mean_loss = {}
        for lr in lrs:
            found = [train_one(name, kwargs, s, lr, settings) for s in search_seeds]
            search += [{"model": label, **r} for r in found]
            mean_loss[lr] = sum(r["loss"] for r in found) / len(found)
            if progress:
                print(label, "lr", lr, [round(r["accuracy"], 3) for r in found])
        chosen[label] = min(lrs, key=lambda lr: mean_loss[lr])
        for seed in seeds:
            r = train_one(name, kwargs, seed, chosen[label], settings)
            runs.append({"model": label, **r})
            if progress:
                print(label, "seed", seed, round(r["accuracy"], 3), flush=True)
    return {"settings": settings, "search": search, "chosen_lr": chosen, "runs": runs}


def extend(record: dict[str, Any], more: dict[str, Any], note: str) -> dict[str, Any]:
    """``record`` with the models of ``more`` added (a run of the same study).

    ``more`` must have been made with the same settings but for its models
    (the same task, budget, steps, rates and seeds) and must not repeat a
    model of ``record``; nothing of ``record`` changes but the lists it
    grows. ``note`` says when, where and why the models were added.
    """
    fixed = {k: v for k, v in record["settings"].items() if k != "models"}
    other = {k: v for k, v in more["settings"].items() if k != "models"}
    if fixed != other:
        changed = sorted(
            k for k in fixed.keys() | other.keys() if fixed.get(k) != other.get(k)
        )
        raise ValueError(f"more: made with other settings ({', '.join(changed)})")
    added = more["settings"]["models"]
    repeated = sorted(set(added) & set(record["settings"]["models"]))
    if repeated:
        raise ValueError(f"more: repeats the models {repeated}")
    out = dict(record)
    out["settings"] = {
        **record["settings"],
        "models": {**record["settings"]["models"], **added},
    }
    out["search"] = record["search"] + more["search"]
    out["runs"] = record["runs"] + more["runs"]
    out["chosen_lr"] = {**record["chosen_lr"], **more["chosen_lr"]}
    out["extended"] = [
        *record.get("extended", []),
        {
            "models": list(added),
            "command": more.get("command"),
            "machine": more.get("machine"),
            "note": note,
        },
    ]
    return out
