"""The accuracies in a run's metrics belong to the split they are named after.

A classification task on own data with a validation and a test split: the
evaluations score the validation split, so ``valid_accuracy`` is theirs and
``test_accuracy`` is the test split's, scored at the end on the model
returned (before, ``test_accuracy`` was the last validation accuracy). With
early stopping the accuracy is the best evaluation's, not the last one's.
"""

import contextlib

import torch

from rhn.owntasks import tensor_task
from rhn.train import TrainConfig, train
from rhn.train.model import evaluate


def _task(test=True):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(12, 300, 2, generator=gen)
    y = (x[-1, :, 0] > 0).long()  # the sign of the last step's first input
    x_test = torch.randn(12, 80, 2, generator=gen)
    y_test = 1 - (x_test[-1, :, 0] > 0).long()  # flipped: the test split differs
    kwargs = dict(test=(x_test, y_test)) if test else {}
    return tensor_task(x, y, loss="cross_entropy", valid_fraction=0.2, **kwargs)


def _config(task, **kw):
    return TrainConfig(
        task=task,
        model="gru",
        hidden_size=8,
        steps=60,
        batch_size=16,
        eval_every=20,
        lr=1e-2,
        device="cpu",
        progress=False,
        **kw,
    )


def _accuracy(model, task, split):
    data = task.generate(10**6, 12, split=split)
    return evaluate(model, task, data, contextlib.nullcontext)["test_accuracy"]


def test_test_accuracy_is_the_test_splits():
    task = _task()
    result = train(_config(task))
    m = result.metrics
    valid = _accuracy(result.model, task, task.held_out[0])
    test = _accuracy(result.model, task, task.held_out[1])
    assert abs(valid - test) > 0.2  # the flipped test split really differs
    assert m["valid_accuracy"] == valid
    assert m["test_accuracy"] == test
    assert m["valid_accuracy"] == result.history["test_accuracy"][-1]


def test_no_test_split_no_test_accuracy():
    result = train(_config(_task(test=False)))
    assert result.metrics["test_accuracy"] is None
    assert result.metrics["valid_accuracy"] == result.history["test_accuracy"][-1]


def test_early_stopping_reports_the_best_evaluations_accuracy():
    task = _task(test=False)
    result = train(_config(task, patience=50))
    h, m = result.history, result.metrics
    at = h["eval_step"].index(m["best_step"])
    assert m["valid_accuracy"] == h["test_accuracy"][at]
    assert m["valid_loss"] == h["test_loss"][at]
