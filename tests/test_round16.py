"""Session 44's outside reads: what a student and a hostile round found.

Student read 16: batch-first data given without ``batch_first=True`` got a
correct but unhelpful error (the expected shape only); the message now says
which flag the shapes point to.
"""

import pytest
import torch
from test_round14 import _finished, _two_inputs

from rhn.owntasks import tensor_task


@pytest.mark.parametrize(
    "batch_first, x_shape, y_shape, flag",
    [
        (False, (100, 40, 1), (100,), "pass batch_first=True"),
        (False, (100, 40, 1), (100, 3), "pass batch_first=True"),
        (True, (40, 100, 1), (100,), "pass batch_first=False"),
    ],
)
def test_targets_that_fit_the_other_layout_name_the_flag(
    batch_first, x_shape, y_shape, flag
):
    x, y = torch.randn(*x_shape), torch.randn(*y_shape)
    with pytest.raises(ValueError, match=flag):
        tensor_task(x, y, batch_first=batch_first)


def test_targets_that_fit_no_layout_get_no_hint():
    with pytest.raises(ValueError) as caught:
        tensor_task(torch.randn(100, 40, 1), torch.randn(90))
    assert "batch_first" not in str(caught.value)


# Hostile round 16 (cases found by a tester not told the earlier lists).


def _resumes_from(kept, tmp_path, config, step):
    """The state kept beside the old run resumes into a new folder, as a
    branch, from the step it reached."""
    import dataclasses

    from rhn.train import train

    branch = tmp_path / "branch"
    again = dataclasses.replace(config, out=str(branch))
    result = train(again, resume=kept)
    assert result.metrics["steps"] == config.steps
    assert result.history["step"][step - 1] == step  # the steps kept, not redone
    assert (branch / "checkpoint.pt").is_file()


def test_an_overwrite_stopped_before_its_first_checkpoint_keeps_its_steps(tmp_path):
    """D1: Ctrl-C on an --overwrite before its first checkpoint put the old run
    back and threw the new run's steps away (7,125 of them in the report)."""
    import dataclasses

    from tiny_runs import contents, interrupt_at

    from rhn.train import TrainingInterrupted, train

    out, config = _finished(tmp_path)
    before = contents(out)
    again = dataclasses.replace(config, seed=1, steps=20, checkpoint_every=0)
    with pytest.raises(TrainingInterrupted) as caught:
        train(again, overwrite=True, callback=interrupt_at(4))
    kept = caught.value.kept
    assert kept is not None and kept.parent == out.absolute()
    assert kept.name.startswith("checkpoint.orphan-") and kept.is_file()
    assert "its state is kept in" in str(caught.value)
    after = {k: v for k, v in contents(out).items() if k != kept.name}
    assert after == before  # the replaced run, byte for byte
    _resumes_from(kept, tmp_path, again, 4)


def test_an_overwrite_whose_task_fails_early_keeps_its_steps(tmp_path):
    """D2: the same when the run's own task raised: its steps were lost."""
    import dataclasses

    from test_round14 import _task
    from tiny_runs import tiny

    from rhn.train import train

    out = tmp_path / "run"
    first = tiny(task=_task(10**9), steps=6, eval_every=3, out=str(out))
    train(first)
    failing = dataclasses.replace(first, task=_task(5), seed=1, steps=20)
    with pytest.raises(RuntimeError, match="own code failed") as caught:
        train(failing, overwrite=True)
    kept = caught.value.kept
    assert kept.is_file() and "resume it into a folder of its own" in " ".join(
        caught.value.__notes__
    )
    fine = dataclasses.replace(failing, task=_task(10**9))  # the same data
    _resumes_from(kept, tmp_path, fine, 3)


def test_the_printed_resume_command_works_from_any_directory():
    """S1: --out and --log-csv were relative, so the command run elsewhere
    trained a branch in the wrong folder, with exit status 0."""
    import os

    from rhn.__main__ import _command_line

    words = _command_line("adding", {"out": "runs/h", "log_csv": "h.csv"}, "/x.pt")
    assert f"--out {os.path.abspath('runs/h')}" in words
    assert f"--log-csv {os.path.abspath('h.csv')}" in words


