"""The committed records the chapters read, shipped inside the package.

Training sweeps (``python -m rhn sweep``), optimisation studies
(``python -m rhn optstudy``) and speed benchmarks (``python -m rhn bench``)
take minutes to hours, longer than a page may take to build, so the book
commits their JSON records and each chapter reads them back. They live in
``rhn/_data/results/`` as package data: a chapter opened alone (in Colab, from
the rocket button, offline) finds them in the installed ``rhn``, and the
numbers it shows are those of the package version that is installed.

A record is named by its file name, e.g. ``"adding_models.json"``::

    >>> import rhn.results
    >>> "optstudy.json" in rhn.results.names()
    True
    >>> rhn.results.load("optstudy.json")["complete"]
    True
    >>> rhn.results.names("results-cpu-*.json")
    ['results-cpu-amd-epyc-2threads.json', 'results-cpu-amd-epyc.json']

To add or refresh one, write it into the folder, e.g.
``python -m rhn sweep ... --out rhn/_data/results/my_sweep.json``.
"""

from __future__ import annotations

import fnmatch
from importlib import resources
from pathlib import Path
from typing import Any

from . import _io

__all__ = ["RECORDS", "folder", "load", "names", "path", "settings", "settings_table"]


def folder() -> Path:
    """The folder of the shipped records, ``rhn/_data/results`` in the package."""
    return Path(str(resources.files("rhn") / "_data" / "results"))


def names(pattern: str = "*.json") -> list[str]:
    """The file names of the shipped records matching ``pattern``, sorted.

    Args:
        pattern: a shell-style pattern (``fnmatch``) on the file name.
            Default: ``"*.json"``, every record.
    """
    found = (p.name for p in folder().iterdir() if p.is_file())
    return sorted(n for n in found if fnmatch.fnmatchcase(n, pattern))


