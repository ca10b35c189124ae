r"""Train a recurrent model on a toy task: config, device, loop, checkpoints.

The pieces, in the order a run uses them:

- :class:`TrainConfig`, a dataclass with one comment per field;
  :meth:`TrainConfig.for_task` fills in the settings with which an RHN solves
  a task (``rhn.tasks.TASKS[name].defaults``).
- :func:`resolve_device`: CUDA, then Apple MPS, then the CPU, unless told.
- :class:`SequenceModel`: a recurrent core from :func:`rhn.build_model` plus a
  linear head that reads the last output (or every output).
- :func:`train`: Adam, gradient clipping, mixed precision on CUDA (and on
  the CPU if asked), a fresh batch from a seeded generator at every step,
  held-out evaluation, a ``tqdm`` progress bar with the live loss, a guard
  that stops on a NaN or infinite loss, a ``diverged`` flag for a loss that
  explodes while finite, checkpoints that resume bit-for-bit on the CPU
  (also written on Ctrl-C or SIGTERM), a history of metrics written as JSON,
  and a callback hook for notebooks. It reads top to bottom as the steps of
  a private ``_Run``: set-up, ``restore``, ``fit`` (``train_step``,
  ``evaluate``, ``save_checkpoint``, interrupt handling), ``finish``.

``python -m rhn train --help`` runs the same loop from the command line.

Example::

    >>> from rhn.train import TrainConfig, train
    >>> result = train(TrainConfig.for_task("adding"))  # about a minute on a CPU
    >>> result.metrics["test_loss"] < 0.01 < result.metrics["baseline"]
    True
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from . import _checks, _cli, chorales
from .baselines import MODELS, build_model, count_parameters, matched_hidden_size
from .defaults import DEPTH, TRANSFORM_BIAS
from .tasks import Task, get_task

__all__ = [
    "TrainConfig",
    "TrainResult",
    "SequenceModel",
    "resolve_device",
    "make_model",
    "train",
    "load_checkpoint",
    "TrainingInterrupted",
    "DIVERGED_FACTOR",
]

CHECKPOINT_NAME = "checkpoint.pt"
METRICS_NAME = "metrics.json"


@dataclass
class TrainConfig:
    """Everything that defines a training run. The defaults solve the adding problem.

    Use :meth:`for_task` to start from a task's own defaults.
    """

    task: str = "adding"  # in rhn.tasks.TASKS: adding, copy, temporal_order, chorales
    seq_len: int = 100  # sequence length T handed to the task's generator
    model: str = "rhn"  # recurrent core: rhn, dtrnn, lstm, gru or rnn
    depth: int = DEPTH  # recurrence depth D of rhn and dtrnn (ignored by the others)
    hidden_size: int | None = 48  # H; None: matched to num_params
    num_params: int | None = None  # parameter budget of the core if hidden_size is None
    num_layers: int = 1  # stacked recurrent layers N
    transform_bias: float = TRANSFORM_BIAS  # initial RHN transform-gate bias (carry)
    forget_bias: float | None = None  # initial LSTM forget-gate bias; None: torch's
    steps: int = 1000  # optimiser steps, one fresh batch each
    batch_size: int = 64  # sequences per step
    lr: float = 5e-3  # Adam learning rate
    lr_schedule: str = "cosine"  # "constant" or "cosine" (decays to lr / 10)
    weight_decay: float = 0.0  # Adam weight decay
    clip: float = 1.0  # max global gradient norm; 0 turns clipping off
    eval_every: int = 100  # steps between held-out evaluations
    eval_samples: int = 1000  # held-out sequences (fixed, never trained on)
    stop_loss: float | None = None  # stop early once the held-out loss is below
    seed: int = 0  # seeds the initial weights, the batches and the held-out set
    device: str = "auto"  # auto (cuda > mps > cpu), cpu, cuda, cuda:1, mps
    # mixed precision: None on CUDA only (bfloat16, else float16); True also on
    # the CPU (bfloat16 autocast, slower there: it exists so CI tests the path)
    amp: bool | None = None
    cuda_graph: bool = False  # replay each step from a CUDA graph (rhn.graphs)
    threads: int | None = (
        1  # torch CPU threads (small models: 1 is fastest); None: torch's
    )
    out: str | None = None  # directory for metrics.json and checkpoint.pt
    checkpoint_every: int = 0  # also checkpoint every this many steps (0: at end)
    progress: bool = True  # show a tqdm progress bar with the live loss
    dropout: float = 0.0  # RHN variational dropout (input, state, output); 0: off
    patience: int = 0  # early stop after this many evaluations without a better
    # held-out loss, keeping the best weights; 0: off

    def __post_init__(self) -> None:
        self.task = get_task(self.task).name
        self.seq_len = _checks.positive_int("seq_len", self.seq_len)
        self.model = _checks.choice("model", self.model, list(MODELS))
        self.depth = _checks.positive_int("depth", self.depth)
        if self.hidden_size is None and self.num_params is None:
            raise ValueError("give hidden_size or num_params (both are None)")
        if self.hidden_size is not None and self.num_params is not None:
            raise ValueError(
                f"give hidden_size or num_params, not both (got hidden_size="
                f"{self.hidden_size}, num_params={self.num_params}); set "
                "hidden_size=None to size the model by num_params"
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
        self.lr = _checks.real("lr", self.lr)
        if self.lr <= 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        self.lr_schedule = _checks.choice(
            "lr_schedule", self.lr_schedule, ["constant", "cosine"]
        )
        self.weight_decay = _checks.real("weight_decay", self.weight_decay)
        self.clip = _checks.real("clip", self.clip)
        if self.clip < 0 or self.weight_decay < 0:
            raise ValueError(
                f"clip and weight_decay must be >= 0, got clip={self.clip}, "
                f"weight_decay={self.weight_decay}"
            )
        self.eval_every = _checks.positive_int("eval_every", self.eval_every)
        self.eval_samples = _checks.positive_int("eval_samples", self.eval_samples)
        if self.stop_loss is not None:
            self.stop_loss = _checks.real("stop_loss", self.stop_loss)
        # the held-out set uses seed 2 * seed + 1, which must stay below 2**32
        self.seed = _checks.seed("seed", self.seed, limit=_checks.SEED_LIMIT // 2)
        if not isinstance(self.device, str):
            raise TypeError(
                f"device must be a string such as 'auto', 'cpu' or 'cuda', got "
                f"{type(self.device).__name__}"
            )
        self.device = self.device.strip().lower()
        if self.device != "auto":
            _checks.device("device", self.device)  # availability is checked by train
        if self.threads is not None:
            self.threads = _checks.positive_int("threads", self.threads)
        self.checkpoint_every = _checks.positive_int(
            "checkpoint_every", self.checkpoint_every, minimum=0
        )
        if self.amp is not None:
            _checks.boolean("amp", self.amp)
        _checks.boolean("progress", self.progress)
        _checks.boolean("cuda_graph", self.cuda_graph)
        if self.out is not None:
            self.out = str(self.out)
        self.dropout = _checks.probability("dropout", self.dropout)
        self.patience = _checks.positive_int("patience", self.patience, minimum=0)

    @classmethod
    def for_task(cls, task: str, **overrides: Any) -> TrainConfig:
        """A config with ``task``'s default settings, then ``overrides`` on top.

        Unknown field names raise a ``TypeError`` naming them.
        """
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - fields)
        if unknown:
            raise TypeError(
                f"unknown TrainConfig field(s) {unknown}; the fields are "
                f"{sorted(fields)}"
            )
        defaults = dict(get_task(task).defaults)
        if overrides.get("num_params") is not None and "hidden_size" not in overrides:
            defaults["hidden_size"] = None  # a budget replaces the default size
        if overrides.get("hidden_size") is not None and "num_params" not in overrides:
            defaults["num_params"] = None  # a size replaces the default budget
        return cls(task=task, **{**defaults, **overrides})

    def to_dict(self) -> dict[str, Any]:
        """The config as a plain dict (JSON-ready)."""
        return dataclasses.asdict(self)


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
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {spec!r} was asked for, but MPS is not available")
    return device


class SequenceModel(nn.Module):
    r"""A recurrent core with a linear head: sequence in, prediction out.

    Args:
        core: any model of :mod:`rhn` (``forward(x) -> (output (T, B, H), state)``)
            with a ``hidden_size`` attribute.
        out_features: outputs of the head: 1 for regression, the number of
            classes for classification.
        readout: ``"last"`` (default) scores the output of the last time step
            only; ``"all"`` applies the head at every step.

    Inputs: x
        - **x** of shape ``(T, B, I)``.

    Outputs: y
        - ``readout="last"``: ``(B,)`` if ``out_features == 1``, else
          ``(B, out_features)``.
        - ``readout="all"``: ``(T, B)`` or ``(T, B, out_features)``.
    """

    def __init__(self, core: nn.Module, out_features: int, *, readout: str = "last"):
        super().__init__()
        self.core = core
        self.out_features = _checks.positive_int("out_features", out_features)
        self.readout = _checks.choice("readout", readout, ["last", "all"])
        self.head = nn.Linear(core.hidden_size, self.out_features)
        # Build the head with the core's dtype and device.
        ref = next(core.parameters())
        self.head.to(device=ref.device, dtype=ref.dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        output, _ = self.core(x)  # (T, B, H)
        if self.readout == "last":
            output = output[-1]  # (B, H)
        y = self.head(output)  # (..., out_features)
        return y.squeeze(-1) if self.out_features == 1 else y

    def extra_repr(self) -> str:
        return f"readout={self.readout!r}"


def make_model(
    config: TrainConfig, device: torch.device | str | None = None
) -> nn.Module:
    """Build the :class:`SequenceModel` that ``config`` describes.

    The hidden size is ``config.hidden_size``, or, if that is ``None``, the one
    whose core has closest to ``config.num_params`` parameters
    (:func:`rhn.matched_hidden_size`); the head adds ``(H + 1) * outputs``.
    """
    task = get_task(config.task)
    kwargs: dict[str, Any] = {"num_layers": config.num_layers}
    if config.model == "rhn":
        kwargs.update(depth=config.depth, transform_bias=config.transform_bias)
    if config.model == "dtrnn":
        kwargs.update(depth=config.depth)
    if config.model == "lstm":
        kwargs.update(forget_bias=config.forget_bias)
    if config.model == "rhn" and config.dropout > 0:
        rate = config.dropout
        kwargs.update(input_dropout=rate, state_dropout=rate, output_dropout=rate)
    H = config.hidden_size
    if H is None:
        H = matched_hidden_size(
            config.model, task.input_size, config.num_params, **kwargs
        )
    core = build_model(config.model, task.input_size, H, device=device, **kwargs)
    model = SequenceModel(core, task.output_size, readout=task.readout)
    if task.init_head is not None:
        task.init_head(model.head)
    return model


def _loss(task: Task, prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    prediction = prediction.float()  # the loss in float32 even under autocast
    if task.loss == "frame_nll":  # piano rolls, padding marked in the targets
        return chorales.task_loss(prediction, target)
    if task.loss == "mse":
        return F.mse_loss(prediction, target.float())
    return F.cross_entropy(prediction.reshape(-1, task.output_size), target.reshape(-1))


@dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes:
        model: the trained :class:`SequenceModel` (in eval mode).
        history: per-step ``step``/``train_loss`` lists and per-evaluation
            ``eval_step``/``test_loss`` (and ``test_accuracy`` for
            classification with ``readout="last"``) lists. On a task with
            ``held_out`` splits (the chorales) the evaluations score the
            validation split, never the test split: their losses are in
            ``valid_loss``, and ``test_loss`` repeats them under the name the
            other tasks use.
        metrics: the summary written to ``metrics.json``: ``test_loss`` (the
            final held-out loss), ``baseline``, ``diverged`` (see
            :func:`train`), ``steps``, ``seconds``, ``device``,
            ``num_params``, ``hidden_size``, ... With ``patience``, the model
            is the one of the best evaluation, ``best_step`` says when that
            was and ``test_loss`` is its held-out loss. On a task with
            ``held_out`` splits (the chorales), the evaluations score the
            validation split, ``valid_loss`` is the validation loss of the
            model returned and ``test_loss`` its loss on the test split.
    """

    model: nn.Module
    history: dict[str, list[float]]
    metrics: dict[str, Any]


