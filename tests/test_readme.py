"""The README's Python examples run, and its training loop learns."""

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
    keep = (1 - torch.sigmoid(torch.tensor(model.transform_bias))) ** 6
    torch.testing.assert_close(keep, 1 - torch.sigmoid(torch.tensor(-3.0)))


def test_readme_own_data_section_trains_and_reloads(tmp_path, monkeypatch):
    """The section "Your own data": tensors to a trained, reloaded model."""
    (block,) = [b for b in python_blocks() if "tensor_task" in b]
    monkeypatch.chdir(tmp_path)  # it writes runs/sum5
    namespace: dict = {}
    exec(compile(block, str(README), "exec"), namespace)
    result, net = namespace["result"], namespace["net"]
    assert result.metrics["test_loss"] < result.metrics["baseline"]
    assert not net.training
    assert namespace["prediction"].shape == (3,)
    with torch.no_grad():
        x = namespace["inputs"][:, :3]
        torch.testing.assert_close(net(x), result.model(x))
