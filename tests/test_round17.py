"""Hostile round 21's leftovers: a replaced task brings its own defaults,
``select`` refuses a value of the wrong kind, labels per step have an
accuracy.

Each test fails on the code before this round: ``dataclasses.replace(config,
task="copy")`` kept the adding problem's sequence length 100 and depth 2
where the copy task trains with 10 and 1; ``select(record, depth="2")``
returned no run without a word; a task of class labels per step had no
``valid_accuracy``/``test_accuracy`` although the README promised them.
"""

import contextlib
import copy
import dataclasses
import json

import pytest
import torch

from rhn.experiments import select
from rhn.owntasks import tensor_task
from rhn.train import TrainConfig, train
from rhn.train.model import evaluate


def test_replace_with_another_task_brings_its_defaults():
    adding = TrainConfig(task="adding", lr=1e-3)
    copied = dataclasses.replace(adding, task="copy")
    assert copied == TrainConfig(task="copy", lr=1e-3)  # lr kept: it was given
    assert (copied.seq_len, copied.depth, copied.transform_bias) == (10, 1, -1.0)
    # and back: the adding problem's own defaults again, not the copy task's
    assert dataclasses.replace(copied, task="adding") == adding


def test_replace_keeps_what_was_given_and_what_it_changes():
    given = TrainConfig(task="adding", depth=3, seq_len=50)
    moved = dataclasses.replace(given, task="copy", transform_bias=-2.0)
    assert (moved.depth, moved.seq_len, moved.transform_bias) == (3, 50, -2.0)
    assert moved == TrainConfig(task="copy", depth=3, seq_len=50, transform_bias=-2)


def test_replace_within_a_task_changes_only_the_fields_named():
    config = TrainConfig(task="chorales", model="gru", lr=2e-3)
    again = dataclasses.replace(config, seed=4)
    assert again == dataclasses.replace(config, seed=4, lr=2e-3)
    assert dataclasses.asdict(again) == {**dataclasses.asdict(config), "seed": 4}


def test_a_config_from_a_record_keeps_every_value_under_replace():
    # a record's config gives every field: each one is the user's now
    recorded = TrainConfig(**TrainConfig(task="adding").to_dict())
    assert dataclasses.replace(recorded, task="copy").seq_len == 100


@pytest.mark.skipif(not hasattr(copy, "replace"), reason="copy.replace: 3.13+")
def test_copy_replace_is_dataclasses_replace():
    config = TrainConfig(task="adding", lr=1e-3)
    assert copy.replace(config, task="copy") == TrainConfig(task="copy", lr=1e-3)


def test_select_refuses_a_value_of_another_kind():
    record = {"runs": [{"config": {"model": "rhn", "depth": 2, "lr": 5e-3}}]}
    assert select(record, depth=2) == record["runs"]
    assert select(record, depth=2.0) == record["runs"]  # a number is a number
    assert select(record, depth=3) == []  # right kind, no run: fine
    with pytest.raises(TypeError, match=r"depth='2' is a str.*a number"):
        select(record, depth="2")
    with pytest.raises(TypeError, match="model=2 is a number"):
        select(record, model=2)


def _per_step_task():
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 3, (8, 60), generator=g)  # (T, N)
    x = torch.nn.functional.one_hot(labels, 3).float()
    mask = torch.rand(8, 60, generator=g) > 0.3  # (T, N): some steps unscored
    return tensor_task(x, labels, mask=mask)


def test_labels_per_step_have_an_accuracy_over_the_kept_steps():
    task = _per_step_task()
    config = TrainConfig(
        task=task, model="gru", hidden_size=8, steps=30, eval_every=10,
        lr=2e-2, device="cpu", progress=False,
    )  # fmt: skip
    result = train(config)
    x, y, mask = task.generate(10**6, config.seq_len, split=task.held_out[0])
    with torch.no_grad():
        guess = result.model(x).argmax(-1)
    by_hand = float(((guess == y) & mask).sum() / mask.sum())
    assert result.metrics["valid_accuracy"] == pytest.approx(by_hand, abs=1e-12)
    assert len(result.history["test_accuracy"]) == 3  # one per evaluation
    # not the accuracy over every step: the mask leaves some out
    everywhere = float((guess == y).double().mean())
    assert by_hand != everywhere
    scored = evaluate(result.model, task, (x, y, mask), contextlib.nullcontext)
    assert scored["test_accuracy"] == pytest.approx(by_hand, abs=1e-12)


