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
    with pytest.raises(ValueError, match=r"grid\['forget_bias'\].*one run.*'lstm'"):
        sweep(base, {"forget_bias": [0.0, 1.0]}, seeds=[0])
    with pytest.raises(ValueError, match=r"grid\['depth'\].*\(gru, rnn\)"):
        sweep(base, {"model": ["gru", "rnn"], "depth": [1, 2]}, seeds=[0])
    # a model that reads it: each value its own run, the other model's once
    both = sweep(base, {"model": ["rhn", "lstm"], "forget_bias": [0.0, 1.0]}, [0])
    assert len(both["runs"]) == 3
    assert not list(tmp_path.iterdir())  # nothing written without out
