"""The optimisation study: equal budgets, the record's layout, reproducibility."""

import json

import pytest
import torch

import rhn
from rhn import optstudy
from rhn.train import TrainConfig, make_model


def test_study_record_layout_budget_and_initial_gradients(tmp_path):
    out = tmp_path / "study.json"
    record = optstudy.run_study(
        depths=[1, 3], seeds=[0, 1], steps=4, eval_every=2, seq_len=6,
        num_params=600, eval_samples=16, out=out,
    )  # fmt: skip
    assert record["complete"] and json.loads(out.read_text()) == record
    runs = record["runs"]
    assert [(r["depth"], r["model"], r["seed"]) for r in runs] == [
        (d, m, s) for d in (1, 3) for m in ("rhn", "dtrnn") for s in (0, 1)
    ]
    for run in runs:
        assert abs(run["num_params"] - 600) / 600 < 0.1  # the same budget
        assert run["grad_steps"] == [0, 2, 4]
        assert all(len(curve) == 6 for curve in run["grad_norms"])
        assert len(run["history"]["train_loss"]) == 4
    # the lag curve at step 0 is that of the model train() starts from
    run = runs[-1]
    config = TrainConfig(
        task="adding", seq_len=6, model="dtrnn", depth=3, hidden_size=None,
        num_params=600, seed=1, progress=False,
    )  # fmt: skip
    torch.manual_seed(1)
    core = make_model(config).core
    probe, _ = rhn.tasks.adding_problem(32, 6, seed=12345)
    expected = rhn.gradflow.gradient_norms(core, probe)
    torch.testing.assert_close(torch.tensor(run["grad_norms"][0]), expected)


def test_study_rejects_bad_arguments():
    with pytest.raises(ValueError, match="models"):
        optstudy.run_study(models=["lstm"], steps=1)
    with pytest.raises(ValueError, match="depths"):
        optstudy.run_study(depths=[0], steps=1)
