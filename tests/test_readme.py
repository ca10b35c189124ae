"""The README's Python examples run, and its training loop learns."""

import json
import re
from pathlib import Path

import torch

import rhn

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README.read_text(), re.M | re.S)


def test_readme_examples_run_and_the_loop_learns(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # "Your own data" writes runs/sum5
    blocks = python_blocks()
    (loop,) = [b for b in blocks if "optimizer.step()" in b]
    assert len(loop.strip().splitlines()) <= 25  # a short loop, as promised
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small matrices: one thread is fastest
    namespace: dict = {}
    try:
        for block in blocks:  # in order, one namespace, as a reader would paste them
            exec(compile(block, str(README), "exec"), namespace)
    finally:
        torch.set_num_threads(threads)
    # three seeds of this loop ended at 0.003 to 0.006; predicting 1 gives 1/6
    assert namespace["mse"] < 0.05 < rhn.tasks.adding_baseline()
    assert "held-out MSE" in capsys.readouterr().out
    model = namespace["model"]  # the last block: depth 6 with a matched bias
    assert model.depth == 6
    # the carry per step of the package's RHN, depth 2 at -3, as its comment says
    keep = (1 - torch.sigmoid(torch.tensor(model.transform_bias))) ** 6
    torch.testing.assert_close(keep, (1 - torch.sigmoid(torch.tensor(-3.0))) ** 2)


def test_readme_own_data_section_trains_and_reloads(tmp_path, monkeypatch):
    """The section "Your own data": batch-first tensors with a mask to a trained,
    logged and reloaded model."""
    (block,) = [b for b in python_blocks() if "tensor_task" in b]
    monkeypatch.chdir(tmp_path)  # it writes runs/sum3
    namespace: dict = {}
    exec(compile(block, str(README), "exec"), namespace)
    result, net, task = namespace["result"], namespace["net"], namespace["task"]
    assert result.metrics["test_loss"] < 0.5 * result.metrics["baseline"]
    # "300 train, 100 valid, 100 test": test_fraction=0.2 of the 500 sequences
    assert task.held_out == ("valid", "test")
    assert [task.generate(1, split=s)[0].shape[1] for s in task.held_out] == [100, 100]
    assert not net.training
    assert namespace["prediction"].shape == (3, 20)  # (B, T): one per step
    with torch.no_grad():  # train's model and the reloaded one: batch first both
        x = namespace["inputs"][:3]
        assert result.model.batch_first and net.batch_first
        torch.testing.assert_close(net(x), result.model(x))
    # the mask kept steps 0 and 1 out: their targets are never trained on
    _, _, mask = task.generate(4)
    assert mask.shape == (20, 4) and not mask[:2].any() and mask[2:].all()
    rows = (tmp_path / "runs/sum3/log.csv").read_text().splitlines()
    assert rows[0] == "segment,step,train_loss,lr,valid_loss,seconds,run"
    assert len(rows) == 1 + 200  # a header and one row per step
    run = json.loads((tmp_path / "runs/sum3/run.json").read_text())["run_id"]
    assert {row.rsplit(",", 1)[1] for row in rows[1:]} == {run}  # its run's rows


def test_readme_loader_example_trains(tmp_path, monkeypatch):
    """The DataLoader example of "Your own data": the loaders read into a task
    that trains far below its memoryless baseline."""
    (block,) = [b for b in python_blocks() if "loader_task" in b]
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(block, str(README), "exec"), namespace)
    result, task = namespace["result"], namespace["task"]
    assert result.metrics["valid_loss"] < 0.5 * result.metrics["baseline"]
    assert task.held_out == ("valid", None)  # the valid loader, no test
    x = namespace["x"]
    assert task.generate(1, split="valid")[0].shape == (15, 100, 2)  # (T, N, I)
    torch.testing.assert_close(
        task.generate(1, split="valid")[0], x[300:].transpose(0, 1)
    )


def test_readme_states_the_training_defaults():
    """The README's "What a first run on your own data gets" paragraph."""
    import dataclasses

    from rhn.train import TrainConfig

    text = README.read_text()
    assert "What a first run on your own data gets when you give nothing" in text
    fields = {f.name: f.default for f in dataclasses.fields(TrainConfig)}
    stated = {
        "model": "rhn",
        "depth": 2,
        "transform_bias": -3.0,
        "lr": 5e-3,
        "lr_schedule": "cosine",
        "batch_size": 64,
        "clip": 1.0,
        "steps": 1000,
        "eval_every": 100,
        "threads": 1,
        "seed": 0,  # "`seed` (default 0)"
        "patience": 0,  # off: the scores are the last evaluation's
    }
    assert {k: fields[k] for k in stated} == stated
    assert "with `patience=N` the run stops after" in text
    from rhn.baselines import MODELS
    from rhn.train.config import reads_field

    assert sorted(MODELS) == sorted(["rhn", "dtrnn", "gru", "lstm", "rnn"])
    owners = {
        "depth": {"rhn", "dtrnn"},
        "transform_bias": {"rhn"},
        "dropout": {"rhn"},
        "forget_bias": {"lstm"},
    }
    for field, models in owners.items():
        assert {m for m in MODELS if reads_field(m, field)} == models
    source = (README.parent / "rhn" / "train" / "run.py").read_text()
    assert "torch.optim.Adam(" in source and "AdamW" not in source


def test_readme_names_top_level_keys_of_metrics_json(tmp_path):
    # "metrics.json (one JSON object with top-level keys such as `test_loss`,
    # ...)": every key the README names is at the top level of a real run's file
    text = " ".join(README.read_text().split())
    said = re.search(
        r"`metrics.json` \(one JSON object with top-level keys (.*?)\)", text
    )
    assert said, "the README no longer describes metrics.json's keys"
    keys = re.findall(r"`(\w+)`", said.group(1))
    assert len(keys) >= 5
    from rhn.train import TrainConfig, train

    config = TrainConfig(
        task="adding",
        seq_len=5,
        steps=2,
        eval_every=2,
        progress=False,
        out=str(tmp_path / "run"),
    )
    train(config)
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert set(keys) <= set(metrics)
