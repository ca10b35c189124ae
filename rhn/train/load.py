"""A trained model back from its run: :func:`load_model`."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..tasks import TASKS, Task
from .config import TrainConfig, resolve_device
from .model import (
    _MODEL_FIELDS,
    LAYOUTS,
    SequenceModel,
    build_sequence_model,
    make_model,
)
from .records import filled_config, load_checkpoint, same_data_print

__all__ = ["load_model"]


def load_model(
    run_or_checkpoint: str | Path,
    task: Task | str | None = None,
    *,
    device: str | torch.device = "cpu",
    batch_first: bool | None = None,
) -> nn.Module:
    """The model a run trained, ready for inference (eval mode).

    Args:
        run_or_checkpoint: the run's folder (``TrainConfig.out``) or its
            ``checkpoint.pt``.
        task: not needed: a checkpoint keeps the sizes the model needs. Given
            (the :class:`~rhn.tasks.Task` itself or, for a task of your own,
            its ``"module:function"`` spec as given to ``--task``), it is
            checked to be the run's task, with the run's data (its
            fingerprint). An older checkpoint, without the sizes (no
            ``"model_io"`` in it), needs an own task given.
        device: where to put the model (default the CPU; ``"auto"``, ``"cuda"``,
            ``"cuda:1"``, ``"mps"`` or a ``torch.device``, checked to be
            available as for :class:`~rhn.train.TrainConfig`).
        batch_first: ``None`` (default): the model takes inputs laid out as
            the run's checkpoint records the task's data were (``(B, T, I)``
            for :func:`rhn.owntasks.tensor_task` given ``batch_first=True``,
            else ``(T, B, I)``, time first, as training fed it; a checkpoint
            older than that record gives time first, task given or not);
            ``True`` or ``False`` chooses.

    Returns:
        The :class:`rhn.train.SequenceModel` as :func:`rhn.train.train` returned
        it: with ``patience``, the weights of the best evaluation; else the
        last. See the model's own docstring for its outputs.

    Raises:
        FileNotFoundError: no checkpoint there.
        ValueError: not a checkpoint of :func:`rhn.train.train`; an own task
            of an old checkpoint without ``task``; a ``task`` of another name
            or other data.
    """
    target = resolve_device(device)  # one line for "gpu" or a CUDA that is missing
    if target.type == "meta":  # as TrainConfig refuses it
        raise ValueError(
            "device: a model on the meta device holds no weights; load it on "
            "'cpu' or a GPU, got 'meta'"
        )
    state = load_checkpoint(run_or_checkpoint, name="run_or_checkpoint")
    _check_the_folders_run(Path(run_or_checkpoint), state)
    saved = dict(state["config"])
    recorded_data = saved.pop("task_fingerprint", None)
    name = saved["task"]
    if isinstance(task, str):
        if ":" in task:
            from ..owntasks import task_from_spec

            task = task_from_spec(task, name="task")
        elif task.strip().lower() in TASKS:
            task = TASKS[task.strip().lower()]
        else:
            raise ValueError(
                f"task must be a Task, a module:function spec or one of "
                f"{sorted(TASKS)}, got {task!r}"
            )
    if batch_first is not None and not isinstance(batch_first, bool):
        raise TypeError(
            f"batch_first must be True, False or None, got {type(batch_first).__name__}"
        )
    io = state.get("model_io")
    if io is not None:
        _check_io(io, run_or_checkpoint)
    if task is None and (name not in TASKS or recorded_data) and io is not None:
        # an own task: the checkpoint's sizes are all the model needs
        fields = filled_config(saved)
        model = build_sequence_model(
            {k: fields[k] for k in _MODEL_FIELDS},
            io,
            task_name=name,
            device="cpu",
            batch_first=_layout(io, batch_first),
        )
        return _with_weights(model, state, target, run_or_checkpoint)
    if task is None:
        if name not in TASKS:
            raise ValueError(
                f"task: the run in {str(run_or_checkpoint)!r} trained your own task "
                f"{name!r}, which a checkpoint stores by name only; pass task= (the "
                "Task, or its 'module:function')"
            )
        task = TASKS[name]
    if not isinstance(task, Task):
        raise TypeError(
            "task must be a rhn.tasks.Task, a string or None, got "
            f"{type(task).__name__}"
        )
    if task.name != name:
        raise ValueError(f"task: the run trained task {name!r}, got task {task.name!r}")
    own = TASKS.get(task.name) is not task
    if recorded_data and not own:  # an own task named like a built-in one
        raise ValueError(
            f"task: the run in {str(run_or_checkpoint)!r} trained your own task "
            f"named {name!r} (data fingerprint {recorded_data}), not the built-in "
            "task: pass task= (the Task, or its 'module:function')"
        )
    if own and not recorded_data and name in TASKS:
        raise ValueError(
            f"task: the run in {str(run_or_checkpoint)!r} trained the built-in task "
            f"{name!r}, not your own task of that name: leave task out"
        )
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    # fields the record lacks at the package's defaults, as the resume check
    # counts them (TrainConfig would give them the task's)
    kept = {k: v for k, v in filled_config(saved).items() if k in fields}
    kept.update(task=task, out=None, progress=False, device="cpu")
    config = TrainConfig(**kept)
    now = same_data_print(recorded_data, config.to_dict())
    if recorded_data and now not in (None, recorded_data):
        raise ValueError(
            f"task: {task.name!r} has other data than the run in "
            f"{str(run_or_checkpoint)!r} was trained on (fingerprint "
            f"{now} != {recorded_data})"
        )
    recorded = io.get("batch_first") if isinstance(io, dict) else None
    given = getattr(task, "batch_first", None)
    if batch_first is None and own and isinstance(recorded, bool) and given is not None:
        if bool(given) != recorded:  # the same data, in the other layout
            raise ValueError(
                f"task: the run's data were {LAYOUTS[recorded]}, this task gives "
                f"them {LAYOUTS[bool(given)]}; pass batch_first={bool(given)} for "
                "a model that reads the task's layout, or the task in the run's"
            )
    model = make_model(config, device="cpu")
    model.batch_first = _layout(io, batch_first)
    return _with_weights(model, state, target, run_or_checkpoint)


def _layout(io: object, batch_first: bool | None) -> bool:
    """The layout asked for, else the one the checkpoint records (time first
    for a checkpoint older than the record), whether or not a task is given."""
    if batch_first is not None:
        return batch_first
    return bool(io.get("batch_first", False)) if isinstance(io, dict) else False


def _check_io(io: object, where: str | Path) -> None:
    """A checkpoint's ``model_io`` as :func:`rhn.train.model.model_io` writes it,
    or a ValueError naming the file."""
    sizes_ok = isinstance(io, dict) and set(io) - {"batch_first"} == {
        "input_size",
        "output_size",
        "readout",
    }
    if sizes_ok:
        sizes_ok = (
            all(
                type(io[k]) is int and io[k] >= 1 for k in ("input_size", "output_size")
            )
            and io["readout"] in ("last", "all")
            and type(io.get("batch_first", False)) is bool
        )
    if not sizes_ok:
        raise ValueError(
            f"run_or_checkpoint: {str(where)!r} is damaged: its model_io must be "
            "{'input_size': int, 'output_size': int, 'readout': 'last' or 'all', "
            "'batch_first': bool}, "
            f"got {io!r}"
        )


def _with_weights(
    model: SequenceModel, state: dict, target: torch.device, where: str | Path = ""
) -> SequenceModel:
    """``model`` with the run's weights (its best, with ``patience``), on
    ``target``, in eval mode."""
    best = state.get("best")
    weights = best["model"] if isinstance(best, dict) and "model" in best else None
    try:
        model.load_state_dict(weights if weights is not None else state["model"])
    except RuntimeError as err:  # sizes or names that do not fit the config
        first = str(err).strip().splitlines()
        detail = first[1].strip() if len(first) > 1 else first[0]
        raise ValueError(
            f"run_or_checkpoint: {str(where)!r} is damaged: its weights do not fit "
            f"the model its config and sizes describe ({detail})"
        ) from None
    broken = [
        name
        for name, value in model.state_dict().items()
        if value.is_floating_point() and not torch.isfinite(value).all()
    ]
    if broken:  # a model that answers NaN to everything is no model
        raise ValueError(
            f"run_or_checkpoint: {str(where)!r} holds weights that are not "
            f"finite (NaN or inf in {len(broken)} of them, {broken[0]} first): "
            "the file is damaged, or the run diverged before it was written"
        )
    return model.to(target).eval()


def _check_the_folders_run(given: Path, state: dict[str, Any]) -> None:
    """Refuse a run folder whose checkpoint is another run's (one copied in
    from another folder): the model would not be the one its records
    describe. A checkpoint file given outside a run folder is taken as it is."""
    from .records import CHECKPOINT_NAME, foreign_records

    folder = given if given.is_dir() else given.parent
    if not given.is_dir() and given.name != CHECKPOINT_NAME:
        return
    found = foreign_records(folder, state)
    if found:
        others = " and ".join(sorted(set(found.values())))
        raise ValueError(
            f"run_or_checkpoint: {str(folder / CHECKPOINT_NAME)!r} is a checkpoint "
            f"of run {state['run_id']}, but the folder's {', '.join(sorted(found))} "
            f"describe run {others}: the model would not be the one the records "
            "describe; load the checkpoint from its own run's folder"
        )
    _warn_if_metrics_lag(folder, state)


def _warn_if_metrics_lag(folder: Path, state: dict[str, Any]) -> None:
    """Warn when the folder's ``metrics.json`` is missing (a run interrupted in
    its first segment, or still running), describes an earlier step than its
    checkpoint (an extension by ``--resume`` that was interrupted or is still
    running), or marks the run diverged: its numbers are not the loaded
    model's, or the model is not a trained one."""
    import warnings

    from .. import _io
    from .records import METRICS_NAME

    step = state.get("step")
    best = state.get("best")
    loaded = (
        f"its best weights so far (step {best['step']})"
        if isinstance(best, dict) and "model" in best and "step" in best
        else f"the step-{step} one"
    )
    where = f"run_or_checkpoint: the checkpoint in {str(folder)!r}"
    said = None
    if not (folder / METRICS_NAME).exists():
        said = (
            f"{where} is at step {step}, and the folder has no {METRICS_NAME} yet "
            f"(a run interrupted before it finished, or still running): the model "
            f"loaded is {loaded}; resume the run to finish it"
        )
    else:
        try:
            record = _io.read_json(folder / METRICS_NAME, name="run_or_checkpoint")
        except (OSError, ValueError):
            return
        steps = record.get("steps") if isinstance(record, dict) else None
        if isinstance(record, dict) and record.get("diverged") is True:
            said = (
                f"{where}: its {METRICS_NAME} marks the run diverged (its loss "
                "became non-finite or ended far above the baseline): the model "
                f"loaded is {loaded}, not a trained model"
            )
        elif isinstance(steps, int) and isinstance(step, int) and steps != step:
            said = (
                f"{where} is at step {step}, but its {METRICS_NAME} describes step "
                f"{steps} (a resume that was interrupted or is still running): the "
                f"model loaded is {loaded}, and the numbers in that file are not "
                "its; resume the run to finish it and write them"
            )
    if said is not None:
        warnings.warn(said, stacklevel=4)  # the caller of load_model
