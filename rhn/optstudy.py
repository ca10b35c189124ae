r"""The optimisation study: gated (RHN) against gate-free (DT-RNN) deep transitions.

Section 5.1 of Zilly et al. (2017) asks whether a deep recurrent transition can
be trained at all, with and without highway gates. :func:`run_study` trains
:class:`rhn.RHN` and :class:`rhn.DTRNN` at the same parameter budget for every
recurrence depth of a list and every seed, with one optimiser, learning rate
and number of steps (a :class:`rhn.train.TrainConfig`), and records for each
run the held-out loss curve and, at every evaluation, the norm of the gradient
of a fixed loss with respect to the state at every lag
(:func:`rhn.gradflow.gradient_norms` on a fixed probe batch): how far back in
time the gradient reaches as training goes on.

From a terminal::

    python -m rhn.optstudy --depths 1 2 4 8 --seeds 0 1 2 --steps 400 \
        --out book/results/optstudy.json

Example::

    >>> record = run_study(depths=[1], seeds=[0], steps=2, eval_every=2,
    ...                    seq_len=5, num_params=300, eval_samples=8)
    >>> sorted({run["model"] for run in record["runs"]})
    ['dtrnn', 'rhn']
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from . import __version__, _checks, gradflow
from .baselines import count_parameters
from .tasks import get_task
from .train import TrainConfig, make_model, train

__all__ = ["MODELS", "run_study", "main"]

MODELS = ("rhn", "dtrnn")
"""The two deep-transition models the study compares."""

FORMAT = 1
"""Version of the record's layout."""


def _probe_norms(core: torch.nn.Module, probe: torch.Tensor) -> list[float]:
    """Gradient norm versus lag (lag 0 first) of the core on the probe batch."""
    return [float(v) for v in gradflow.gradient_norms(core, probe)]


def run_study(
    *,
    depths: Sequence[int] = (1, 2, 4, 8),
    seeds: Sequence[int] = (0, 1, 2),
    models: Sequence[str] = MODELS,
    num_params: int = 8000,
    probe_size: int = 32,
    out: str | Path | None = None,
    **config: Any,
) -> dict[str, Any]:
    """Train every model at every depth and seed; return a JSON-ready record.

    Args:
        depths: recurrence depths ``D`` to train.
        seeds: seeds of the runs (weights, batches, held-out set).
        models: a subset of :data:`MODELS`.
        num_params: parameter budget of the recurrent core, the same for every
            model and depth (the hidden size is matched to it with
            :func:`rhn.matched_hidden_size`).
        probe_size: sequences of the fixed probe batch on which gradient norms
            versus lag are measured (drawn from the task with seed 12345).
        out: if given, the record is written there as JSON after every run
            (with ``"complete": false`` until the last one), so that an
            interrupted study keeps the runs it finished.
        **config: any other :class:`rhn.train.TrainConfig` field (task,
            seq_len, steps, lr, ...), the same for every run.

    Returns:
        ``{"format", "complete", "settings", "versions", "runs"}``; each run
        holds
        ``model``, ``depth``, ``seed``, ``hidden_size``, ``num_params``, the
        final ``test_loss``, the ``history`` of :func:`rhn.train.train` and
        ``grad_steps``/``grad_norms``: the steps at which the lag curves were
        measured (0 is the initial model) and the curves themselves.
    """
    depths = [_checks.positive_int("depths", d) for d in depths]
    seeds = [_checks.positive_int("seeds", s, minimum=0) for s in seeds]
    models = [_checks.choice("models", m, list(MODELS)) for m in models]
    num_params = _checks.positive_int("num_params", num_params)
    probe_size = _checks.positive_int("probe_size", probe_size)
    config = {"progress": False, "device": "cpu", **config}
    template = TrainConfig(hidden_size=None, num_params=num_params, **config)
    task = get_task(template.task)
    probe, _ = task.generate(probe_size, template.seq_len, seed=12345)
    settings = {**template.to_dict(), "depths": depths, "seeds": seeds}
    settings.update(models=models, probe_size=probe_size, probe_seed=12345)
    for key in ("model", "depth", "seed", "out", "progress"):
        settings.pop(key)
    runs: list[dict[str, Any]] = []
    record = {
        "format": FORMAT,
        "complete": False,
        "settings": settings,
        "versions": {
            "rhn": __version__,
            "torch": torch.__version__,
            "python": platform.python_version(),
        },
        "runs": runs,
    }
    for depth in depths:
        for model in models:
            for seed in seeds:
                run_config = dataclasses.replace(
                    template, model=model, depth=depth, seed=seed
                )
                torch.manual_seed(seed)  # the same initial weights train() draws
                initial = make_model(run_config)
                grad_steps = [0]
                grad_norms = [_probe_norms(initial.core, probe)]

                def record_norms(
                    event: dict[str, Any],
                    steps: list[int] = grad_steps,
                    norms: list[list[float]] = grad_norms,
                ) -> None:
                    if "test_loss" in event:  # after every evaluation
                        steps.append(event["step"])
                        norms.append(_probe_norms(event["model"].core, probe))

                result = train(run_config, callback=record_norms)
                runs.append(
                    {
                        "model": model,
                        "depth": depth,
                        "seed": seed,
                        "hidden_size": result.metrics["hidden_size"],
                        "num_params": count_parameters(result.model.core),
                        "test_loss": result.metrics["test_loss"],
                        "history": result.history,
                        "grad_steps": grad_steps,
                        "grad_norms": grad_norms,
                    }
                )
                if out is not None:
                    _write(record, Path(out))
    record["complete"] = True
    if out is not None:
        _write(record, Path(out))
    return record


def _write(record: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=None, separators=(",", ":")) + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rhn.optstudy``: run :func:`run_study` and write its JSON."""
    p = argparse.ArgumentParser(
        prog="python -m rhn.optstudy",
        description="RHN against the gate-free DT-RNN at equal parameters over "
        "recurrence depths, several seeds, one optimiser; writes one JSON.",
    )
    p.add_argument("--depths", type=int, nargs="+", default=[1, 2, 4, 8])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--num-params", type=int, default=8000)
    p.add_argument("--task", default="adding")
    p.add_argument("--seq-len", type=int, default=30)
    p.add_argument("--steps", type=int, default=400)
    p.add_argument("--eval-every", type=int, default=50)
    p.add_argument("--lr", type=float, default=5e-3)
    p.add_argument("--out", required=True, help="path of the JSON to write")
    a = p.parse_args(argv)
    record = run_study(
        depths=a.depths,
        seeds=a.seeds,
        num_params=a.num_params,
        task=a.task,
        seq_len=a.seq_len,
        steps=a.steps,
        eval_every=a.eval_every,
        lr=a.lr,
        out=a.out,
    )
    for run in record["runs"]:
        print(
            f"{run['model']:>6} D={run['depth']} seed={run['seed']} "
            f"H={run['hidden_size']} P={run['num_params']} "
            f"test_loss={run['test_loss']:.4f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