def test_a_grid_over_tasks_gives_each_task_its_own_defaults():
    """S2: `--grid task=adding,copy` trained the copy task at the adding
    problem's seq_len, depth, bias and learning rate, labelled task=copy."""
    from rhn.experiments import sweep
    from rhn.train import TrainConfig

    base = TrainConfig(
        hidden_size=4, steps=1, eval_every=1, batch_size=4, eval_samples=8,
        progress=False, device="cpu",
    )  # fmt: skip
    record = sweep(base, {"task": ["adding", "copy"]}, [0])
    by_task = {r["setting"]["task"]: r["config"] for r in record["runs"]}
    copy = TrainConfig(task="copy")
    for field in ("seq_len", "depth", "transform_bias", "lr"):
        assert by_task["copy"][field] == getattr(copy, field), field
    assert by_task["copy"]["hidden_size"] == 4  # what the base was given stays
    assert by_task["adding"]["seq_len"] == TrainConfig().seq_len


def test_a_batch_first_dataloader_read_time_first_is_refused():
    """S3: a DataLoader's (B, T, I) batches with batch_first=False trained
    with T and B swapped; its batch_size gives it away."""
    from torch.utils.data import DataLoader, TensorDataset

    from rhn.owntasks import loader_task

    data = TensorDataset(torch.randn(64, 20, 1), torch.randn(64, 20))
    loader = DataLoader(data, batch_size=8)
    with pytest.raises(ValueError, match="pass batch_first=True"):
        loader_task(loader, batch_first=False)
    assert loader_task(loader, readout="all").readout == "all"  # the right layout


def test_unclear_messages_of_round_16_name_their_argument(tmp_path):
    """Negative class labels, a foreign file resumed as a sweep, a short
    temporal-order sequence, a model loaded on the meta device."""
    from tiny_runs import tiny

    from rhn.experiments import sweep
    from rhn.tasks import temporal_order
    from rhn.train import load_model

    labels = torch.tensor([0, 1, -3, 1] * 5)
    with pytest.raises(ValueError, match=r"class labels must be >= 0, got -3"):
        tensor_task(torch.randn(20, 6, 1), labels, batch_first=True)
    foreign = tmp_path / "foreign.csv"
    foreign.write_text("a,b\n")
    with pytest.raises(ValueError, match=r"^out: "):
        sweep(tiny(steps=1), {"depth": [1]}, [0], out=foreign, resume=True)
    with pytest.raises(ValueError, match="task 'temporal_order'"):
        temporal_order(4, 5)
    out, _ = _finished(tmp_path)
    with pytest.raises(ValueError, match="meta device holds no weights"):
        load_model(out, device="meta")


# Hostile round 17.


def _layout_task(batch_first):
    """One data set, given batch-first or time-first, under one name."""
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(40, 6, 2, generator=g), torch.randn(40, generator=g)
    if not batch_first:
        x = x.transpose(0, 1).contiguous()
    return tensor_task(x, y, batch_first=batch_first, name="layout")


def test_a_resume_that_would_flip_the_models_layout_is_refused(tmp_path):
    """S1: the same tensors given time-first resumed a batch-first run (the
    fingerprint is taken time-first), and load_model then gave a time-first
    model: code fed the batch-first model before the resume got wrong numbers."""
    from rhn.train import TrainConfig, load_model, train

    out = tmp_path / "run"
    small = dict(hidden_size=4, batch_size=4, eval_every=2, progress=False)
    train(TrainConfig(task=_layout_task(True), steps=2, out=str(out), **small))
    flipped = TrainConfig(task=_layout_task(False), steps=4, out=str(out), **small)
    with pytest.raises(ValueError, match="would take another layout"):
        train(flipped, resume=out)
    assert load_model(out).batch_first  # the run and its layout as they were


def test_a_grid_over_a_field_the_task_does_not_read_is_one_run():
    """S2: an own task scores its splits whole, so eval_samples=16,32 made one
    run twice, recorded as two settings."""
    from rhn.experiments import sweep
    from rhn.train import TrainConfig

    base = TrainConfig(
        task=_layout_task(True), hidden_size=4, batch_size=4, steps=1,
        eval_every=1, progress=False,
    )  # fmt: skip
    with pytest.raises(ValueError, match="make the same run"):
        sweep(base, {"eval_samples": [16, 32]}, [0])


