"""Issue 32: training from a DataLoader of your own (rhn.owntasks.loader_task),
read once into the tensors of a tensor_task, with one-line errors and the
resume rule of a tensor_task."""

import pytest
import torch
from tiny_runs import TINY
from torch.utils.data import DataLoader, TensorDataset

from rhn.owntasks import loader_task, tensor_task
from rhn.train import TrainConfig, train

SMALL = {k: v for k, v in TINY.items() if k != "seq_len"}


def _data(seed=0, n=60, T=7):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, T, 2, generator=g)  # (N, T, I)
    return x, x[:, -2:, 0].sum(1)  # (N,)


def _loaders(x, y, **kwargs):
    kwargs.setdefault("batch_size", 16)
    train_part = DataLoader(TensorDataset(x[:40], y[:40]), **kwargs)
    valid_part = DataLoader(TensorDataset(x[40:50], y[40:50]), batch_size=4)
    test_part = DataLoader(TensorDataset(x[50:], y[50:]), batch_size=3)
    return train_part, valid_part, test_part


def test_a_loader_task_is_the_tensor_task_of_its_data():
    x, y = _data()
    task = loader_task(*_loaders(x, y), name="mine")
    same = tensor_task(
        x[:40], y[:40], valid=(x[40:50], y[40:50]), test=(x[50:], y[50:]),
        batch_first=True, name="mine",
    )  # fmt: skip
    assert task.fingerprint == same.fingerprint
    assert task.held_out == ("valid", "test")
    runs = [train(TrainConfig(task=t, **SMALL)) for t in (task, same)]
    assert runs[0].history == runs[1].history
    assert runs[0].metrics["test_loss"] == runs[1].metrics["test_loss"]


def test_time_first_batches_with_targets_and_a_mask_per_step():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 20, 3, generator=g)  # (T, N, I)
    y = x[..., 0].cumsum(0)  # (T, N): one target per step
    m = torch.ones(6, 20, dtype=torch.bool)
    m[:2] = False
    batches = [(x[:, i : i + 5], y[:, i : i + 5], m[:, i : i + 5]) for i in (0, 5, 10)]
    task = loader_task(batches, batch_first=False, valid_fraction=0.2)
    same = tensor_task(x[:, :15], y[:, :15], mask=m[:, :15], valid_fraction=0.2)
    assert task.fingerprint == same.fingerprint and task.readout == "all"
    # a mask for every step goes in mask=, not in the batches too
    with pytest.raises(ValueError, match="^mask: the train batches carry a mask"):
        loader_task(batches, batch_first=False, mask=m[:, 0])


@pytest.mark.parametrize(
    ("batches", "message"),
    [
        ([{"x": 1}], r"^train: batch 0 of the loader must be \(inputs, targets\).*"
         r"got a dict with keys \['x'\]$"),
        ([(torch.zeros(4, 7),)], r"^train: batch 0 .* got a tuple of 1 \(Tensor\)$"),
        ([(torch.zeros(4, 7), torch.zeros(4))],
         r"^train: batch 0 has inputs of shape \(4, 7\); expected \(B, T, I\)"),
        ([(torch.zeros(4, 7, 2), torch.zeros(4)),
          (torch.zeros(4, 5, 2), torch.zeros(4))],
         r"^train: batch 1 has inputs torch.float32 of shape \(4, 5, 2\), batch 0 "
         r"torch.float32 of shape \(4, 7, 2\); every batch must have the same"),
        ([(torch.zeros(4, 7, 2), torch.zeros(4)),
          (torch.zeros(4, 7, 2), torch.zeros(4, dtype=torch.long))],
         r"^train: batch 1 has targets torch.int64 .* batch 0 torch.float32"),
        ([], r"^train: the loader yielded no batch; expected at least one$"),
    ],
)  # fmt: skip
def test_a_wrong_batch_is_one_line_naming_it(batches, message):
    with pytest.raises(ValueError, match=message) as err:
        loader_task(batches)
    assert "\n" not in str(err.value)


def test_what_is_not_a_loader_is_named():
    with pytest.raises(TypeError, match="^train must be a DataLoader .* a Tensor"):
        loader_task(torch.zeros(3, 4, 2))
    with pytest.raises(TypeError, match=r"^valid must be a DataLoader .* a dict"):
        loader_task([(torch.zeros(4, 7, 2), torch.zeros(4))], valid={"a": 1})
    with pytest.raises(TypeError, match=r"unknown argument\(s\) \['batchsize'\]"):
        loader_task([(torch.zeros(4, 7, 2), torch.zeros(4))], batchsize=4)


def test_a_resume_needs_the_same_data_in_the_same_order(tmp_path):
    x, y = _data()
    out = str(tmp_path / "run")
    train(TrainConfig(task=loader_task(*_loaders(x, y)), **SMALL, out=out))
    more = {**SMALL, "steps": 4, "out": out}
    other = loader_task(*_loaders(*_data(seed=5)))
    with pytest.raises(ValueError, match="task_fingerprint.*other data"):
        train(TrainConfig(task=other, **more), resume=out)
    g = torch.Generator().manual_seed(3)
    shuffled = loader_task(*_loaders(x, y, shuffle=True, generator=g))
    with pytest.raises(ValueError, match="task_fingerprint.*other data"):
        train(TrainConfig(task=shuffled, **more), resume=out)
    again = loader_task(*_loaders(x, y, batch_size=7))  # another batch size: same
    assert train(TrainConfig(task=again, **more), resume=out).metrics["steps"] == 4
