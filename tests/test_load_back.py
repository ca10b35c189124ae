"""A trained model back in one call: ``load_model(folder)`` needs no task of
your own (the checkpoint keeps the sizes the model needs and the layout the
task's data were given in), and the model takes data laid out as
``tensor_task(..., batch_first=...)`` took them; ``batch_first=`` chooses."""

import dataclasses

import pytest
import torch
from tiny_runs import TINY

from rhn.owntasks import tensor_task
from rhn.train import SequenceModel, TrainConfig, load_model, train
from rhn.train.records import load_checkpoint, save_checkpoint

SMALL = {k: v for k, v in TINY.items() if k not in ("seq_len", "eval_samples")}


def _own(task, out, **fields):
    config = TrainConfig(task=task, out=str(out), **{**SMALL, "steps": 4, **fields})
    return train(config).model


def _per_step_task():
    g = torch.Generator().manual_seed(0)
    inputs = torch.randn(40, 7, 2, generator=g)  # (N, T, I): batch first
    targets = inputs.sum(-1).cumsum(1)  # (N, T)
    mask = torch.arange(7) >= 1
    return inputs, tensor_task(
        inputs, targets, mask=mask, batch_first=True, readout="all", name="running_sum"
    )


def test_an_own_task_loads_without_the_task(tmp_path):
    inputs, task = _per_step_task()
    trained = _own(task, tmp_path / "run", model="rhn", depth=2)
    # the task took its data batch first: so does the model loaded back
    net = load_model(tmp_path / "run")
    assert not net.training and net.batch_first
    x = inputs[:5].transpose(0, 1)  # (T, B, I), as training feeds the model
    assert trained.batch_first  # train returns it in the task's layout too
    with torch.no_grad():
        expected = trained(inputs[:5])  # (B, T)
        assert expected.shape == (5, 7)
        torch.testing.assert_close(net(inputs[:5]), expected, rtol=0, atol=0)
        # given, the task is still checked to be the run's, data and all
        given = load_model(tmp_path / "run", task)
        torch.testing.assert_close(given(inputs[:5]), expected)
        # batch_first=False asks for the training layout
        time_first = load_model(tmp_path / "run", batch_first=False)
        torch.testing.assert_close(time_first(x), expected.T)
    other = tensor_task(
        inputs,
        -inputs.sum(-1),
        mask=torch.arange(7) >= 1,
        batch_first=True,
        readout="all",
        name="running_sum",
    )
    with pytest.raises(ValueError, match="other data"):
        load_model(tmp_path / "run", other)


def test_batch_first_takes_and_gives_sequences_first(tmp_path):
    inputs, task = _per_step_task()
    trained = _own(task, tmp_path / "run", model="gru")
    trained.batch_first = False  # read time first, as training fed it
    net = load_model(tmp_path / "run", batch_first=True)
    assert net.batch_first and "batch_first=True" in repr(net)
    with torch.no_grad():
        time_first = trained(inputs[:5].transpose(0, 1))  # (T, B)
        torch.testing.assert_close(net(inputs[:5]), time_first.transpose(0, 1))
        # one sequence (T, I) is taken too, its output without the batch axis
        torch.testing.assert_close(net(inputs[0]), net(inputs[:1])[0])
    with pytest.raises(ValueError, match=r"x must be a 3-D tensor \(B, T, 2\)"):
        net(inputs[0, 0])
    # the wrong number of features, named in the layout the model takes
    wrong = torch.zeros(4, 7, 3)
    with pytest.raises(ValueError, match=r"\(B, T, 2\) .*got shape \(4, 7, 3\)"):
        net(wrong)
    with pytest.raises(TypeError, match="batch_first must be True, False or None"):
        load_model(tmp_path / "run", batch_first="yes")


def test_a_classifier_of_sequences_loads_back_batch_first(tmp_path):
    g = torch.Generator().manual_seed(1)
    inputs = torch.randn(40, 6, 3, generator=g)
    labels = (inputs[:, :, 0].sum(1) > 0).long()  # (N,): one class per sequence
    task = tensor_task(inputs, labels, batch_first=True, name="sign")
    config = TrainConfig(task=task, out=str(tmp_path / "run"), **{**SMALL, "steps": 4})
    result = train(dataclasses.replace(config, model="lstm"))
    trained = result.model
    trained.batch_first = False  # read time first, as training fed it
    # the README's list of the metrics of a classifier without a test split
    keys = {"valid_loss", "test_loss", "valid_accuracy", "test_accuracy"}
    assert keys <= set(result.metrics)
    assert result.metrics["test_loss"] is result.metrics["test_accuracy"] is None
    net = load_model(tmp_path / "run", batch_first=True)
    with torch.no_grad():
        logits = net(inputs[:4])
        assert logits.shape == (4, 2)  # read out at the last step: (B, C) either way
        torch.testing.assert_close(logits, trained(inputs[:4].transpose(0, 1)))