def test_messages_about_targets_say_the_real_cause():
    """A training split of one target was told to rescale its targets; the
    ignore label -100 was told it might be regression."""
    x = torch.randn(2, 6, 1)
    with pytest.raises(ValueError, match="every target of the training split"):
        tensor_task(x, torch.tensor([1.0, 2.0]), batch_first=True)
    labels = torch.tensor([0, 1, -100, 1] * 5)
    with pytest.raises(ValueError, match="mask="):
        tensor_task(torch.randn(20, 6, 1), labels, batch_first=True)


def test_integer_targets_with_the_mse_loss_are_refused_when_the_task_is_made():
    """U3: tensor_task accepted them; the error came in train() and blamed a
    generate function the user never wrote."""
    labels = torch.randint(0, 5, (20,), generator=torch.Generator().manual_seed(0))
    with pytest.raises(TypeError, match=r"loss='mse' is a regression on float"):
        tensor_task(torch.randn(20, 6, 1), labels, batch_first=True, loss="mse")


# Hostile round 18.


def test_an_early_stopped_overwrite_keeps_the_rows_it_logged(tmp_path):
    """D1: the replaced run's log came back over the rows the stopped run had
    logged; its kept state resumed into a log that began after them."""
    import dataclasses

    from tiny_runs import interrupt_at, rows, tiny

    from rhn.train import TrainingInterrupted, train

    out, log = tmp_path / "run", tmp_path / "log.csv"
    first = tiny(steps=6, eval_every=3, out=str(out), log_csv=str(log))
    train(first)
    old_log = log.read_bytes()
    again = dataclasses.replace(first, seed=1, steps=20)
    with pytest.raises(TrainingInterrupted) as caught:
        train(again, overwrite=True, callback=interrupt_at(5))
    assert log.read_bytes() == old_log  # the replaced run's log, back
    kept_log = caught.value.kept_log
    assert kept_log.parent == tmp_path and ".orphan-" in kept_log.name
    assert [int(r["step"]) for r in rows(kept_log)] == [1, 2, 3, 4, 5]
    assert "the rows it logged" in " ".join(caught.value.__notes__)


def test_a_loader_batch_whose_targets_miss_sequences_is_named():
    """U3: the message named neither the loader nor the batch."""
    from rhn.owntasks import loader_task

    x, y = torch.randn(10, 6, 1), torch.randn(10)
    with pytest.raises(ValueError, match=r"^train: batch 1 of the loader"):
        loader_task([(x, y), (x, y[:9])])
    with pytest.raises(ValueError, match="meta tensors"):
        loader_task([(x.to("meta"), y.to("meta"))])


def test_a_task_with_splits_whose_generate_takes_no_split_is_named():
    """U6: a raw TypeError from inside the user's generate."""
    import dataclasses

    from tiny_runs import tiny

    from rhn.tasks import adding_problem
    from rhn.train import train

    task = dataclasses.replace(
        _two_inputs("nosplit", adding_problem, baseline=1 / 6),
        held_out=("valid", "test"),
    )
    with pytest.raises(TypeError, match=r"^task 'nosplit': held_out=.*split="):
        train(tiny(task=task))


# Hostile round 19.


def test_the_logs_lr_is_the_rate_its_step_trained_at(tmp_path):
    """S1: the column held the rate after the scheduler's step, the next
    step's; the first row now holds the configured rate."""
    from tiny_runs import rows, tiny

    from rhn.train import train

    log = tmp_path / "log.csv"
    config = tiny(steps=6, eval_every=3, log_csv=str(log), lr=0.005)
    seen = []
    train(config, callback=lambda e: seen.append(e["lr"]))
    logged = [float(r["lr"]) for r in rows(log)]
    assert logged[0] == pytest.approx(0.005)
    assert logged == pytest.approx(seen)
    assert logged[-1] > 0.1 * 0.005  # the last step trains above the floor


