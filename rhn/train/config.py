"""The configuration of a training run: :class:`TrainConfig` and the device.

Every field is documented in the class docstring (``help(TrainConfig)``);
``__post_init__`` checks each one, so that a bad value fails when the config
is made, before any training.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import types
import warnings
from dataclasses import dataclass
from typing import Any

import torch

from .. import _checks
from ..baselines import MODELS
from ..defaults import DEPTH, TRANSFORM_BIAS
from ..tasks import TASKS, Task, get_task

__all__ = [
    "TrainConfig",
    "stale_fields",
    "resolve_device",
    "reads_field",
    "HIDDEN_SIZE",
    "MAX_THREADS",
]

HIDDEN_SIZE = 48
"""The hidden size of a config that gives neither ``hidden_size`` nor ``num_params``."""


class _DefaultSize(int):
    """The default of ``TrainConfig.hidden_size``: ``HIDDEN_SIZE``, but an
    object of its own, so that ``__post_init__`` can tell a size left out from
    one given (``num_params`` alone sizes the model; both given are refused).
    It is replaced by a plain ``int`` or ``None`` as the config is made."""


_DEFAULT_SIZE = _DefaultSize(HIDDEN_SIZE)
MAX_THREADS = 4096
"""The most torch CPU threads a config may ask for (torch takes a C int)."""
_TRAINING_DEVICES = ("cpu", "cuda", "mps")
MAX_WEIGHT_DECAY = 1e4
"""The largest ``weight_decay`` a config takes (Adam's L2 term in float32)."""

MAX_LR = 1e30
"""The largest learning rate a run takes: Adam moves a weight by about ``lr``
per step, and float32 ends near 3.4e38, so a larger one overflows at once."""

# Config fields that only some models read (every other field is read by all).
_READ_BY: dict[str, tuple[str, ...]] = {
    "depth": ("rhn", "dtrnn"),
    "transform_bias": ("rhn",),
    "forget_bias": ("lstm",),
    "dropout": ("rhn",),
}
# the value of such a field that asks for nothing: what a model that does not
# read it trains with
_OFF: dict[str, Any] = {"forget_bias": None, "dropout": 0.0}
# fields a task's defaults may not set: where a run writes, and the task itself
_NOT_A_TASKS = frozenset({"task", "out", "log_csv", "checkpoint_every"})
# the package's defaults of the fields that shape an RHN alone
_DEFAULT_OF: dict[str, Any] = {"depth": DEPTH, "transform_bias": TRANSFORM_BIAS}


def reads_field(model: str, field: str) -> bool:
    """Whether ``model`` reads the config field ``field``: ``depth`` only the
    deep-transition models (``rhn``, ``dtrnn``), ``transform_bias`` and
    ``dropout`` only the RHN, ``forget_bias`` only the LSTM; every other
    field every model."""
    models = _READ_BY.get(field)
    return models is None or model in models


def unread_off(config: dict[str, Any]) -> dict[str, Any]:
    """A recorded config with ``dropout`` and ``forget_bias`` off where its
    model does not read them: the run trained without them, so the config
    rebuilds the same model (a record written before such values were refused
    may hold them)."""
    model = config.get("model")
    if not isinstance(model, str):
        return config
    return {
        k: _OFF[k] if k in _OFF and not reads_field(model, k) else v
        for k, v in config.items()
    }


@dataclass
class TrainConfig:
    """Everything that defines a training run. The defaults solve the adding problem.

    A task's own defaults (its ``Task.defaults``, e.g. 40,000 parameters and
    ``lr=3e-3`` for ``"chorales"``) fill every field you leave out,
    so ``TrainConfig(task="chorales", model="gru")`` is the configuration of
    ``python -m rhn train --task chorales --model gru``; a field you give
    keeps your value, and fields neither gives keep the defaults below.
    :meth:`for_task` is the same call. ``dataclasses.replace(config, ...)``
    (and ``copy.replace``) is ``TrainConfig`` called again with the fields
    you gave ``config`` and the changes: a new ``task`` there brings its own
    defaults to the fields you never gave, as the command line does. Every
    field is checked when the config is made, so a bad value fails before
    any training.

    Attributes:
        task: a name in :data:`rhn.tasks.TASKS` (``adding``, ``copy``,
            ``temporal_order``, ``sine_memory``, ``chorales``) or your own
            :class:`rhn.tasks.Task` (:func:`rhn.owntasks.tensor_task` makes one
            from tensors).
        seq_len: sequence length ``T`` handed to the task's generator;
            ``None``: the task's own default (its ``Task.defaults["seq_len"]``),
            else 100.
        model: the recurrent core: ``rhn``, ``dtrnn``, ``lstm``, ``gru`` or
            ``rnn``.
        depth: recurrence depth ``D`` of ``rhn`` and ``dtrnn`` (the other models
            ignore it).
        hidden_size: ``H`` (default ``rhn.train.config.HIDDEN_SIZE``, 48); ``None``: the
            size whose core has about ``num_params`` parameters. Left out, it
            is ``None`` when ``num_params`` is given; giving both is refused.
        num_params: parameter budget of the recurrent core (the head not
            counted), instead of ``hidden_size``: ``TrainConfig(num_params=5000)``
            sizes the model by it; ``metrics["num_params"]`` reports the core's
            actual count.
        num_layers: stacked recurrent layers ``N``.
        transform_bias: initial transform-gate bias of the RHN (negative: the
            cell starts by carrying its state).
        forget_bias: initial forget-gate bias of the LSTM; ``None``: torch's
            initialisation. The other models have no forget gate: a value
            you give with them is refused (see ``dropout``).
        steps: optimiser steps, one fresh batch each.
        batch_size: sequences per step.
        lr: Adam's learning rate.
        lr_schedule: ``"constant"`` or ``"cosine"`` (decays to ``lr / 10``).
        weight_decay: Adam's weight decay.
        clip: the largest global gradient norm; 0 turns clipping off.
        eval_every: steps between held-out evaluations.
        eval_samples: held-out sequences (a fixed set, never trained on).
        stop_loss: stop early once the held-out loss is below this; ``None``:
            never.
        seed: seeds the initial weights, the batches and the held-out set.
        device: ``auto`` (CUDA, then MPS, then the CPU), ``cpu``, ``cuda``,
            ``cuda:1``, ``mps``.
        amp: mixed precision. ``None``: on CUDA only, by the GPU's capability
            (:mod:`rhn.devices`: bfloat16 on 8.0 and newer, float16 with a
            GradScaler on 7.x); ``True``: also on the CPU (bfloat16, slower
            there: it exists so that CI tests the path); ``False``: never.
        cuda_graph: replay each step from a CUDA graph (:mod:`rhn.graphs`).
            ``None``: on CUDA wherever the task and the precision allow it;
            ``True`` insists (refused with the reason where it cannot);
            ``False`` never.
        threads: torch CPU threads (small models are fastest on 1); ``None``:
            torch's own choice.
        out: directory for ``metrics.json`` and ``checkpoint.pt``; ``None``:
            nothing written.
        checkpoint_every: also write the checkpoint every this many steps (0:
            only at the end and on an interrupt).
        progress: show a ``tqdm`` progress bar with the live loss.
        dropout: the RHN's variational dropout rate (input, state and
            output); 0: off. The other models do not read it, so a non-zero
            rate you give with them is refused (it would be recorded but not
            used). A rate that comes from the task's defaults is meant for the
            RHN: with another model it becomes 0, what that model trains
            with, as does a sweep's base rate for its runs of other models
            (:func:`rhn.experiments.sweep`); a recorded config rebuilds the
            same way (``rhn.train.records.filled_config``).
        patience: stop early after this many evaluations without a better
            held-out loss, keeping the best weights of the evaluations every
            ``eval_every`` steps and at the last step (the extra evaluation of
            a run stopped between two by a callback or a signal is scored and
            reported but does not replace them); 0: off.
        log_csv: a CSV file that gets one row per step (step, losses,
            learning rate, time and the run's id; :class:`rhn.train.CSVLogger`);
            a resumed run appends to it (a branch, resumed into another
            ``out``, needs its own). ``None``: no file.
    """

    task: str | Task = "adding"
    seq_len: int | None = None
    model: str = "rhn"
    depth: int = DEPTH
    hidden_size: int | None = _DEFAULT_SIZE
    num_params: int | None = None
    num_layers: int = 1
    transform_bias: float = TRANSFORM_BIAS
    forget_bias: float | None = None
    steps: int = 1000
    batch_size: int = 64
    lr: float = 5e-3
    lr_schedule: str = "cosine"
    weight_decay: float = 0.0
    clip: float = 1.0
    eval_every: int = 100
    eval_samples: int = 1000
    stop_loss: float | None = None
    seed: int = 0
    device: str = "auto"
    amp: bool | None = None
    cuda_graph: bool | None = None
    threads: int | None = 1
    out: str | None = None
    checkpoint_every: int = 0
    progress: bool = True
    dropout: float = 0.0
    patience: int = 0
    log_csv: str | None = None

    def __post_init__(self) -> None:
        task = get_task(self.task)
        if task.name in TASKS and TASKS[task.name] is not task:
            raise ValueError(
                f"task: a task of your own may not take a built-in task's name "
                f"({task.name!r}): records and resumes tell tasks apart by name; "
                "give it another name"
            )
        # a registered task is kept by name; the user's own as the object
        self.task = task.name if TASKS.get(task.name) is task else task
        given = self.__dict__.pop("_given", None)
        if given is None:  # not made through __init__: every field counts as given
            given = _FIELDS
        # kept for a sweep whose grid changes the task: the fields left out
        # then take the other task's defaults (rhn.experiments)
        self.__dict__["_given_fields"] = given
        self._task_defaults(task, given)
        if self.seq_len is None:  # as for_task and the command line do
            self.seq_len = task.defaults.get("seq_len", 100)
        self.seq_len = _checks.positive_int("seq_len", self.seq_len)
        own_length = task.defaults.get("seq_len", 100)
        if not task.reads_seq_len and self.seq_len != own_length:
            raise ValueError(
                f"seq_len: task {task.name!r} keeps its sequences' own lengths "
                f"and does not read seq_len, got seq_len={self.seq_len} (it would "
                "be recorded but not used); leave it out"
            )
        self.model = _checks.choice("model", self.model, list(MODELS))
        self.depth = _checks.positive_int("depth", self.depth)
        if self.hidden_size is _DEFAULT_SIZE:  # left out: num_params decides
            self.hidden_size = None if self.num_params is not None else HIDDEN_SIZE
        if self.hidden_size is None and self.num_params is None:
            raise ValueError("give hidden_size or num_params (both are None)")
        if self.hidden_size is not None and self.num_params is not None:
            raise ValueError(
                f"give hidden_size or num_params, not both (got hidden_size="
                f"{self.hidden_size}, num_params={self.num_params}); leave "
                "hidden_size out (or set hidden_size=None) to size the model by "
                "num_params"
            )
        if self.hidden_size is not None:
            self.hidden_size = _checks.positive_int("hidden_size", self.hidden_size)
        if self.num_params is not None:
            self.num_params = _checks.positive_int("num_params", self.num_params)
        self.num_layers = _checks.positive_int("num_layers", self.num_layers)
        self.transform_bias = _checks.representable(  # the model is float32
            "transform_bias", _checks.real("transform_bias", self.transform_bias), None
        )
        if self.forget_bias is not None:
            self.forget_bias = _checks.representable(
                "forget_bias", _checks.real("forget_bias", self.forget_bias), None
            )
        self.steps = _checks.positive_int("steps", self.steps)
        self.batch_size = _checks.positive_int("batch_size", self.batch_size)
        self.lr = _checks.representable(
            "lr", _checks.real("lr", self.lr), torch.float32
        )
        if self.lr <= 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.lr > MAX_LR:
            raise ValueError(
                f"lr must be at most {MAX_LR:g} (an Adam step moves a weight by "
                f"about lr: more overflows float32 at the first step), got {self.lr:g}"
            )
        self.lr_schedule = _checks.choice(
            "lr_schedule", self.lr_schedule, ["constant", "cosine"]
        )
        self.weight_decay = _checks.real("weight_decay", self.weight_decay)
        self.clip = _checks.representable(
            "clip", _checks.real("clip", self.clip), torch.float32
        )
        if self.weight_decay > MAX_WEIGHT_DECAY:
            raise ValueError(
                f"weight_decay must be at most {MAX_WEIGHT_DECAY:g} (Adam adds "
                "weight_decay * weight to every gradient: more overflows float32 at "
                f"the first step), got {self.weight_decay:g}"
            )
        if self.clip < 0 or self.weight_decay < 0:
            raise ValueError(
                f"clip and weight_decay must be >= 0, got clip={self.clip}, "
                f"weight_decay={self.weight_decay}"
            )
        self.eval_every = _checks.positive_int("eval_every", self.eval_every)
        self.eval_samples = _checks.positive_int("eval_samples", self.eval_samples)
        if self.stop_loss is not None:
            self.stop_loss = _checks.representable(
                "stop_loss", _checks.real("stop_loss", self.stop_loss), torch.float32
            )
        # the held-out set uses seed 2 * seed + 1, which must stay below 2**32
        self.seed = _checks.seed("seed", self.seed, limit=_checks.SEED_LIMIT // 2)
        if isinstance(self.device, torch.device):  # as load_model takes one
            self.device = str(self.device)
        if not isinstance(self.device, str):
            raise TypeError(
                f"device must be a string such as 'auto', 'cpu' or 'cuda', got "
                f"{type(self.device).__name__}"
            )
        self.device = self.device.strip().lower()
        if self.device != "auto":
            kind = _checks.device("device", self.device).type
            if kind not in _TRAINING_DEVICES:  # e.g. "meta": tensors without data
                raise ValueError(
                    f"device must be auto, cpu, cuda, cuda:N or mps to train on, got "
                    f"{self.device!r} (a {kind} device)"
                )
            # availability is checked by train
        if self.threads is not None:
            self.threads = _checks.positive_int("threads", self.threads)
            if self.threads > MAX_THREADS:  # torch takes a C int
                raise ValueError(
                    f"threads must be at most {MAX_THREADS}, got {self.threads}"
                )
        self.checkpoint_every = _checks.positive_int(
            "checkpoint_every", self.checkpoint_every, minimum=0
        )
        if self.amp is not None:
            _checks.boolean("amp", self.amp)
        _checks.boolean("progress", self.progress)
        if self.cuda_graph is not None:
            _checks.boolean("cuda_graph", self.cuda_graph)
        self.out = _path_or_none("out", self.out, "directory")
        self.dropout = _checks.probability("dropout", self.dropout)
        self._unread_fields(given)
        self._unread_shape(task, given)
        self.patience = _checks.positive_int("patience", self.patience, minimum=0)
        self.log_csv = _path_or_none("log_csv", self.log_csv, "file")
        if (
            self.out is not None
            and self.log_csv is not None
            and os.path.realpath(self.out) == os.path.realpath(self.log_csv)
        ):  # the log would be made first, and out then found to be a file
            raise ValueError(
                f"log_csv and out name the same path ({self.log_csv!r}): out is a "
                "folder and log_csv a file in it or beside it; give the log "
                f"another name, e.g. {os.path.join(self.out, 'log.csv')!r}"
            )

    def _unread_fields(self, given: frozenset[str]) -> None:
        """Refuse a ``dropout`` or ``forget_bias`` given for a model that does
        not read it; one from the task's defaults is turned off instead."""
        for name, off in _OFF.items():
            value = getattr(self, name)
            if value == off or reads_field(self.model, name):
                continue
            if name not in given:  # the task's default, meant for another model
                setattr(self, name, off)
                continue
            if name == "dropout":
                raise ValueError(
                    f"dropout is the RHN's variational dropout, got dropout={value} "
                    f"with model={self.model!r}, which does not read it (the run "
                    "would train without dropout); leave dropout out (0) or use "
                    "model='rhn'"
                )
            hint = (
                "the RHN's gate bias is transform_bias (--transform-bias)"
                if self.model == "rhn"
                else f"the {self.model} has no forget gate"
            )
            raise ValueError(
                f"forget_bias is an LSTM setting, got forget_bias={value} with "
                f"model={self.model!r}: {hint}; leave forget_bias out (None) or "
                "use model='lstm'"
            )

    def _unread_shape(self, task: Task, given: frozenset[str]) -> None:
        """Warn of a ``depth`` or ``transform_bias`` given for a model that
        does not read it, at a value other than the default (the task's, else
        the package's): the run trains as if it were left out. Not an error,
        since every recorded config holds both fields for every model."""
        if given >= _INIT_FIELDS or self.__dict__.get("_replaced"):
            # every field given (a resume or a reload, which pass the recorded
            # values back) or a dataclasses.replace (a sweep's grid): warned
            # of, if at all, when the config replaced was made
            return
        for name, package_default in _DEFAULT_OF.items():
            value = getattr(self, name)
            default = task.defaults.get(name, package_default)
            if name in given and value != default and not reads_field(self.model, name):
                readers = " or ".join(repr(m) for m in _READ_BY[name])
                warnings.warn(
                    f"{name}={value} does nothing for model={self.model!r}: only "
                    f"model={readers} reads {name}; the run trains as without it",
                    stacklevel=_outside_the_package(),
                )

    def _task_defaults(self, task: Task, given: frozenset[str]) -> None:
        """Set the fields left out (not in ``given``) to ``task``'s defaults:
        what ``python -m rhn train --task NAME`` does with options left out.
        A size given (``hidden_size`` or ``num_params``) replaces the task's
        other way of sizing the model."""
        unknown = sorted(set(task.defaults) - _FIELDS)
        if unknown:
            raise TypeError(
                f"task {task.name!r}: its defaults name {unknown}, which are not "
                f"TrainConfig fields; the fields are {sorted(_FIELDS)}"
            )
        placed = sorted(set(task.defaults) & _NOT_A_TASKS)
        if placed:
            raise TypeError(
                f"task {task.name!r}: its defaults set {placed}, which say where a "
                "run writes its files (or what it trains), the caller's choice, not "
                "a task's; leave them out of the task's defaults and give them to "
                "TrainConfig"
            )
        budget = "num_params" in given and self.num_params is not None
        size = "hidden_size" in given and self.hidden_size is not None
        for name, value in task.defaults.items():
            if name in given and name != "seq_len":
                continue
            if name == "seq_len" and self.seq_len is not None:
                continue  # given (None: the task's own, as always)
            if (name == "hidden_size" and budget) or (name == "num_params" and size):
                continue
            setattr(self, name, value)

    @classmethod
    def for_task(cls, task: str | Task, **overrides: Any) -> TrainConfig:
        """A config with ``task``'s default settings, then ``overrides`` on top:
        the same as ``TrainConfig(task=task, **overrides)``, which applies the
        task's defaults to the fields left out.

        Unknown field names raise a ``TypeError`` naming them.
        """
        unknown = sorted(set(overrides) - _FIELDS)
        if unknown:
            raise TypeError(
                f"unknown TrainConfig field(s) {unknown}; the fields are "
                f"{sorted(_FIELDS)}"
            )
        return cls(task=task, **overrides)

    def to_dict(self) -> dict[str, Any]:
        """The config as a plain dict (JSON-ready); a task object by its name.

        A task of your own also adds ``"task_fingerprint"``, a hash of its data
        (``rhn.train.config.task_fingerprint``), so that a resume on other data is
        refused.
        """
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if isinstance(self.task, Task):
            out["task"] = self.task.name
            key = (id(self.task), self.seq_len)
            if getattr(self, "_fingerprint", (None, None))[0] != key:
                prints = {"task_fingerprint": task_fingerprint(self.task, self.seq_len)}
                if self.task.fingerprint is None:  # to check older records by
                    prints["task_fingerprint_4"] = task_fingerprint(
                        self.task, self.seq_len, LEGACY_SAMPLE
                    )
                self._fingerprint = (key, prints)
            out.update(self._fingerprint[1])
        return out


_FIELDS = frozenset(f.name for f in dataclasses.fields(TrainConfig))
_dataclass_init = TrainConfig.__init__
_ORDER = [f.name for f in dataclasses.fields(TrainConfig) if f.init]
_INIT_FIELDS = frozenset(_ORDER)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _outside_the_package() -> int:
    """The ``stacklevel`` that points a warning given in this module at the
    first caller outside the ``rhn`` package (the user's line)."""

    def inside(code: types.CodeType) -> bool:
        # the dataclass's generated __init__ counts as the package's
        generated = code.co_filename == "<string>" and code.co_name == "__init__"
        return generated or os.path.abspath(code.co_filename).startswith(
            _PACKAGE + os.sep
        )

    frame, level = sys._getframe(1), 1
    while frame is not None and inside(frame.f_code):
        frame, level = frame.f_back, level + 1
    if frame is not None and frame.f_code.co_filename.startswith("<frozen"):
        # python -m rhn: no caller of the user's, the package's own entry point
        level -= 1
    return level


class _LeftOut:
    """What ``dataclasses.replace`` reads for a field the config's maker left
    out: the new config leaves it out too, so that it takes the (perhaps new)
    task's default instead of the value the old task filled in."""

    def __repr__(self) -> str:
        return "<left out>"


_LEFT_OUT = _LeftOut()
# the code that reads every field to copy it: dataclasses.replace (and, from
# Python 3.13, dataclasses._replace, behind copy.replace)
_REPLACE_CODES = frozenset(
    getattr(f, "__code__", None)
    for f in (dataclasses.replace, getattr(dataclasses, "_replace", None))
    if f is not None
)


def _getattribute(self: TrainConfig, name: str) -> Any:
    value = object.__getattribute__(self, name)
    if name in _INIT_FIELDS and sys._getframe(1).f_code in _REPLACE_CODES:
        given = object.__getattribute__(self, "__dict__").get("_given_fields")
        if given is not None and name not in given:
            return _LEFT_OUT
    return value


@functools.wraps(_dataclass_init)
def _init(self: TrainConfig, *args: Any, **kwargs: Any) -> None:
    # which fields the caller gave, for __post_init__: the others take the
    # task's defaults (a bad call is left to the dataclass's own __init__)
    left_out = [name for name, value in kwargs.items() if value is _LEFT_OUT]
    if left_out:  # dataclasses.replace: as left out of the config replaced
        kwargs = {k: v for k, v in kwargs.items() if v is not _LEFT_OUT}
        self.__dict__["_replaced"] = True
    self._given = frozenset(_ORDER[: len(args)]) | frozenset(kwargs)
    _dataclass_init(self, *args, **kwargs)
    self.__dict__["_made"] = True


def _setattr(self: TrainConfig, name: str, value: Any) -> None:
    object.__setattr__(self, name, value)
    state = self.__dict__
    if name in _INIT_FIELDS and state.get("_made"):
        # set after the config was made (config.lr = ...): given, as if passed
        # to TrainConfig, so that dataclasses.replace (and train's check of
        # the fields) keeps it
        state["_given_fields"] = state.get("_given_fields", _INIT_FIELDS) | {name}
        state["_set_since"] = state.get("_set_since", frozenset()) | {name}


def stale_fields(config: TrainConfig, remade: TrainConfig) -> dict[str, Any]:
    """The fields ``config`` did not give (filled in from the task's and the
    package's defaults when it was made) that ``remade``, the config made
    again from its given fields (``dataclasses.replace(config)``), fills in
    otherwise: ``{name: value remade}``. Not empty after a field that decides
    other fields' defaults (``task``, ``num_params``) was set on the object,
    or after its ``__dict__`` was written directly."""
    given = config.__dict__.get("_given_fields", _INIT_FIELDS)
    return {
        name: getattr(remade, name)
        for name in _ORDER
        if name not in given and getattr(remade, name) != getattr(config, name)
    }


TrainConfig.__init__ = _init  # type: ignore[method-assign]
TrainConfig.__getattribute__ = _getattribute  # type: ignore[method-assign]
TrainConfig.__setattr__ = _setattr  # type: ignore[method-assign]


def _path_or_none(name: str, value: Any, kind: str) -> str | None:
    """``value`` as a ``str`` path, or ``None``; a non-path or a blank name is an
    error naming ``name`` ("" would write into the current directory)."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(
            f"{name} must be a {kind} path or None, got {type(value).__name__}"
        )
    value = os.fspath(value)
    if not value.strip():
        raise ValueError(f"{name} must be a {kind} name or None, got {value!r}")
    return value


FINGERPRINT_SAMPLE = 256
"""Sequences an own task without a ``fingerprint`` is hashed by: a change to
one row in ten of the data it draws from is missed with a chance of about
0.9**256, 2e-12."""

LEGACY_SAMPLE = 4
"""The sample of records written before :data:`FINGERPRINT_SAMPLE`: their
``task_fingerprint`` is checked against a hash of this many sequences, which
a config's :meth:`TrainConfig.to_dict` also gives (``task_fingerprint_4``)."""


def task_fingerprint(task: Task, seq_len: int, sample: int = FINGERPRINT_SAMPLE) -> str:
    """A short hash of an own task's data: its ``fingerprint`` if it has one
    (:func:`rhn.owntasks.tensor_task`), else its sizes and
    :data:`FINGERPRINT_SAMPLE` sequences it generates from a fixed seed, as
    many from a generator of a fixed seed (the path training batches take),
    and as many of each held-out split. A sample: a task that draws from data of
    its own (a file) and changes a few rows that the sample misses keeps its
    fingerprint; such a task sets ``fingerprint`` to a hash of its data."""
    from .. import _io

    if task.fingerprint is not None:
        return task.fingerprint
    parts: list[Any] = [task.input_size, task.output_size, task.loss, task.readout]
    splits: list[dict[str, Any]] = [{"seed": 0}]
    if task.held_out is not None:
        splits += [{"seed": 0, "split": n} for n in task.held_out if n is not None]
    if sample != LEGACY_SAMPLE and task.held_out is None:
        # training batches come from the generator path, which a task may
        # draw from other data than the seed path's held-out sets
        splits.append({"generator": torch.Generator().manual_seed(0)})
    for extra in splits:
        try:
            parts += list(generate(task, sample, seq_len, **extra))
        except Exception as err:  # training will report it; the hash notes it
            parts.append(type(err).__name__)
    # a record made before the sample grew holds the hash of 4, unnamed
    named = "" if sample == LEGACY_SAMPLE else f"s{sample}-"
    return named + _io.fingerprint(*parts)


def generate(task: Task, *args: Any, **kwargs: Any) -> Any:
    """``task.generate(*args, **kwargs)`` with torch's gradient mode as it was:
    a task that switches gradients off (``torch.set_grad_enabled(False)``)
    would otherwise leave them off for training and for the caller."""
    with torch.set_grad_enabled(torch.is_grad_enabled()):
        return task.generate(*args, **kwargs)


def resolve_device(spec: str | torch.device = "auto") -> torch.device:
    """The device to train on: ``"auto"`` picks CUDA, then Apple MPS, then the CPU.

    Any other string (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"``) or a
    ``torch.device`` is used as given, after checking that it is available.
    """
    if isinstance(spec, str) and spec.strip().lower() == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if spec is None:
        raise TypeError(
            "device must be 'auto', a device string or a torch.device, got None"
        )
    device = _checks.device("device", spec)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {spec!r} was asked for, but CUDA is not available")
    if device.type == "cuda" and device.index is not None:
        count = torch.cuda.device_count()
        if device.index >= count:
            raise ValueError(
                f"device {spec!r} was asked for, but this machine has {count} CUDA "
                f"device{'s' if count != 1 else ''} (cuda:0 to cuda:{count - 1})"
            )
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {spec!r} was asked for, but MPS is not available")
    return device
