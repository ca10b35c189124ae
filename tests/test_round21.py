"""Hostile rounds 34-35: what each found silently wrong, lost or unclear,
with a test that fails on the code before its fix."""

from __future__ import annotations

import json
import shutil
import warnings

import pytest
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, TensorDataset

from rhn.owntasks import loader_task
from rhn.train import FolderTakenOver, load_model, train
from tests.tiny_runs import tiny


def _finished_run(folder, **overrides):
    train(tiny(out=str(folder), **overrides))
    return folder


def test_a_moved_folder_never_replaces_the_files_put_in_its_place(tmp_path):
    other = _finished_run(tmp_path / "other", steps=2)
    (other / "run.json").unlink()  # a finished run copied in without its run.json
    before = {p.name: p.read_bytes() for p in other.iterdir()}
    out = tmp_path / "live"
    config = tiny(out=str(out), steps=6, checkpoint_every=2)

    def at_step_3(event):
        if event["step"] == 3:
            shutil.move(out, tmp_path / "live-moved")
            shutil.move(other, out)

    with pytest.raises(FolderTakenOver, match="moved or removed") as caught:
        train(config, callback=at_step_3)
    kept = caught.value.path
    assert kept.parent == out and kept.name.startswith("checkpoint.orphan-")
    after = {p.name: p.read_bytes() for p in out.iterdir() if p != kept}
    assert after == before  # the other run's checkpoint and metrics untouched
    assert torch.load(kept, weights_only=False)["step"] == 4


def test_the_command_line_exits_1_for_a_moved_folder(monkeypatch, capsys):
    import rhn.__main__ as cli
    from rhn.train.run import FolderMoved

    def moved(*args, **kwargs):
        raise FolderMoved("out: 'x' was moved or removed while this run trained")

    monkeypatch.setattr("rhn.train.train", moved)
    assert cli.main(["train", "--steps", "1", "--out", "x", "--no-progress"]) == 1
    assert "moved or removed" in capsys.readouterr().err


def _time_first_loader(per_step_targets: bool, n: int = 64, steps: int = 6):
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(steps, 2, generator=g) for _ in range(n)]
    ys = [(x[:, 0] > 0).long() if per_step_targets else x[0, 0] for x in xs]

    def collate(batch):  # the classic RNN collate: pad_sequence is time-first
        x = pad_sequence([b[0] for b in batch])
        y = pad_sequence([b[1] for b in batch]) if per_step_targets else None
        return x, (y if y is not None else torch.stack([b[1] for b in batch]))

    pairs = list(zip(xs, ys, strict=True))
    return DataLoader(pairs, batch_size=8, collate_fn=collate)


@pytest.mark.parametrize("per_step", [True, False])
def test_time_first_batches_are_not_read_as_batch_first(per_step):
    loader = _time_first_loader(per_step)
    with pytest.raises(ValueError, match=r"time-first \(T, B, I\); pass batch_first="):
        loader_task(loader)
    task = loader_task(loader, batch_first=False)  # what the message says works
    assert task.held_out is not None


def test_a_batch_first_loader_smaller_than_its_batch_is_not_called_time_first():
    # 5 sequences of 8 steps in batches of 8: the one batch is (5, 8, 2)
    x = torch.randn(5, 8, 2)
    loader = DataLoader(TensorDataset(x, x[:, 0, 0]), batch_size=8)
    loader_task(loader, valid_fraction=0.2, test_fraction=0.2)


def test_load_model_warns_for_an_unfinished_and_for_a_diverged_run(tmp_path):
    run = _finished_run(tmp_path / "r", steps=2)
    metrics = json.loads((run / "metrics.json").read_text())
    (run / "metrics.json").unlink()  # as a run interrupted in its first segment
    with pytest.warns(UserWarning, match="no metrics.json yet"):
        load_model(run)
    (run / "metrics.json").write_text(json.dumps({**metrics, "diverged": True}))
    with pytest.warns(UserWarning, match="marks the run diverged"):
        load_model(run)


def test_the_lagging_metrics_warning_names_the_best_weights_it_loads(tmp_path):
    out = tmp_path / "p"
    train(tiny(out=str(out), steps=2, patience=50))
    train(tiny(out=str(out), steps=4, patience=50), resume=out)
    state = torch.load(out / "checkpoint.pt", weights_only=False)
    metrics = json.loads((out / "metrics.json").read_text())
    (out / "metrics.json").write_text(json.dumps({**metrics, "steps": 2}))
    with pytest.warns(UserWarning, match=r"its best weights so far \(step \d\)"):
        load_model(out)
    assert state["best"] is not None