def test_load_model_with_a_task_in_the_other_layout_is_refused(tmp_path):
    """S2: the same data given time-first loaded a batch-first model, no word."""
    from rhn.train import TrainConfig, load_model, train

    out = tmp_path / "run"
    small = dict(hidden_size=4, batch_size=4, eval_every=2, progress=False)
    train(TrainConfig(task=_layout_task(True), steps=2, out=str(out), **small))
    with pytest.raises(ValueError, match="pass batch_first=False"):
        load_model(out, task=_layout_task(False))
    model = load_model(out, task=_layout_task(False), batch_first=False)
    assert model.batch_first is False
    assert load_model(out, task=_layout_task(True)).batch_first is True


def test_a_resume_from_another_directory_records_an_absolute_out(tmp_path, monkeypatch):
    """S3: metrics.json held out as '../rel', relative to a directory the
    record does not name."""
    import json

    from tiny_runs import CLI

    from rhn.__main__ import main

    monkeypatch.chdir(tmp_path)
    assert main(["train", *CLI, "--out", "rel"]) == 0
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert main(["train", "--resume", "../rel", "--steps", "5"]) == 0
    record = json.loads((tmp_path / "rel" / "metrics.json").read_text())
    assert record["config"]["out"] == str(tmp_path / "rel")


def test_a_held_out_split_in_another_layout_or_dtype_is_named():
    """U1: a valid split in the other layout was told to pass batch_first,
    which would misread the training data; U2: integer valid targets of a
    regression passed tensor_task and failed in train() naming a generate."""
    x, y = torch.randn(20, 6, 1), torch.randn(20)
    with pytest.raises(ValueError, match="give this split laid out as the training"):
        tensor_task(x, y, batch_first=True, valid=(x.transpose(0, 1)[:, :5], y[:5]))
    with pytest.raises(TypeError, match="valid targets must be floats"):
        tensor_task(x, y, batch_first=True, valid=(x[:5], torch.arange(5)))


# Hostile round 20.


def test_a_shuffling_dataloader_is_refused_when_the_task_is_made():
    """D1, S1: every process read a shuffling loader in another order: two runs
    of one seed differed, and an interrupted run could never be resumed."""
    from torch.utils.data import DataLoader, TensorDataset

    from rhn.owntasks import loader_task

    data = TensorDataset(torch.randn(32, 6, 1), torch.randn(32))
    with pytest.raises(ValueError, match="build the loader with shuffle=False"):
        loader_task(DataLoader(data, batch_size=8, shuffle=True))
    seeded = torch.Generator().manual_seed(0)
    loader_task(DataLoader(data, batch_size=8, shuffle=True, generator=seeded))
    loader_task(DataLoader(data, batch_size=8))


def test_select_leaves_out_models_that_do_not_read_the_field(tmp_path):
    """S2: select(depth=2) returned the GRU's runs, recorded at the base's
    depth; asked for with its model, the GRU's depth is moot."""
    from tiny_runs import tiny

    from rhn.experiments import select, sweep

    record = sweep(tiny(steps=1), {"model": ["rhn", "gru"], "depth": [1, 2]}, [0])
    assert {r["config"]["model"] for r in select(record, depth=2)} == {"rhn"}
    assert len(select(record, model="gru", depth=2)) == len(select(record, model="gru"))


def test_an_own_task_may_not_take_a_built_in_name():
    """S3: Task(name="adding") trained and its record said task "adding",
    with the wrong baseline for the built-in task of that name."""
    from rhn.tasks import adding_problem
    from rhn.train import TrainConfig

    task = _two_inputs("adding", adding_problem, baseline=6.0)
    with pytest.raises(ValueError, match="may not take a built-in task's name"):
        TrainConfig(task=task)


def test_sweep_refuses_a_base_with_run_folders_or_logs(tmp_path):
    """S4: base.out, log_csv and checkpoint_every were ignored, yet the
    record's call listed them."""
    from tiny_runs import tiny

    from rhn.experiments import sweep

    with pytest.raises(ValueError, match="base must leave out, log_csv"):
        sweep(tiny(steps=1, out=str(tmp_path / "r")), {"depth": [1]}, [0])
