r"""Train a recurrent model on a task: config, device, loop, checkpoints.

The pieces, one file each, in the order a run uses them:

- ``rhn/train/config.py``: :class:`TrainConfig`, a dataclass with one comment
  per field; it fills the fields left out with the settings with which an
  RHN solves the task (``rhn.tasks.TASKS[name].defaults``), as the command
  line does, and
  :func:`resolve_device` picks CUDA, then Apple MPS, then the CPU.
- ``rhn/train/model.py``: :class:`SequenceModel`, a recurrent core from
  :func:`rhn.build_model` plus a linear head that reads the last output (or
  every output); :func:`make_model`; the loss, the held-out evaluation and
  the memory estimate checked before anything is allocated.
- ``rhn/train/run.py``: :func:`train`: Adam, gradient clipping, mixed
  precision on CUDA (and on the CPU if asked), a fresh batch from a seeded
  generator at every step, held-out evaluation, a ``tqdm`` progress bar with
  the live loss, a guard that stops on a NaN or infinite loss, a
  ``diverged`` flag for a loss that explodes while finite, checkpoints (also
  written on Ctrl-C, SIGTERM or SIGHUP, see ``rhn/train/interrupts.py``)
  that resume bit for bit on the CPU (and did on one H100, with CUDA graphs
  or dropout), and a callback hook for notebooks.
- ``rhn/train/loggers.py``: :class:`Logger`, the hook that gets one row per
  step, and :class:`CSVLogger` (``TrainConfig.log_csv``, ``--log-csv``).
- ``rhn/train/load.py``: :func:`load_model`, the trained model back from its
  run folder or checkpoint, ready for inference.
- ``rhn/train/records.py`` (:mod:`rhn.train.records`): what a run leaves in
  its folder (checkpoint, ``metrics.json``, the ``run.json`` marker, the
  ``run.lock`` while it runs), the resume check, and the rules by which a run
  owns its folder.

The task may be one of :data:`rhn.tasks.TASKS` or your own
:class:`rhn.tasks.Task` (:func:`rhn.owntasks.tensor_task` makes one from
tensors).

``python -m rhn train --help`` runs the same loop from the command line.

Example::

    >>> from rhn.train import TrainConfig, train
    >>> result = train(TrainConfig.for_task("adding"))  # about a minute on a CPU
    >>> result.metrics["test_loss"] < 0.01 < result.metrics["baseline"]
    True
"""

# Task: typing.get_type_hints evaluates TrainConfig's annotations here (below)
from ..tasks import Task  # noqa: F401
from .config import TrainConfig, resolve_device
from .load import load_model
from .loggers import CSVLogger, Logger
from .model import SequenceModel, make_model
from .records import (
    CHECKPOINT_NAME,
    LOCK_NAME,
    MARKER_NAME,
    METRICS_NAME,
    load_checkpoint,
)
from .run import (
    DIVERGED_FACTOR,
    FolderTakenOver,
    TrainingInterrupted,
    TrainResult,
    train,
)

# The public objects say they live here, where users import them from: the
# API reference documents them as rhn.train.*, and pickles name them so.
for _public in (
    TrainConfig,
    TrainResult,
    SequenceModel,
    resolve_device,
    make_model,
    train,
    load_checkpoint,
    load_model,
    TrainingInterrupted,
    FolderTakenOver,
    Logger,
    CSVLogger,
):
    _public.__module__ = __name__
del _public

__all__ = [
    "TrainConfig",
    "TrainResult",
    "SequenceModel",
    "resolve_device",
    "make_model",
    "train",
    "load_checkpoint",
    "load_model",
    "Logger",
    "CSVLogger",
    "TrainingInterrupted",
    "FolderTakenOver",
    "DIVERGED_FACTOR",
    "CHECKPOINT_NAME",
    "METRICS_NAME",
    "MARKER_NAME",
    "LOCK_NAME",
]