def path(name: str) -> Path:
    """The path of the shipped record ``name`` (a file name, e.g. ``"optstudy.json"``).

    Raises:
        TypeError: ``name`` is not a string.
        ValueError: ``name`` is a path rather than a file name.
        FileNotFoundError: no record of that name is shipped (the message lists
            those that are).
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a record's file name (str), got {name!r}")
    if not name or Path(name).name != name or name in (".", ".."):
        raise ValueError(
            f"name: expected a record's file name such as 'optstudy.json', "
            f"not a path: {name!r}"
        )
    file = folder() / name
    if not file.is_file():
        raise FileNotFoundError(
            f"no record {name!r} in the installed rhn ({folder()}); "
            f"shipped records: {', '.join(names()) or 'none'}"
        )
    return file


def load(name: str) -> dict[str, Any]:
    """The shipped record ``name``, parsed from JSON.

    Args:
        name: the record's file name, e.g. ``"adding_models.json"``
            (see :func:`names`).

    Returns:
        The record, a dict.

    Raises:
        FileNotFoundError: no such record (see :func:`path`).
        ValueError: the file is not a JSON object (e.g. cut short); the message
            names the file.
    """
    file = path(name)
    # a ValueError naming the file; it says so if merge-conflict markers are left
    record = _io.read_json(file, name=f"the record {name!r}")
    if not isinstance(record, dict):
        raise ValueError(
            f"the record {name!r} ({file}) holds a {type(record).__name__}, "
            "expected a JSON object"
        )
    return record


# what settings() reports, in its order: the task, its length, the budget, the
# RHN's two settings and the optimiser's
SETTING_KEYS = (
    "task",
    "seq_len",
    "num_params",
    "depth",
    "transform_bias",
    "lr",
    "steps",
    "batch_size",
)
# the keys that describe the RHN alone (a sweep's LSTM runs record a depth too)
_RHN_KEYS = ("depth", "transform_bias")
# a study's settings may name a list where a run names one value
_PLURAL = {"depths": "depth", "lrs": "lr"}


def settings(name: str) -> dict[str, list[Any]]:
    """The settings a shipped training record used, each as its distinct values.

    Reads a sweep (``python -m rhn sweep``: every run's ``config``) or a
    study whose record holds one ``settings`` object (``optstudy``, the
    memory task, the short runs of chapter 9). ``depth`` and ``transform_bias`` are
    the RHN's: taken from its runs only (or from the study's RHN models), so
    an LSTM run's unused depth is not counted.

    Args:
        name: the record's file name, e.g. ``"adding_models.json"``.

    Returns:
        ``{"models": [...], "seeds": [...], "task": [...], ...}``: a sorted
        list of the distinct values of each of ``task``, ``seq_len``,
        ``num_params``, ``depth``, ``transform_bias``, ``lr``, ``steps`` and
        ``batch_size``
        (empty when the record does not say), models in first-seen order.

    Raises:
        ValueError: the record holds neither runs with a ``config`` nor a
            ``settings`` object (the message names it).
    """
    record = load(name)
    found: dict[str, set[Any]] = {key: set() for key in SETTING_KEYS}
    models: list[str] = []
    seeds: set[Any] = set()

    def add(key: str, value: Any) -> None:
        key = _PLURAL.get(key, key)
        if key not in found or value is None:
            return
        for v in value if isinstance(value, list) else [value]:
            if v is not None:
                found[key].add(v)

    def add_model(model: Any) -> None:
        if model is not None and model not in models:
            models.append(model)

    runs = [
        r
        for r in record.get("runs", [])
        if isinstance(r, dict) and isinstance(r.get("config"), dict)
    ]
    study = record.get("settings")
    if runs:
        for run in runs:
            config = run["config"]
            add_model(config.get("model"))
            seeds.add(run.get("seed", config.get("seed")))
            for key, value in config.items():
                if key not in _RHN_KEYS or config.get("model") == "rhn":
                    add(key, value)
    elif isinstance(study, dict):
        kinds = study.get("models")
        specs = kinds.values() if isinstance(kinds, dict) else kinds or []
        rhn_specs = []
        for spec in specs:  # a model's name, or [kind, its keyword arguments]
            kind, kwargs = (spec[0], spec[1]) if isinstance(spec, list) else (spec, {})
            add_model(kind)
            if kind == "rhn":
                rhn_specs.append(kwargs)
        for key, value in study.items():
            name = _PLURAL.get(key, key)
            if name in _RHN_KEYS and rhn_specs and all(name in kw for kw in rhn_specs):
                continue  # every RHN model says its own (read below)
            add(key, value)
        for kwargs in rhn_specs:
            for key in _RHN_KEYS:
                add(key, kwargs.get(key))
        seeds.update(study.get("seeds", []))
    else:
        raise ValueError(
            f"name: {name!r} holds neither training runs with a config nor a "
            "settings object, so it has no settings to report"
        )
    seeds.discard(None)
    return {
        "models": models,
        "seeds": sorted(seeds),
        **{key: sorted(found[key], key=_order) for key in SETTING_KEYS},
    }


def _order(value: Any) -> tuple[int, Any]:
    """Sort numbers before strings, each among their own kind."""
    return (1, value) if isinstance(value, str) else (0, value)


RECORDS: list[tuple[int, str, str]] = [
    (6, "RHN with and without dropout", "optstudy_dropout.json"),
    (9, "five models, 250 steps", "race.json"),
    (10, "RHN and DT-RNN by depth, T = 30", "optstudy.json"),
    (10, "RHN and DT-RNN by depth, T = 10", "optstudy_t10.json"),
    (11, "five models, adding", "adding_models.json"),
    (11, "RHN depths, adding", "adding_depth.json"),
    (11, "depth 4, bias matched to depth 1", "adding_depth4_matched.json"),
    (11, "RHN depths, GRU, LSTMs, order", "order_models.json"),
    (12, "five models, chorales", "chorales_models.json"),
    (12, "LSTM with forget bias +1", "chorales_lstm_forget1.json"),
    (12, "RHN depths, chorales", "chorales_depth.json"),
    (12, "RHN biases, chorales", "chorales_bias.json"),
    (12, "depth 4, bias matched to depth 1", "chorales_rhn_matched.json"),
    (12, "RHN with dropout", "chorales_dropout.json"),
    (13, "six models, memory", "sine_memory.json"),
    (13, "six models, memory, lr 0.03", "sine_memory_lr3e-2.json"),
]
"""Each trained result of the book as (chapter, what was trained, shipped record)."""


def settings_table(chapter: int | None = None) -> Any:
    """The settings behind the book's trained results, as a table.

    One row per record of :data:`RECORDS` (those of ``chapter`` only, when
    given): the sequence length ``T``, the parameter budget, the RHN's depth
    ``D`` and transform-gate bias ``b_T``, the learning rate and the steps,
    read from the records by :func:`settings` (``T`` is "whole" for a task
    that keeps its own lengths, such as the chorales' whole pieces). An
    asterisk marks a list of the RHN's depths or biases that includes one
    other than the package's defaults (:mod:`rhn.defaults`).

    Returns:
        A :class:`rhn.tables.Table` (the last expression of a notebook cell
        shows it).

    Raises:
        ValueError: ``chapter`` has no trained result.
    """
    from . import defaults
    from .tables import table
    from .tasks import TASKS

    chosen = [r for r in RECORDS if chapter is None or r[0] == chapter]
    if not chosen:
        known = sorted({r[0] for r in RECORDS})
        raise ValueError(f"chapter must be one of {known} or None, got {chapter!r}")
    default = {"depth": defaults.DEPTH, "transform_bias": defaults.TRANSFORM_BIAS}

    def shown(values: list[Any], key: str | None = None, fmt: str = "{:g}") -> str:
        off = key in default and any(v != default[key] for v in values)
        return ", ".join(fmt.format(v) for v in values) + ("*" if off else "")

    def shown_length(used: dict[str, list[Any]]) -> str:
        # a task with lengths of its own (the chorales' whole pieces) ignores
        # the seq_len its records keep (rhn.tasks.Task.reads_seq_len)
        tasks = used["task"]  # empty where a record does not name its task
        if tasks and not any(TASKS[task].reads_seq_len for task in tasks):
            return "whole"
        return shown(used["seq_len"])

    rows = []
    for ch, what, name in chosen:
        used = settings(name)
        rows.append(
            (
                what if chapter is not None else f"{ch}: {what}",
                shown_length(used),
                shown(used["num_params"], fmt="{:,}"),
                shown(used["depth"], "depth"),
                shown(used["transform_bias"], "transform_bias"),
                shown(used["lr"]),
                shown(used["steps"], fmt="{:,}"),
            )
        )
    first = "result" if chapter is not None else "chapter: result"
    return table(rows, [first, "T", "params", "D", "b_T", "lr", "steps"])