def _schedule(config: TrainConfig) -> Callable[[int], float]:
    if config.lr_schedule == "constant":
        return lambda step: 1.0
    # cosine from 1 to 0.1 over the run
    return lambda step: (
        0.1 + 0.45 * (1 + math.cos(math.pi * min(step, config.steps) / config.steps))
    )


@torch.no_grad()
def _evaluate(
    model: nn.Module,
    task: Task,
    data: tuple[torch.Tensor, torch.Tensor],
    autocast: Callable[[], contextlib.AbstractContextManager],
    chunk: int = 1024,
) -> dict[str, float]:
    """Held-out loss (and accuracy for one-label classification), by chunks."""
    was_training = model.training
    model.eval()
    x, y = data
    if task.loss == "frame_nll":  # a whole split at once: NLL per frame
        with autocast():
            pred = model(x)
        model.train(was_training)
        return {"test_loss": _loss(task, pred, y).item()}
    B = y.shape[-1]
    total, correct = 0.0, 0
    for start in range(0, B, chunk):
        xb, yb = x[:, start : start + chunk], y[..., start : start + chunk]
        with autocast():
            pred = model(xb)
        n = yb.shape[-1]
        total += _loss(task, pred, yb).item() * n
        if task.loss == "cross_entropy" and task.readout == "last":
            correct += (pred.argmax(-1) == yb).sum().item()
    model.train(was_training)
    out = {"test_loss": total / B}
    if task.loss == "cross_entropy" and task.readout == "last":
        out["test_accuracy"] = correct / B
    return out


