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

    python -m rhn optstudy --depths 1 2 4 8 --seeds 0 1 2 --steps 400 \
        --out rhn/_data/results/optstudy.json

Example::

    >>> record = run_study(depths=[1], seeds=[0], steps=2, eval_every=2,
    ...                    seq_len=5, num_params=300, eval_samples=8)
    >>> sorted({run["model"] for run in record["runs"]})
    ['dtrnn', 'rhn']
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from . import __version__, _checks, _io, gradflow
from .baselines import count_parameters
from .cells import RHN
from .studies import machine
from .tasks import get_task
from .train import TrainConfig, make_model, train

__all__ = ["MODELS", "DROPOUT_MODES", "run_study", "dropout_study", "main"]

MODELS = ("rhn", "dtrnn")
"""The two deep-transition models the study compares."""

FORMAT = 1
"""Version of the record's layout."""


def _versions() -> dict[str, str]:
    return {
        "rhn": __version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }


def _probe_norms(core: torch.nn.Module, probe: torch.Tensor) -> list[float]:
    """Gradient norm versus lag of the core on the probe batch (entry i: lag i + 1)."""
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
        "versions": _versions(),
        "machine": machine(),  # CPU, SIMD kernels, threads: the last bits
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
    # whole or not at all: an interrupted study keeps the runs it finished
    # strict JSON: an overflowing gradient norm is null, named in "non_finite"
    _io.write_record(path, record, name="out", indent=None, separators=(",", ":"))


DROPOUT_MODES = ("none", "variational", "per-step", "per-step-carry")
"""Where and when :func:`dropout_study` draws the state's dropout mask."""


def _final_state(core: RHN, x: torch.Tensor, mode: str, p: float) -> torch.Tensor:
    """The last output of the one-layer RHN ``core`` under a dropout ``mode``.

    ``"none"`` and ``"variational"`` run the package's own forward (the
    latter with ``state_dropout=p``: one mask per sequence, on the state where
    it enters the recurrent weights, carry path undropped). ``"per-step"``
    draws a new mask at every time step for the same place; ``"per-step-carry"``
    draws a new mask at every step and applies it to the state itself, so the
    carried state is dropped too.
    """
    if mode in ("none", "variational"):
        core.state_dropout = p if mode == "variational" else 0.0
        return core(x)[0][-1]
    cell = core.cells[0]
    s = x.new_zeros(x.shape[1], cell.hidden_size)
    for x_t in F.linear(x, cell.weight_ih).unbind(0):  # (B, G*H) per step
        mask = torch.empty_like(s).bernoulli_(1.0 - p).div_(1.0 - p)
        if mode == "per-step":
            s = cell.step(x_t, s, mask)
        else:
            s = cell.step(x_t, s * mask)
    return s