@pytest.mark.parametrize("split", ["valid", "test"])
def test_the_training_data_given_as_a_held_out_split_is_warned_of(split):
    from rhn.owntasks import tensor_task

    x, y = torch.randn(6, 40, 2), torch.randn(40)
    with pytest.warns(
        UserWarning, match=f"{split}: .* of the {split} split are training"
    ):
        tensor_task(x, y, **{split: (x, y)})
    loader = DataLoader(TensorDataset(x.transpose(0, 1), y), batch_size=8)
    with pytest.warns(UserWarning, match="40 of the 40 sequences of the valid split"):
        loader_task(loader, loader, loader)
    other = (torch.randn(6, 10, 2), torch.randn(10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # other sequences: no word
        tensor_task(x, y, **{split: other})


def test_a_resumed_run_that_diverges_is_not_told_to_change_what_a_resume_keeps(
    tmp_path, capsys
):
    from rhn.__main__ import main
    from tests.tiny_runs import CLI, one_error_line

    out = str(tmp_path / "r")
    assert main(["train", *CLI, "--lr", "5", "--clip", "0", "--out", out]) == 1
    capsys.readouterr()
    steps = CLI.index("--steps") + 1
    longer = [*CLI[:steps], "5", *CLI[steps + 1 :]]
    assert main(["train", *longer, "--resume", out]) == 1  # diverged again
    said = one_error_line(capsys)
    assert "set --clip 1" in said and "a resume keeps the run's --lr and --clip" in said


def test_a_sweep_whose_record_was_removed_says_so_and_keeps_its_runs(tmp_path):
    from rhn.experiments import _Writer

    path = tmp_path / "swd" / "x.json"
    path.parent.mkdir()
    write = _Writer(path)
    write({"runs": [{"seed": 0}]})
    shutil.rmtree(path.parent)  # the folder deleted while the sweep runs
    with pytest.raises(FileExistsError, match="was removed \\(or moved\\)") as caught:
        write({"runs": [{"seed": 0}, {"seed": 1}]})
    assert "another process" not in str(caught.value)
    (kept,) = path.parent.glob("x.orphan-*.json")
    assert len(json.loads(kept.read_text())["runs"]) == 2


@pytest.mark.parametrize("field", ["out", "log_csv", "checkpoint_every"])
def test_a_tasks_defaults_may_not_say_where_a_run_writes(field, tmp_path):
    from rhn.owntasks import tensor_task
    from rhn.train import TrainConfig

    x, y = torch.randn(6, 40, 2), torch.randn(40)
    value = 5 if field == "checkpoint_every" else str(tmp_path / "zz")
    task = tensor_task(x, y, defaults={field: value})
    with pytest.raises(TypeError, match=f"its defaults set \\['{field}'\\]"):
        TrainConfig(task=task, progress=False)
    assert not (tmp_path / "zz").exists()


def test_a_second_ctrl_c_during_the_checkpoint_on_the_way_out_waits_for_it(
    tmp_path, monkeypatch
):
    import os
    import signal

    from rhn.train import TrainingInterrupted, records
    from tests.tiny_runs import interrupt_at

    original = records.save_checkpoint

    def impatient(path, state):  # the user presses Ctrl-C again mid-write
        os.kill(os.getpid(), signal.SIGINT)
        original(path, state)

    out = tmp_path / "s"
    monkeypatch.setattr(records, "save_checkpoint", impatient)
    with pytest.raises(TrainingInterrupted) as caught:
        train(tiny(out=str(out), steps=6), callback=interrupt_at(2))
    assert caught.value.checkpoint == out / "checkpoint.pt"
    assert torch.load(out / "checkpoint.pt", weights_only=False)["step"] == 2


def test_metrics_json_records_where_the_run_wrote_wherever_it_started(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    train(tiny(out="e", log_csv="e_b.csv"))
    record = json.loads((tmp_path / "e" / "metrics.json").read_text())
    assert record["config"]["log_csv"] == "e_b.csv"  # as given
    assert record["run"]["paths"] == {
        "out": str(tmp_path / "e"),
        "log_csv": str(tmp_path / "e_b.csv"),
    }


def test_the_validation_data_given_as_the_test_split_is_warned_of():
    from rhn.owntasks import tensor_task

    x, y = torch.randn(6, 40, 2), torch.randn(40)
    xv, yv = torch.randn(6, 10, 2), torch.randn(10)
    with pytest.warns(UserWarning, match="10 of the 10 sequences of the test split "):
        tensor_task(x, y, valid=(xv, yv), test=(xv, yv))


def test_patience_on_a_task_without_a_validation_split_says_what_test_loss_is():
    from rhn.train.run import PATIENCE_ON_TEST

    with pytest.warns(UserWarning, match="patience on task 'adding'"):
        result = train(tiny(steps=4, patience=2))
    assert result.metrics["test_loss_note"] == PATIENCE_ON_TEST
    assert "test_loss_note" not in train(tiny(steps=4)).metrics


def test_a_missing_sweep_file_is_not_reported_as_a_missing_shipped_record(
    tmp_path, monkeypatch
):
    from rhn.experiments import load_sweep

    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="no file 'sg.json' in the working"):
        load_sweep("sg.json")
    assert load_sweep("adding_models.json")["runs"]  # a shipped one still loads
