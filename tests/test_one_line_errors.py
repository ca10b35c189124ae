"""Second round of hostile inputs (issue 21): sizes, threads, odd values and
damaged files give one clear line naming the option or the file."""

import json

import numpy as np
import pytest
import torch

import rhn
from rhn import analysis, chorales, gradflow
from rhn.__main__ import main
from rhn.experiments import load_sweep
from rhn.train import TrainConfig, train
from rhn.train.model import estimate_bytes

CLI_TINY = ["--seq-len", "6", "--hidden-size", "8", "--depth", "2", "--batch-size"]
CLI_TINY += ["16", "--eval-samples", "64", "--device", "cpu", "--no-progress"]


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--hidden-size", str(10**12)], "too large for this machine"),
        (["--depth", str(10**8)], "depth=100000000"),
        (["--num-params", str(10**15), "--hidden-size", "8"], "not allowed with"),
        (["--threads", str(2**80)], "threads must be at most"),
        (["--out", ""], "out must be a directory name"),
        (["--device", "meta"], "a meta device"),
        (["--task", "no_such_module:make"], "cannot import"),
        (["--task", "Sorting"], "--task: invalid choice"),
    ],
)
def test_cli_errors_are_one_line_with_status_2(
    tmp_path, capfd, monkeypatch, extra, words
):
    monkeypatch.chdir(tmp_path)  # the default --out lands here, if anywhere
    argv = ["train", *CLI_TINY, "--steps", "2", *extra]
    try:
        status = main(argv)
    except SystemExit as stop:  # argparse's own errors
        status = stop.code
    out, err = capfd.readouterr()
    assert status == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err and words in err, err
    assert not (tmp_path / "metrics.json").exists()


def test_the_memory_estimate_counts_before_anything_is_built():
    config = TrainConfig(hidden_size=10**6, depth=10**6, progress=False)
    params, need = estimate_bytes(config, 2)
    assert params > 10**18 and need > params  # instantly, nothing allocated
    # and it is an upper estimate of the real count, within a small factor
    for model, depth in [("rhn", 3), ("dtrnn", 2), ("lstm", 1), ("gru", 1), ("rnn", 1)]:
        deep = {"depth": depth} if model in ("rhn", "dtrnn") else {}
        small = TrainConfig(model=model, hidden_size=16, num_layers=2, **deep)
        core = (
            rhn.build_model(model, 2, 16, depth=depth, num_layers=2)
            if depth > 1
            else (rhn.build_model(model, 2, 16, num_layers=2))
        )
        real = sum(p.numel() for p in core.parameters())
        estimate, _ = estimate_bytes(small, 2)
        assert real <= estimate <= 2 * real, (model, real, estimate)


def test_train_config_refuses_odd_values():
    with pytest.raises(
        ValueError, match="out must be a directory name or None, got ''"
    ):
        TrainConfig(out="")
    with pytest.raises(ValueError, match="out must be a directory name"):
        TrainConfig(out="   ")
    with pytest.raises(TypeError, match="out must be a directory path"):
        TrainConfig(out=3)
    with pytest.raises(
        ValueError, match="device must be auto, cpu, cuda, cuda:N or mps"
    ):
        TrainConfig(device="meta")
    with pytest.raises(ValueError, match="threads must be at most 4096"):
        TrainConfig(threads=2**63)
    assert TrainConfig(out=__import__("pathlib").Path("runs/x")).out == "runs/x"


def test_bench_threads_beyond_a_c_int(capfd):
    assert main(["bench", "--threads", str(2**64)]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "--threads must be at most" in err


# --- damaged results files name the file ----------------------------------------


def _sweep_file(tmp_path):
    from rhn.experiments import sweep

    base = TrainConfig(seq_len=5, hidden_size=4, steps=2, eval_every=2, eval_samples=8)
    base = __import__("dataclasses").replace(base, progress=False, device="cpu")
    out = tmp_path / "s.json"
    sweep(base, {}, [0], out=out)
    return out


def test_a_results_file_with_merge_conflict_markers(tmp_path, capfd):
    path = _sweep_file(tmp_path)
    text = path.read_text()
    path.write_text(f"<<<<<<< HEAD\n{text}=======\n{text}>>>>>>> theirs\n")
    with pytest.raises(ValueError, match="merge-conflict markers") as info:
        load_sweep(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    # resuming that sweep from the command line: one line, status 2
    argv = ["sweep", "--seq-len", "5", "--hidden-size", "4", "--steps", "2"]
    argv += ["--seeds", "0", "--no-progress", "--out", str(path), "--resume"]
    assert main(argv) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "merge-conflict" in err and str(path) in err


@pytest.mark.parametrize("damage", ["no-runs", "run-without-history", "empty", "list"])
def test_a_results_file_with_missing_parts(tmp_path, damage):
    path = _sweep_file(tmp_path)
    record = json.loads(path.read_text())
    if damage == "no-runs":
        del record["runs"]
    elif damage == "run-without-history":
        del record["runs"][0]["history"]
    text = {"empty": "", "list": "[1, 2]"}.get(damage, json.dumps(record))
    path.write_text(text)
    with pytest.raises(ValueError) as info:
        load_sweep(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message
    if damage == "run-without-history":
        assert "history" in message


@pytest.mark.parametrize("damage", ["empty", "truncated", "text", "missing-array"])
def test_a_damaged_chorales_file_names_the_file(tmp_path, damage):
    path = tmp_path / "chorales.npz"
    shipped = chorales._data_path().read_bytes()
    if damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated":
        path.write_bytes(shipped[: len(shipped) // 3])
    elif damage == "text":
        path.write_text("not a zip")
    else:
        data = chorales.data._read(None)
        del data["lengths"]
        np.savez(path, **data)
    with pytest.raises(ValueError) as info:
        chorales.load(path=path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(FileNotFoundError, match="no chorale file"):
        chorales.load(path=tmp_path / "missing.npz")


# --- odd shapes -----------------------------------------------------------------


def test_in_discs_refuses_centres_of_another_batch_shape():
    points = torch.zeros(2, 3)
    centres, radii = torch.zeros(3, 4), torch.ones(3, 4)  # another batch of 3
    with pytest.raises(ValueError, match=r"points \(2, 3\), centres \(3, 4\)"):
        analysis.in_discs(points, centres, radii)
    with pytest.raises(ValueError, match="same shape"):
        analysis.in_discs(torch.zeros(4), torch.zeros(4), torch.ones(3))
    assert analysis.in_discs(
        torch.zeros(2, 3), torch.zeros(2, 4), torch.ones(2, 4)
    ).all()


@pytest.mark.parametrize("name", ["rhn", "lstm"])
def test_gradflow_state_error_reports_the_shape_passed(name):
    model = rhn.build_model(name, 3, 4, **({"depth": 2} if name == "rhn" else {}))
    x = torch.randn(5, 3)  # unbatched (T, I)
    state = torch.zeros(1, 7)
    if name == "lstm":
        state = (state, torch.zeros(1, 4))
    label = "state[0]" if name == "lstm" else "state"
    with pytest.raises(ValueError) as info:
        gradflow.gradient_norms(model, x, state=state)
    message = str(info.value)
    assert f"{label} must have shape (N, H) = (1, 4)" in message and "(1, 7)" in message
    assert "(1, 1, 7)" not in message  # never a shape the caller did not pass


def test_resume_checkpoint_of_a_wrong_type_of_path_is_one_line(tmp_path):
    with pytest.raises(TypeError, match="overwrite must be a bool"):
        train(TrainConfig(steps=1, progress=False), overwrite="yes")