def test_a_field_set_after_the_config_is_made_counts_as_given():
    config = TrainConfig(task="adding")
    config.depth = 3  # set, not passed: still the user's
    assert dataclasses.replace(config, task="copy").depth == 3
    config.lr = 2e-3
    assert dataclasses.replace(config).lr == 2e-3
    # the fields never given still follow the task
    assert dataclasses.replace(config, task="copy").seq_len == 10


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("readout, classes", [("last", 1), ("last", 3), ("all", 3)])
def test_a_trained_model_takes_one_sequence_without_a_batch_axis(
    batch_first, readout, classes
):
    """A student's reloaded model refused one (T, I) sequence, which every
    core of the package takes (chapter 2)."""
    import rhn
    from rhn.train.model import SequenceModel

    torch.manual_seed(0)
    net = SequenceModel(
        rhn.RHN(2, 5), classes, readout=readout, batch_first=batch_first
    ).double()
    x = torch.randn(7, 2, dtype=torch.float64)
    batched = net(x.unsqueeze(0 if batch_first else 1))
    batch_axis = 0 if readout == "last" or batch_first else 1
    torch.testing.assert_close(net(x), batched.select(batch_axis, 0))
    assert net(x).dim() == batched.dim() - 1


def test_a_sweep_refuses_a_grid_field_no_model_of_it_reads(tmp_path):
    """Round 21: grid={"forget_bias": [0, 1]} with an RHN ran once, the
    two settings silently one run."""
    from rhn.experiments import sweep

    base = TrainConfig(task="adding", seq_len=5, hidden_size=4, steps=2,
                       eval_every=1, eval_samples=16, batch_size=4,
                       progress=False, device="cpu")  # fmt: skip
    with pytest.raises(ValueError, match=r"grid\['forget_bias'\].*same run.*'lstm'"):
        sweep(base, {"forget_bias": [0.0, 1.0]}, seeds=[0])
    with pytest.raises(ValueError, match=r"grid\['depth'\].*\(gru, rnn\)"):
        sweep(base, {"model": ["gru", "rnn"], "depth": [1, 2]}, seeds=[0])
    # a model that reads it: each value its own run, the other model's once
    both = sweep(base, {"model": ["rhn", "lstm"], "forget_bias": [0.0, 1.0]}, [0])
    assert len(both["runs"]) == 3
    assert not list(tmp_path.iterdir())  # nothing written without out


def _tiny(**kw):
    # the hostile rounds' shared tiny run (tests/tiny_runs.py), at these steps
    from tiny_runs import tiny

    return tiny(**{"steps": 2, **kw})


def test_train_refuses_a_config_whose_filled_fields_no_longer_fit(tmp_path):
    """Round 22, S4 and S5: after config.task = "copy" the run trained the
    copy task's depth, bias and rate while the config still showed the adding
    problem's; values written into config.__dict__ were dropped."""
    moved = _tiny()
    moved.task = "copy"
    with pytest.raises(ValueError, match=r"depth=2.*task set since.*depth=1"):
        train(moved)
    again = dataclasses.replace(moved)  # the advice works
    assert (again.task, again.depth, again.lr) == ("copy", 1, 3e-3)
    written = _tiny()
    written.__dict__.update(lr=0.05, depth=3)
    with pytest.raises(ValueError, match=r"lr=0\.05.*__dict__"):
        train(written)
    set_one = _tiny(out=str(tmp_path / "run"))
    set_one.lr = 0.01  # a field that decides no other: trains as shown
    train(set_one)
    recorded = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert recorded["config"]["lr"] == 0.01


@pytest.mark.parametrize("text", ['{"name": "plan"}\n', "my notes\n"])
def test_a_run_json_of_the_users_own_is_never_replaced(tmp_path, text):
    """Round 22, D1: a run.json the user keeps in out was replaced by the
    run's marker, without --overwrite (and with it)."""
    out = tmp_path / "rj"
    out.mkdir()
    (out / "run.json").write_text(text)
    for overwrite in (False, True):
        with pytest.raises(ValueError, match=r"not a run's marker.*move the file"):
            train(_tiny(out=str(out)), overwrite=overwrite)
        assert (out / "run.json").read_text() == text
    assert sorted(p.name for p in out.iterdir()) == ["run.json"]


def test_overwrite_without_out_never_empties_a_log_with_rows(tmp_path):
    """Round 22, D4: train(TrainConfig(log_csv=A, out=None), overwrite=True)
    replaced another run's log A, which that run then could not resume with."""
    log = tmp_path / "A.csv"
    first = _tiny(out=str(tmp_path / "first"), log_csv=str(log))
    train(first)
    kept = log.read_bytes()
    with pytest.raises(ValueError, match=r"holds rows of a run.*give another path"):
        train(_tiny(log_csv=str(log), seed=1), overwrite=True)
    assert log.read_bytes() == kept
    # the run that owns it still resumes with its log
    train(dataclasses.replace(first, steps=3), resume=str(tmp_path / "first"))
    assert log.read_bytes().startswith(kept)