# What every checkpoint written by train() holds.
_CHECKPOINT_KEYS = (
    "config",
    "model",
    "optimizer",
    "scheduler",
    "scaler",
    "batch_generator",
    "torch_rng",
    "history",
    "step",
    "seconds",
)


def load_checkpoint(path: str | Path, *, name: str = "path") -> dict[str, Any]:
    """Load a checkpoint written by :func:`train` (``weights_only=True``: safe).

    Args:
        path: the ``checkpoint.pt`` file, or the run directory holding it.
        name: how error messages call ``path`` (:func:`train` says ``resume``).

    Raises:
        FileNotFoundError: if there is no such file.
        ValueError: if the file is empty, truncated, not a torch file, or a
            torch file that is not a checkpoint of :func:`train` (a bare
            ``state_dict``, say); the message says what was found.
    """
    if not isinstance(path, (str, Path)):
        raise TypeError(
            f"{name} must be a path (str or pathlib.Path), got {type(path).__name__}"
        )
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_NAME  # a run directory
    expected = f"the {CHECKPOINT_NAME} that rhn.train writes into its out directory"
    if not path.is_file():
        raise FileNotFoundError(f"{name}: no checkpoint file at {str(path)!r}")
    if path.stat().st_size == 0:
        raise ValueError(
            f"{name}: {str(path)!r} is empty (0 bytes); expected {expected}"
        )
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # truncated zips, JSON, pickles of other objects, ...
        reason = str(err).strip().splitlines()[0] if str(err).strip() else ""
        raise ValueError(
            f"{name}: {str(path)!r} is not a readable torch checkpoint "
            f"({type(err).__name__}: {reason[:120]}); expected {expected}"
        ) from err
    missing = (
        [k for k in _CHECKPOINT_KEYS if k not in state]
        if isinstance(state, dict)
        else list(_CHECKPOINT_KEYS)
    )
    if missing:
        found = (
            f"a dict with keys {sorted(map(str, state))[:6]}"
            if isinstance(state, dict)
            else f"a {type(state).__name__}"
        )
        raise ValueError(
            f"{name}: {str(path)!r} is not a checkpoint of rhn.train: it holds "
            f"{found}, without {missing}; expected {expected}"
        )
    return state