def test_a_built_in_task_loads_batch_first_too(tmp_path):
    from rhn.tasks import get_task

    out = tmp_path / "run"
    result = train(TrainConfig.for_task("adding", out=str(out), **TINY))
    x, _ = get_task("adding").generate(3, 6, seed=2)  # (T, B, 2)
    with torch.no_grad():
        torch.testing.assert_close(
            load_model(out, batch_first=True)(x.transpose(0, 1)), result.model(x)
        )


def test_a_checkpoint_without_the_sizes_still_asks_for_its_own_task(tmp_path):
    inputs, task = _per_step_task()
    trained = _own(task, tmp_path / "run")
    trained.batch_first = False  # read time first, as training fed it
    path = tmp_path / "run" / "checkpoint.pt"
    state = load_checkpoint(path)
    del state["model_io"]  # as checkpoints were written before they kept it
    save_checkpoint(path, state)
    with pytest.raises(ValueError, match="your own task 'running_sum'.*pass task="):
        load_model(path)
    x = inputs[:2].transpose(0, 1)
    with torch.no_grad():  # an old checkpoint: time first, as it always was
        torch.testing.assert_close(load_model(path, task)(x), trained(x))


def test_a_checkpoint_without_the_layout_gives_time_first_task_given_or_not(tmp_path):
    inputs, task = _per_step_task()  # batch-first data
    trained = _own(task, tmp_path / "run")
    trained.batch_first = False  # read time first, as training fed it
    path = tmp_path / "run" / "checkpoint.pt"
    state = load_checkpoint(path)
    del state["model_io"]["batch_first"]  # as written before the layout was kept
    save_checkpoint(path, state)
    x = inputs[:2].transpose(0, 1)
    for net in (load_model(path), load_model(path, task)):
        assert not net.batch_first
        with torch.no_grad():
            torch.testing.assert_close(net(x), trained(x))


def test_a_loader_task_loads_back_in_its_batches_layout(tmp_path):
    from torch.utils.data import DataLoader, TensorDataset

    from rhn.owntasks import loader_task

    g = torch.Generator().manual_seed(4)
    xs = torch.randn(48, 6, 2, generator=g)  # (N, T, I)
    ys = xs.sum((1, 2))
    batches = DataLoader(TensorDataset(xs, ys), batch_size=16)
    task = loader_task(batches, valid=batches, name="loaded")
    assert task.batch_first  # loader_task's default layout
    _own(task, tmp_path / "run")
    assert load_model(tmp_path / "run").batch_first


def test_a_task_refuses_a_batch_first_that_is_no_bool():
    import dataclasses as dc

    _, task = _per_step_task()
    with pytest.raises(TypeError, match="Task.batch_first must be True or False"):
        dc.replace(task, batch_first=1)


def test_sequence_model_refuses_a_batch_first_that_is_no_bool():
    core = torch.nn.GRU(2, 3)
    core.hidden_size = 3
    with pytest.raises(TypeError, match="batch_first must be True or False, got int"):
        SequenceModel(core, 1, batch_first=1)


@pytest.mark.parametrize(
    "io",
    [
        {},
        {"input_size": 2, "readout": "all"},
        {"input_size": 0, "output_size": 1, "readout": "all"},
        {"input_size": 2, "output_size": 1, "readout": "middle"},
        {"input_size": 2, "output_size": 1, "readout": "all", "batch_first": "yes"},
        [2, 1, "all"],
    ],
)
def test_a_damaged_model_io_is_one_line_naming_the_file(tmp_path, io):
    _, task = _per_step_task()
    _own(task, tmp_path / "run")
    path = tmp_path / "run" / "checkpoint.pt"
    state = load_checkpoint(path)
    state["model_io"] = io
    save_checkpoint(path, state)
    with pytest.raises(ValueError, match=r"checkpoint.pt' is damaged: its model_io"):
        load_model(path)


def test_sizes_that_do_not_fit_the_weights_are_one_line(tmp_path):
    _, task = _per_step_task()
    _own(task, tmp_path / "run")
    path = tmp_path / "run" / "checkpoint.pt"
    state = load_checkpoint(path)
    state["model_io"]["input_size"] = 5  # the weights read 2 features
    save_checkpoint(path, state)
    with pytest.raises(ValueError, match="is damaged: its weights do not fit") as err:
        load_model(path)
    assert "\n" not in str(err.value)