def dropout_study(
    *,
    modes: Sequence[str] = DROPOUT_MODES,
    seeds: Sequence[int] = (0, 1, 2),
    p: float = 0.25,
    depth: int = 2,
    hidden_size: int = 32,
    transform_bias: float = -3.0,
    seq_len: int = 30,
    steps: int = 300,
    batch_size: int = 64,
    lr: float = 5e-3,
    clip: float = 1.0,
    eval_every: int = 50,
    eval_samples: int = 1000,
    out: str | Path | None = None,
) -> dict[str, Any]:
    r"""Train an RHN on the adding problem with the state's dropout mask drawn
    in each of several ways, for several seeds; return a JSON-ready record.

    Every run starts from the same weights for a given seed and sees the same
    batches; only the masks differ (:data:`DROPOUT_MODES`). Adam, gradient
    clipping, the loss on the last output; the held-out MSE is measured
    without dropout (evaluation mode).

    Returns:
        ``{"format", "complete", "settings", "versions", "runs"}``; each run
        holds ``mode``, ``seed``, ``eval_step``, ``test_loss`` (one per
        evaluation) and the final ``final_loss``.
    """
    modes = [_checks.choice("modes", m, list(DROPOUT_MODES)) for m in modes]
    seeds = [_checks.positive_int("seeds", s, minimum=0) for s in seeds]
    p = _checks.probability("p", p)
    settings = {
        "modes": modes, "seeds": seeds, "p": p, "depth": depth,
        "hidden_size": hidden_size, "transform_bias": transform_bias,
        "seq_len": seq_len, "steps": steps, "batch_size": batch_size, "lr": lr,
        "clip": clip, "eval_every": eval_every, "eval_samples": eval_samples,
    }  # fmt: skip
    task = get_task("adding")
    runs: list[dict[str, Any]] = []
    record = {"format": FORMAT, "complete": False, "settings": settings}
    record.update(versions=_versions(), machine=machine(), runs=runs)
    for mode in modes:
        for seed in seeds:
            torch.manual_seed(seed)
            core = RHN(task.input_size, hidden_size, depth, impl="loop",
                       transform_bias=transform_bias)  # fmt: skip
            head = torch.nn.Linear(hidden_size, 1)
            params = [*core.parameters(), *head.parameters()]
            optimizer = torch.optim.Adam(params, lr=lr)
            batches = torch.Generator().manual_seed(2 * seed)
            x_test, y_test = task.generate(eval_samples, seq_len, seed=2 * seed + 1)
            run = {"mode": mode, "seed": seed, "eval_step": [], "test_loss": []}
            for step in range(1, steps + 1):
                x, y = task.generate(batch_size, seq_len, generator=batches)
                core.train()
                pred = head(_final_state(core, x, mode, p)).squeeze(-1)
                loss = F.mse_loss(pred, y)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(params, clip)
                optimizer.step()
                if step % eval_every == 0 or step == steps:
                    core.eval()
                    with torch.no_grad():
                        pred = head(core(x_test)[0][-1]).squeeze(-1)
                    run["eval_step"].append(step)
                    run["test_loss"].append(F.mse_loss(pred, y_test).item())
            run["final_loss"] = run["test_loss"][-1]
            runs.append(run)
            if out is not None:
                _write(record, Path(out))
    record["complete"] = True
    if out is not None:
        _write(record, Path(out))
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rhn optstudy``: run :func:`run_study` (or :func:`dropout_study`).

    Mistakes are one line on stderr and exit status 2; ``--out`` is checked
    before any training, and an existing file is kept unless ``--overwrite``.
    """
    from . import _cli

    prog = "python -m rhn optstudy"
    p = _cli.Parser(
        prog=prog,
        description="RHN against the gate-free DT-RNN at equal parameters over "
        "recurrence depths, several seeds, one optimiser; writes one JSON.",
    )
    p.add_argument(
        "--study",
        type=str.lower,
        choices=["depth", "dropout"],
        default="depth",
        help="depth: RHN vs DT-RNN over depths; dropout: where the mask is drawn",
    )
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    # Options of the depth study only; None marks one left out, so that
    # --study dropout can refuse them instead of silently ignoring them.
    depth_only = {
        "depths": [1, 2, 4, 8],
        "num_params": 8000,
        "task": "adding",
        "seq_len": 30,
        "steps": 400,
        "eval_every": 50,
        "lr": 5e-3,
    }
    kinds = {"depths": int, "task": str, "lr": float}
    for name, default in depth_only.items():
        p.add_argument(
            "--" + name.replace("_", "-"),
            type=kinds.get(name, int),
            nargs="+" if name == "depths" else None,
            default=None,
            help=f"depth study only (default: {default})",
        )
    p.add_argument("--out", required=True, help="path of the JSON to write")
    p.add_argument(
        "--overwrite", action="store_true", help="replace an existing --out file"
    )
    a = p.parse_args(argv)
    given = [name for name in depth_only if getattr(a, name) is not None]
    if a.study == "dropout" and given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        return _cli.fail(
            prog,
            f"--study dropout runs the fixed settings of its chapter and takes "
            f"only --seeds, --out and --overwrite, got {flags}",
        )
    for name, default in depth_only.items():
        if getattr(a, name) is None:
            setattr(a, name, default)
    try:
        for name in ("depths", "seeds"):
            values = getattr(a, name)
            if len(set(values)) != len(values):
                raise ValueError(f"--{name} repeats a value: {values}")
        for d in a.depths:
            _checks.positive_int("--depths", d)
        for seed in a.seeds:
            _checks.seed("--seeds", seed)
        for name in ("num_params", "seq_len", "steps", "eval_every"):
            _checks.positive_int(f"--{name.replace('_', '-')}", getattr(a, name))
        if not a.lr > 0:
            raise ValueError(f"--lr must be > 0, got {a.lr}")
        out = _cli.writable_file("--out", a.out)
        from .train.records import check_record_out

        check_record_out(out, a.overwrite, kind="study", name="--out")
        if out.exists() and not a.overwrite:
            raise ValueError(
                f"--out {str(out)!r} already exists; pass --overwrite to replace it"
            )
    except (TypeError, ValueError) as err:
        return _cli.fail(prog, err)
    if a.study == "dropout":
        record = dropout_study(seeds=a.seeds, out=a.out)
        for run in record["runs"]:
            print(f"{run['mode']:>15} seed={run['seed']} MSE={run['final_loss']:.4f}")
        return 0
    try:
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
    except (TypeError, ValueError) as err:  # e.g. an unknown --task
        return _cli.fail(prog, err)
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