def train(
    config: TrainConfig,
    *,
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
    resume: str | Path | None = None,
) -> TrainResult:
    """Train the model ``config`` describes on its task; return model, history, metrics.

    Every step draws a fresh batch from a generator seeded by ``config.seed``;
    the held-out set is drawn once from a separate seed, so its sequences are
    never trained on.

    Args:
        config: the run (see :class:`TrainConfig`).
        callback: called after every step with a dict holding ``step``,
            ``train_loss``, ``lr``, ``model``, ``history`` and, after an
            evaluation, ``test_loss``. Returning ``True`` stops training
            early (a checkpoint is still written when ``config.out`` is set).
        resume: path of a checkpoint to continue from. Its config must equal
            ``config`` up to the fields that do not change the numbers
            (``out``, ``progress``, ``device``, ``checkpoint_every``,
            ``threads``); on the CPU the resumed run reproduces the
            uninterrupted one exactly.

    Returns:
        A :class:`TrainResult`. With ``config.out`` set, also writes
        ``out/metrics.json`` and ``out/checkpoint.pt``.

    The caller's global state is left as it was: the number of torch
    threads (``config.threads``) and the global random generator (seeded with
    ``config.seed`` for the initial weights) are restored when the run ends.

    ``metrics["diverged"]`` is ``True`` when the final held-out loss is not
    finite or more than :data:`DIVERGED_FACTOR` times the task's baseline
    (the loss of the best constant prediction): a run can blow up while its
    loss stays finite.

    Raises:
        FloatingPointError: if the training loss becomes NaN or infinite; the
            message names the step. With ``config.out`` set,
            ``metrics.json`` is written first, with ``"diverged": true``.
        TrainingInterrupted: on SIGINT (Ctrl-C) or SIGTERM. The signal is
            acted on between two steps: the checkpoint then written (with
            ``config.out`` set) resumes bit for bit. A second Ctrl-C stops
            at once, without a checkpoint.
        ValueError: if ``config.out`` is a file or cannot be written (checked
            before the first step), or ``resume`` is empty, truncated, not a
            checkpoint of :func:`train`, or one of another config.
        FileNotFoundError: if ``resume`` names no file.
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    if config.out is not None:
        _cli.writable_dir("out", config.out)  # before any work, not after it
    with _caller_state_kept():
        run = _Run(config)
        if resume is not None:
            run.restore(resume)
        run.fit(callback)
        if run.signal is not None:
            raise run.interrupted()
        return run.finish()


DIVERGED_FACTOR = 10.0
"""A run whose final held-out loss exceeds this many baselines has diverged."""


class TrainingInterrupted(KeyboardInterrupt):
    """:func:`train` was stopped by SIGINT or SIGTERM between two steps.

    A ``KeyboardInterrupt``, so that code catching ``Exception`` lets it
    through as it would a plain Ctrl-C.

    Attributes:
        signum: the signal number (``signal.SIGINT`` or ``signal.SIGTERM``).
        step: the last step completed.
        checkpoint: the checkpoint written on the way out (``None`` when the
            config has no ``out``).
        exit_code: the conventional exit status, ``128 + signum`` (130 for
            SIGINT, 143 for SIGTERM).
    """

    def __init__(self, signum: int, step: int, checkpoint: Path | None) -> None:
        self.signum, self.step, self.checkpoint = signum, step, checkpoint
        self.exit_code = 128 + signum
        where = (
            f"checkpoint written to {checkpoint}"
            if checkpoint is not None
            else "no checkpoint written (config.out is None)"
        )
        name = signal.Signals(signum).name
        super().__init__(f"training interrupted by {name} after step {step}; {where}")


@contextlib.contextmanager
def _caller_state_kept() -> Iterator[None]:
    """Restore torch's thread count and global random state on the way out."""
    threads = torch.get_num_threads()
    rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    try:
        yield
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        torch.set_rng_state(rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)


