"""Hostile round 31: a loader that drops its last partial batch is refused
(its sequences were left out without a word); a sweep grid of seeds says
where seeds go; the help of --seq-len says the chorales refuse it."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import BatchSampler, DataLoader, SequentialSampler, TensorDataset

from rhn.experiments import sweep
from rhn.owntasks import loader_task
from rhn.train import TrainConfig


def _data(n: int = 70) -> TensorDataset:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, 6, 2, generator=g)
    return TensorDataset(x, x[:, -2:, 0].sum(1))


@pytest.mark.parametrize("split", ["train", "valid", "test"])
def test_a_loader_that_drops_sequences_is_refused(split):
    dropping = DataLoader(_data(), batch_size=32, drop_last=True)
    whole = DataLoader(_data(), batch_size=32)
    loaders = {"train": whole, "valid": whole, "test": whole, split: dropping}
    with pytest.raises(ValueError, match=r"drops its last 6 \(drop_last=True\)"):
        loader_task(loaders["train"], loaders["valid"], loaders["test"])


def test_a_batch_sampler_that_drops_is_refused_and_one_that_drops_none_taken():
    sampler = BatchSampler(SequentialSampler(range(70)), batch_size=32, drop_last=True)
    with pytest.raises(ValueError, match=r"drops its last 6 .*drop_last=False"):
        loader_task(DataLoader(_data(), batch_sampler=sampler))
    # 64 sequences in batches of 32: drop_last drops nothing, all are read
    exact = DataLoader(_data(64), batch_size=32, drop_last=True)
    task = loader_task(exact, test=DataLoader(_data(64), batch_size=64))
    whole = loader_task(
        DataLoader(_data(64), batch_size=32), test=DataLoader(_data(64), batch_size=64)
    )
    assert task.fingerprint == whole.fingerprint


def test_a_grid_of_seeds_says_where_seeds_go(tmp_path):
    base = TrainConfig(hidden_size=4, steps=1, progress=False, device="cpu")
    with pytest.raises(ValueError, match=r"'seed' is not a TrainConfig field.*seeds="):
        sweep(base, {"seed": [0, 1]}, seeds=[0], out=tmp_path / "s.json")


def test_the_help_of_seq_len_does_not_call_it_ignored(capsys):
    from rhn.__main__ import main

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    seq_len = text[text.index("--seq-len T sequence") :][:120]
    assert "ignored" not in seq_len and "not for the chorales" in seq_len
