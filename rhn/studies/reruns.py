r"""The short live reruns that chapters compare with their committed records.

A page that reads a committed record (:mod:`rhn.results`) also reruns a small
part of it live, to show that the record is what the package computes. On the
machine that wrote the record the rerun is identical to the last bit; on
another CPU the roundings differ, and a training run near a plateau carries
those differences forward, so the rerun is compared within the spread that the
same rerun showed under several arithmetic variants of the CPU
(``tools/portable.py spread NAME``), recorded in the record's
``"variant_spread"`` entry.

Each check is a function of no arguments that returns named loss curves
(``{name: [loss at every evaluation]}``) and the curves of the record it
retraces; :func:`compare` applies the tolerance.

Example::

    >>> sorted(CHECKS)
    ['adding_100', 'chorales_250', 'dropout', 'optstudy_t10', 'optstudy_t30']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .. import results

# a floor on the relative tolerance: the variants are all one AMD CPU, and an
# Intel CPU's AVX-512 matrix products (which MKL refuses on AMD) were never
# sampled; 0.1 % still catches any change to what the code computes
FLOOR = 1e-3
# the tolerance is this many times the largest deviation seen across variants
MARGIN = 3.0


def _optstudy(name: str) -> tuple[dict, dict]:
    from .. import optstudy

    record = results.load(name)
    s = record["settings"]
    live = optstudy.run_study(
        depths=[1],
        seeds=[0],
        num_params=s["num_params"],
        task=s["task"],
        seq_len=s["seq_len"],
        steps=s["steps"],
        eval_every=s["eval_every"],
        lr=s["lr"],
    )
    curves, saved = {}, {}
    for run in live["runs"]:
        (ref,) = [
            r
            for r in record["runs"]
            if (r["model"], r["depth"], r["seed"]) == (run["model"], 1, 0)
        ]
        curves[run["model"]] = run["history"]["test_loss"]
        saved[run["model"]] = ref["history"]["test_loss"]
    return curves, saved


def optstudy_t30() -> tuple[dict, dict]:
    """Chapter 10: RHN and DT-RNN of depth 1, seed 0, adding problem ``T = 30``."""
    return _optstudy("optstudy.json")


def optstudy_t10() -> tuple[dict, dict]:
    """Chapter 10: the same at ``T = 10``."""
    return _optstudy("optstudy_t10.json")


def dropout() -> tuple[dict, dict]:
    """Chapter 6: the variational-dropout RHN of the dropout study, seed 0."""
    from .. import optstudy

    record = results.load("optstudy_dropout.json")
    settings = {
        k: v for k, v in record["settings"].items() if k not in ("modes", "seeds")
    }
    live = optstudy.dropout_study(modes=["variational"], seeds=[0], **settings)
    (saved,) = [
        r for r in record["runs"] if r["mode"] == "variational" and r["seed"] == 0
    ]
    return (
        {"variational": live["runs"][0]["test_loss"]},
        {"variational": saved["test_loss"]},
    )


def adding_100() -> tuple[dict, dict]:
    """Chapter 11: the first 100 steps of the RHN of the model sweep, seed 0."""
    from ..experiments import load_sweep, select
    from ..train import TrainConfig, train
    from ..train.records import filled_config

    (recorded,) = select(load_sweep("adding_models.json"), model="rhn", seed=0)
    # the record says amp=True, which meant "on CUDA only" when it was written
    config = dataclasses.replace(
        TrainConfig(**filled_config(recorded["config"])),
        amp=None,
        device="cpu",
        out=None,
        progress=False,
    )
    live = train(config, callback=lambda event: event["step"] >= 100)
    n = len(live.history["test_loss"])
    return (
        {"test_loss": live.history["test_loss"]},
        {"test_loss": recorded["history"]["test_loss"][:n]},
    )


def chorales_250() -> tuple[dict, dict]:
    """Chapter 12: the first 250 steps of the package's RHN on the chorales, seed 0."""
    from ..experiments import load_sweep, select
    from ..train import TrainConfig, train

    (reference,) = select(load_sweep("chorales_models.json"), model="rhn", seed=0)
    config = TrainConfig.for_task(
        "chorales", model="rhn", seed=0, device="cpu", progress=False
    )
    live = train(config, callback=lambda event: event["step"] >= 250)
    steps = reference["history"]["eval_step"]
    n = len([s for s in steps if s <= 250])
    return (
        {"valid_loss": live.history["valid_loss"][:n]},
        {"valid_loss": reference["history"]["test_loss"][:n]},
    )


CHECKS: dict[str, Callable[[], tuple[dict, dict]]] = {
    "adding_100": adding_100,
    "chorales_250": chorales_250,
    "dropout": dropout,
    "optstudy_t10": optstudy_t10,
    "optstudy_t30": optstudy_t30,
}
# the record each check retraces, where its measured spread is kept
RECORDS = {
    "adding_100": "adding_models.json",
    "chorales_250": "chorales_models.json",
    "dropout": "optstudy_dropout.json",
    "optstudy_t10": "optstudy_t10.json",
    "optstudy_t30": "optstudy.json",
}


def deviations(curves: dict, saved: dict) -> dict[str, list[float]]:
    """Relative deviation of every live point from the record, per curve."""
    return {
        k: [abs(a - b) / abs(b) for a, b in zip(curves[k], saved[k], strict=True)]
        for k in saved
    }


def tolerances(name: str) -> dict[str, list[float]]:
    """Per curve and evaluation: ``MARGIN`` times the recorded spread, or ``FLOOR``."""
    spread = results.load(RECORDS[name]).get("variant_spread")
    if spread is None or spread.get("check") != name:
        raise ValueError(
            f"{RECORDS[name]!r} has no variant spread for the check {name!r}; "
            f"measure it with: python tools/portable.py spread {name}"
        )
    return {
        k: [max(FLOOR, MARGIN * d) for d in devs]
        for k, devs in spread["max_deviation"].items()
    }


def compare(name: str, curves: dict, saved: dict) -> dict[str, Any]:
    """Check a live rerun against its record; ``AssertionError`` names the point.

    Returns the deviations, the tolerances and whether the rerun was
    bit-identical to the record (as on the machine that made it).
    """
    devs, tols = deviations(curves, saved), tolerances(name)
    for k in saved:
        for i, (d, tol) in enumerate(zip(devs[k], tols[k], strict=True)):
            if d > tol:
                raise AssertionError(
                    f"{name}: {k} at evaluation {i} is {curves[k][i]!r}, the record "
                    f"{saved[k][i]!r}: {d:.2e} relative, more than the {tol:.2e} "
                    "allowed by the spread across CPU variants"
                )
    identical = all(curves[k] == saved[k] for k in saved)
    return {"deviation": devs, "tolerance": tols, "identical": identical}


def run(name: str) -> tuple[dict, dict]:
    """Run the check ``name``: ``(live curves, the record's curves)``."""
    if name not in CHECKS:
        raise ValueError(f"check must be one of {sorted(CHECKS)}, got {name!r}")
    return CHECKS[name]()