@contextlib.contextmanager
def _signals_deferred() -> Iterator[list[int]]:
    """Turn SIGINT and SIGTERM into a note that the loop reads between steps.

    Stopping between two steps keeps the model, the optimiser and the data
    generator consistent, so the checkpoint written then resumes exactly. A
    second SIGINT raises ``KeyboardInterrupt`` at once, for a stuck step.
    Signal handlers can only be set in the main thread; elsewhere nothing
    changes.
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def note(signum: int, frame: Any) -> None:
        if received and signum == signal.SIGINT:
            raise KeyboardInterrupt
        received.append(signum)

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, note)
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


class _Run:
    """One training run: its state, and the named steps that advance it.

    :func:`train` calls them top to bottom: set-up (``__init__``), optionally
    :meth:`restore`, then :meth:`fit`, which repeats :meth:`train_step`,
    :meth:`evaluate` and :meth:`save_checkpoint`, and last :meth:`finish`.
    """

    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.task = get_task(config.task)
        self.device = resolve_device(config.device)
        if config.threads is not None:
            torch.set_num_threads(config.threads)

        # The order of these draws fixes the run: weights first, then data.
        torch.manual_seed(config.seed)  # initial weights (and dropout masks)
        self.model = make_model(config, device=self.device)
        lr: float | torch.Tensor = config.lr
        capturable = config.cuda_graph and self.device.type == "cuda"
        if capturable:  # a captured step reads its learning rate from a tensor
            lr = torch.tensor(config.lr, device=self.device)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(),
            lr=lr,
            weight_decay=config.weight_decay,
            capturable=capturable,
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, _schedule(config)
        )
        # Two independent streams: even seeds train, odd seeds test.
        self.batches = torch.Generator().manual_seed(2 * config.seed)
        held_out = {}
        if self.task.held_out is not None:  # a fixed data set: its validation split
            held_out = {"split": self.task.held_out[0]}
        self.test_data = self.task.generate(
            config.eval_samples,
            config.seq_len,
            seed=2 * config.seed + 1,
            device=self.device,
            **held_out,
        )
        self.best: dict[str, Any] | None = None  # best held-out loss (patience)
        self._setup_precision()
        self.graphed: Any = None  # rhn.graphs.GraphedStep, made at the first step
        if config.cuda_graph:
            self._check_cuda_graph()
        self.history: dict[str, list[float]] = {
            "step": [],
            "train_loss": [],
            "eval_step": [],
            "test_loss": [],
        }
        if self.task.held_out is not None:  # the evaluations score validation
            self.history["valid_loss"] = []
        self.step = 0
        self.seconds = 0.0
        self.signal: int | None = None  # set by fit when SIGINT/SIGTERM stopped it

    def _setup_precision(self) -> None:
        """Mixed precision: bfloat16 autocast (float16 + scaler on old GPUs).

        ``amp=None`` uses it on CUDA only; ``amp=True`` also on the CPU, where
        it is slower but runs the same code path (so CI tests it).
        """
        amp, kind = self.config.amp, self.device.type
        self.use_amp = (amp is None and kind == "cuda") or (
            amp is True and kind in ("cuda", "cpu")
        )
        self.amp_dtype = torch.bfloat16
        if self.use_amp and kind == "cuda" and not torch.cuda.is_bf16_supported():
            self.amp_dtype = torch.float16
        self.scaler = torch.amp.GradScaler(
            "cuda", enabled=self.use_amp and self.amp_dtype == torch.float16
        )

    def _check_cuda_graph(self) -> None:
        # The captured optimizer step reads the learning rate from one tensor;
        # before torch 2.4 the LR scheduler replaced that tensor instead of
        # filling it, so the graph would keep the first rate without a word.
        version = torch.torch_version.TorchVersion(torch.__version__)
        if version < (2, 4):
            raise ValueError(
                f"cuda_graph=True needs torch >= 2.4 (its LR schedulers update a "
                f"tensor learning rate in place), got torch {torch.__version__}"
            )
        if self.device.type != "cuda":
            raise ValueError(
                f"cuda_graph=True needs a CUDA device, got device {self.device}"
            )
        if self.scaler.is_enabled():
            raise ValueError(
                "cuda_graph=True cannot capture float16 with a GradScaler (this GPU "
                "has no bfloat16); set amp=False or cuda_graph=False"
            )

    def autocast(self) -> contextlib.AbstractContextManager:
        """The context the forward pass runs in (autocast, or nothing)."""
        if self.use_amp:  # the device's own autocast (tests use the CPU's)
            return torch.autocast(self.device.type, dtype=self.amp_dtype)
        return contextlib.nullcontext()

    def restore(self, path: str | Path) -> None:
        """Continue from the checkpoint at ``path`` (same config required)."""
        state = load_checkpoint(path, name="resume")
        _check_resume(self.config, state["config"])
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.scaler.load_state_dict(state["scaler"])
        self.batches.set_state(state["batch_generator"])
        torch.set_rng_state(state["torch_rng"])
        self.history = state["history"]
        if self.task.held_out is not None and "valid_loss" not in self.history:
            # a checkpoint written before the key existed: the same numbers
            self.history["valid_loss"] = list(self.history["test_loss"])
        self.step, self.seconds = int(state["step"]), float(state["seconds"])
        self.best = state.get("best")

    def train_step(self) -> float:
        """One optimiser step on a fresh batch; returns the batch's loss."""
        config = self.config
        self.step += 1
        x, y = self.task.generate(
            config.batch_size,
            config.seq_len,
            generator=self.batches,
            device=self.device,
        )
        if config.cuda_graph:
            return self._graphed_step(x, y)
        with self.autocast():
            prediction = self.model(x)
        loss = _loss(self.task, prediction, y)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            raise FloatingPointError(
                f"the training loss became {loss_value} at step {self.step} "
                f"({config.model} on {config.task}, lr={config.lr}); lower the "
                "learning rate or the gradient clip (--lr, --clip)"
            )
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        if config.clip > 0:
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), config.clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.scheduler.step()
        self.history["step"].append(self.step)
        self.history["train_loss"].append(loss_value)
        return loss_value

    def _graphed_step(self, x: torch.Tensor, y: torch.Tensor) -> float:
        """:meth:`train_step` replayed from a CUDA graph (``config.cuda_graph``).

        The graph is captured at the first step (:class:`rhn.graphs.GraphedStep`);
        its optimizer step runs before the loss is checked, so a non-finite loss
        stops the run one update later than without the graph.
        """
        if self.graphed is None:
            from .graphs import GraphedStep

            self.graphed = GraphedStep(
                lambda xb, yb: _loss(self.task, self.model(xb), yb),
                list(self.model.parameters()),
                self.optimizer,
                x,
                y,
                clip=self.config.clip or None,
                amp_dtype=self.amp_dtype if self.use_amp else None,
                capture=self.device.type == "cuda",
            )
        loss_value = self.graphed(x, y).item()
        if not math.isfinite(loss_value):
            raise FloatingPointError(
                f"the training loss became {loss_value} at step {self.step}; lower "
                "the learning rate or the gradient clip (--lr, --clip)"
            )
        self.scheduler.step()
        self.history["step"].append(self.step)
        self.history["train_loss"].append(loss_value)
        return loss_value

    def evaluate(self) -> dict[str, float]:
        """Score the held-out set and append the scores to the history.

        On a task with ``held_out`` splits the set is the validation split,
        and its loss is also returned and recorded as ``valid_loss``.
        """
        scores = _evaluate(self.model, self.task, self.test_data, self.autocast)
        if self.task.held_out is not None:
            scores["valid_loss"] = scores["test_loss"]
        self.history["eval_step"].append(self.step)
        for key, value in scores.items():
            self.history.setdefault(key, []).append(value)
        if self.config.patience and (
            self.best is None or scores["test_loss"] < self.best["loss"]
        ):
            weights = {
                k: v.detach().clone() for k, v in self.model.state_dict().items()
            }
            self.best = {
                "loss": scores["test_loss"],
                "step": self.step,
                "model": weights,
            }
        return scores

    def out_of_patience(self) -> bool:
        """Whether ``patience`` evaluations have passed without a better loss."""
        if not self.config.patience or self.best is None:
            return False
        since = sum(s > self.best["step"] for s in self.history["eval_step"])
        return since >= self.config.patience

    def held_out_metrics(self) -> dict[str, Any]:
        """With early stopping, the best step and loss; on a fixed data set, the
        validation loss and the test split's loss (of the model as it is)."""
        out: dict[str, Any] = {}
        if self.best is not None:
            # the held-out set also chose these weights
            out.update(best_step=self.best["step"], test_loss=self.best["loss"])
        if self.task.held_out is not None:
            out["valid_loss"] = out.pop("test_loss", self.history["test_loss"][-1])
            test = self.task.generate(
                self.config.eval_samples,
                self.config.seq_len,
                device=self.device,
                split=self.task.held_out[1],
            )
            scores = _evaluate(self.model, self.task, test, self.autocast)
            out["test_loss"] = scores["test_loss"]
        return out

    def save_checkpoint(self) -> None:
        """Write everything a resumed run needs to ``out/checkpoint.pt``."""
        out = Path(self.config.out)
        out.mkdir(parents=True, exist_ok=True)
        state = {
            "config": self.config.to_dict(),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "batch_generator": self.batches.get_state(),
            "torch_rng": torch.get_rng_state(),
            "history": self.history,
            "step": self.step,
            "seconds": self.seconds,
            "best": self.best,
        }
        tmp = out / (CHECKPOINT_NAME + ".tmp")
        torch.save(state, tmp)
        tmp.replace(out / CHECKPOINT_NAME)  # never leave a half-written checkpoint

    def fit(self, callback: Callable[[dict[str, Any]], bool | None] | None) -> None:
        """Step until ``config.steps``, an early stop, the callback, or a signal.

        A SIGINT or SIGTERM ends the loop after the current step and leaves
        its number in ``self.signal`` (see :func:`_signals_deferred`).
        """
        bar = self._progress_bar()
        self.model.train()
        try:
            with _signals_deferred() as signals:
                self._loop(callback, bar, signals)
        except FloatingPointError as err:
            self._write_metrics(self.metrics(diverged=True, error=str(err)))
            raise
        finally:
            if bar is not None:
                bar.close()
        if signals:
            self.signal = signals[0]

    def _loop(
        self,
        callback: Callable[[dict[str, Any]], bool | None] | None,
        bar: Any,
        signals: list[int],
    ) -> None:
        """The loop proper: step, evaluate, report, checkpoint; stop when told."""
        config = self.config
        stopped = False
        start = time.perf_counter() - self.seconds
        while self.step < config.steps and not stopped and not signals:
            loss_value = self.train_step()
            event: dict[str, Any] = {
                "step": self.step,
                "train_loss": loss_value,
                "lr": float(self.optimizer.param_groups[0]["lr"]),
            }
            if self.step % config.eval_every == 0 or self.step == config.steps:
                scores = self.evaluate()
                event.update(scores)
                stopped = (
                    config.stop_loss is not None
                    and scores["test_loss"] < config.stop_loss
                ) or self.out_of_patience()
            self.seconds = time.perf_counter() - start
            if bar is not None:
                self._show_progress(bar, event)
            if callback is not None:
                event.update(model=self.model, history=self.history)
                if callback(event):
                    stopped = True
            if (
                config.out is not None
                and config.checkpoint_every
                and self.step % config.checkpoint_every == 0
            ):
                self.save_checkpoint()

    def interrupted(self) -> TrainingInterrupted:
        """Checkpoint the run stopped by a signal; the exception to raise."""
        checkpoint = None
        if self.config.out is not None:
            self.save_checkpoint()
            checkpoint = Path(self.config.out) / CHECKPOINT_NAME
        return TrainingInterrupted(self.signal, self.step, checkpoint)

    def _progress_bar(self) -> Any:
        """A ``tqdm`` bar starting at the current step, or ``None``."""
        if not self.config.progress:
            return None
        from tqdm.auto import tqdm  # imported here: only runs that show a bar need it

        return tqdm(
            total=self.config.steps,
            initial=self.step,
            desc=f"{self.config.model} on {self.config.task}",
            unit="step",
            dynamic_ncols=True,
        )

    def _show_progress(self, bar: Any, event: dict[str, Any]) -> None:
        bar.update(1)
        if "test_loss" in event or self.step % 10 == 0:
            postfix = {"loss": f"{event['train_loss']:.4f}"}
            if self.history["test_loss"]:
                # what the evaluations score: the validation split on a data set
                label = "test" if self.task.held_out is None else "valid"
                postfix[label] = f"{self.history['test_loss'][-1]:.4f}"
            bar.set_postfix(postfix, refresh=False)

    def metrics(self, *, diverged: bool = False, error: str | None = None) -> dict:
        """The summary of the run as it stands (written to ``metrics.json``)."""
        history = self.history
        test_loss = history["test_loss"][-1] if history["test_loss"] else None
        baseline = self.task.baseline(self.config.seq_len)
        diverged = diverged or (
            test_loss is not None
            and not (
                math.isfinite(test_loss) and test_loss <= DIVERGED_FACTOR * baseline
            )
        )
        metrics: dict[str, Any] = {
            "task": self.task.name,
            "model": self.config.model,
            "test_loss": test_loss,
            "baseline": baseline,
            "diverged": diverged,
            "steps": self.step,
            "seconds": self.seconds,
            "device": _device_name(self.device),
            "num_params": count_parameters(self.model),
            "hidden_size": self.model.core.hidden_size,
        }
        if "test_accuracy" in history:
            metrics["test_accuracy"] = history["test_accuracy"][-1]
        if self.task.held_out is not None:
            # the evaluations scored the validation split; the test split is
            # scored only at the end (held_out_metrics), so a run that stops on
            # an error has no test loss
            metrics["valid_loss"], metrics["test_loss"] = test_loss, None
        if error is not None:
            metrics["error"] = error
        return metrics

    def _write_metrics(self, metrics: dict[str, Any]) -> None:
        """Write ``out/metrics.json``: the metrics, the config and the history."""
        if self.config.out is None:
            return
        record = {**metrics, "config": self.config.to_dict(), "history": self.history}
        (Path(self.config.out) / METRICS_NAME).write_text(json.dumps(record, indent=1))

    def finish(self) -> TrainResult:
        """Evaluate if the last step was not, write checkpoint and metrics, return."""
        if not self.history["eval_step"] or self.history["eval_step"][-1] != self.step:
            self.evaluate()  # stopped early between evaluations
        self.model.eval()
        if self.config.out is not None:
            self.save_checkpoint()  # to resume from: the last weights (and the best)
        if self.best is not None:  # early stopping: back to the best weights
            self.model.load_state_dict(self.best["model"])
        metrics = {**self.metrics(), **self.held_out_metrics()}
        if self.config.out is not None:
            self._write_metrics(metrics)
        return TrainResult(model=self.model, history=self.history, metrics=metrics)


# Fields a resumed run may change: they do not alter the numbers it computes.
_RESUMABLE = {"out", "progress", "device", "checkpoint_every", "threads"}


def _check_resume(config: TrainConfig, saved: dict[str, Any]) -> None:
    current = config.to_dict()
    changed = sorted(
        key for key in saved if key not in _RESUMABLE and saved[key] != current.get(key)
    )
    if changed:
        details = ", ".join(f"{k}: {saved[k]!r} -> {current.get(k)!r}" for k in changed)
        raise ValueError(
            f"resume: the checkpoint was trained with a different config ({details})"
        )


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type