def test_a_whole_last_log_row_without_its_newline_is_kept(tmp_path):
    """Round 22, D2: a last row that lost only its newline was removed on
    resume (its held-out loss with it), and the next resume then refused the
    log for the missing row."""
    log, out = tmp_path / "log.csv", tmp_path / "run"
    first = _tiny(out=str(out), log_csv=str(log), steps=4)
    train(first)
    whole = log.read_bytes()
    log.write_bytes(whole[:-1])  # the newline lost
    train(dataclasses.replace(first, steps=6), resume=str(out))
    rows = log.read_text().splitlines()
    assert log.read_bytes().startswith(whole)  # every row kept, newline back
    assert [r.split(",")[1] for r in rows[1:]] == ["1", "2", "3", "4", "5", "6"]
    train(dataclasses.replace(first, steps=8), resume=str(out))  # and again
    # a row cut inside it (by hand, not by a failed write the checkpoint
    # knows of) names no run: the resume says the row is missing, and the
    # file stays as it is
    cut = log.read_bytes()[:-5]
    log.write_bytes(cut)
    with pytest.raises(ValueError, match="row of step 8 is missing"):
        train(dataclasses.replace(first, steps=9), resume=str(out))
    assert log.read_bytes() == cut


def test_a_sweep_never_writes_over_a_record_another_process_wrote(
    tmp_path, monkeypatch
):
    """Round 22, D3: with its lock removed, a running sweep wrote its record
    over the one a second sweep had written meanwhile."""
    from rhn.experiments import load_sweep, sweep

    out = tmp_path / "sl.json"
    theirs = b'{"written": "by another sweep"}'

    def second_sweep_writes(event):  # while the first sweep's run 1 trains
        if event["step"] == 1 and not out.exists():
            out.write_bytes(theirs)

    import rhn.experiments as experiments

    real_train = experiments.train
    monkeypatch.setattr(
        experiments, "train", lambda c: real_train(c, callback=second_sweep_writes)
    )
    with pytest.raises(FileExistsError, match=r"another process.*--resume"):
        sweep(_tiny(), {"lr": [1e-3, 2e-3]}, seeds=[0], out=out)
    monkeypatch.setattr(experiments, "train", real_train)
    assert out.read_bytes() == theirs  # left as it is
    (kept,) = tmp_path.glob("sl.orphan-*.json")
    record = load_sweep(kept, allow_incomplete=True)
    assert len(record["runs"]) == 1  # the run it finished, kept
    again = sweep(_tiny(), {"lr": [1e-3, 2e-3]}, seeds=[0], out=kept, resume=True)
    assert again["complete"] and len(again["runs"]) == 2


def test_a_loader_with_an_unseeded_random_sampler_is_refused():
    """Round 22, S1: SubsetRandomSampler, WeightedRandomSampler and a
    BatchSampler over a RandomSampler were accepted: two identical calls read
    other data (other fingerprints, other losses)."""
    from torch.utils.data import (
        BatchSampler,
        DataLoader,
        RandomSampler,
        SubsetRandomSampler,
        TensorDataset,
        WeightedRandomSampler,
    )

    from rhn.owntasks import loader_task

    data = TensorDataset(torch.randn(40, 6, 2), torch.randn(40))
    unseeded = {
        "SubsetRandomSampler": dict(sampler=SubsetRandomSampler(range(30))),
        "WeightedRandomSampler": dict(sampler=WeightedRandomSampler([1.0] * 40, 40)),
        "shuffle=True": dict(
            batch_sampler=BatchSampler(RandomSampler(data), 8, drop_last=False)
        ),
    }
    for words, kwargs in unseeded.items():
        with pytest.raises(ValueError, match=f"loader .*{words}.*seeded generator"):
            loader_task(DataLoader(data, **kwargs))
    seeded = WeightedRandomSampler(
        [1.0] * 40, 40, generator=torch.Generator().manual_seed(0)
    )  # the same draw in every process: taken
    task = loader_task(DataLoader(data, sampler=seeded, batch_size=8))
    assert task.input_size == 2


def test_the_chorales_refuse_a_seq_len_they_would_not_use():
    """Round 22, S3: --grid seq_len=5,100 on the chorales made two identical
    runs under two labels (whole chorales are used whatever seq_len says)."""
    from rhn.experiments import sweep

    assert TrainConfig(task="chorales").seq_len == 100  # the default: fine
    with pytest.raises(ValueError, match=r"seq_len: task 'chorales'.*leave it out"):
        TrainConfig(task="chorales", seq_len=5)
    base = TrainConfig(task="chorales", steps=1, progress=False, device="cpu")
    with pytest.raises(ValueError, match="seq_len=5"):
        sweep(base, {"seq_len": [5, 100]}, seeds=[0])


def test_a_run_stopped_by_its_callback_resumes_as_if_never_stopped(tmp_path):
    """Round 22, S2: with patience, the evaluation a callback stop adds (at
    the step it stopped) went into the checkpoint, counted towards patience
    after the resume and could become the best weights."""
    config = _tiny(steps=40, eval_every=5, patience=2, lr=0.05)
    whole = train(dataclasses.replace(config, out=str(tmp_path / "whole")))
    part = dataclasses.replace(config, out=str(tmp_path / "part"))
    stopped = train(part, callback=lambda event: event["step"] >= 17)
    assert stopped.history["eval_step"][-1] == 17  # the stopped model, scored
    again = train(part, resume=str(tmp_path / "part"))
    assert again.history == whole.history
    assert again.metrics["best_step"] == whole.metrics["best_step"]
    assert again.metrics["test_loss"] == whole.metrics["test_loss"]
