"""Toy tasks: shapes, determinism, the documented structure, and the baselines."""

import math
import re

import pytest
import torch

from rhn import tasks


def test_adding_shapes_and_structure():
    x, y = tasks.adding_problem(64, 30, seed=3)
    assert x.shape == (30, 64, 2) and y.shape == (64,)
    assert x.dtype == y.dtype == torch.float32
    values, markers = x[..., 0], x[..., 1]
    assert ((values >= 0) & (values <= 1)).all()
    # exactly two markers per sequence, one in each half
    assert (markers.sum(0) == 2).all()
    assert (markers[:15].sum(0) == 1).all() and (markers[15:].sum(0) == 1).all()
    torch.testing.assert_close((values * markers).sum(0), y)


def test_adding_marker_positions_cover_each_half():
    x, _ = tasks.adding_problem(4000, 8, seed=0)
    positions = x[..., 1].nonzero()[:, 0]
    assert set(positions.tolist()) == set(range(8))


def test_adding_baseline_is_the_mse_of_predicting_one():
    assert tasks.adding_baseline() == pytest.approx(1 / 6)
    _, y = tasks.adding_problem(200_000, 4, seed=1, dtype=torch.float64)
    mse = ((y - 1.0) ** 2).mean().item()
    assert mse == pytest.approx(1 / 6, abs=3e-3)
    # no other constant does better: the mean of the targets is 1
    assert y.mean().item() == pytest.approx(1.0, abs=3e-3)


def test_adding_first_within_restricts_the_first_marker_only():
    x, y = tasks.adding_problem(3000, 100, first_within=10, seed=2, dtype=torch.float64)
    marks = x[..., 1].T.nonzero()[:, 1].reshape(-1, 2)  # (B, 2) steps
    assert set(marks[:, 0].tolist()) == set(range(10))
    assert marks[:, 1].min() >= 50 and marks[:, 1].max() == 99
    assert torch.equal((x[..., 0] * x[..., 1]).sum(0), y)
    # the whole first half is the default, draw for draw
    for got, want in zip(
        tasks.adding_problem(64, 30, first_within=15, seed=4),
        tasks.adding_problem(64, 30, seed=4),
        strict=True,
    ):
        assert torch.equal(got, want)


def test_marked_recall_is_the_adding_problem_without_its_late_marker():
    added, _ = tasks.adding_problem(500, 40, first_within=7, seed=3)
    x, y = tasks.marked_recall(500, 40, within=7, seed=3)
    assert torch.equal(x[..., 0], added[..., 0])  # the same values
    first = added[..., 1].T.nonzero()[:, 1].reshape(-1, 2)[:, 0]
    assert torch.equal(x[..., 1].T.nonzero()[:, 1], first)  # one marker, the first
    assert torch.equal(x[first, torch.arange(500), 0], y)


def test_marked_recall_baseline_is_the_mse_of_predicting_one_half():
    assert tasks.marked_recall_baseline() == 1 / 12
    _, y = tasks.marked_recall(400_000, 20, seed=5, dtype=torch.float64)
    mse = ((y - 0.5) ** 2).mean().item()
    # the standard error of the mean of (u - 1/2)^2 is about 1.1e-4 here
    assert abs(mse - 1 / 12) < 5e-4
    assert abs(y.mean().item() - 0.5) < 3e-3  # no constant does better


@pytest.mark.parametrize(
    "call, words",
    [
        (
            lambda: tasks.adding_problem(4, 10, first_within=6),
            ["first_within", "5", "6"],
        ),
        (lambda: tasks.adding_problem(4, 10, first_within=0), ["first_within", ">= 1"]),
        (lambda: tasks.marked_recall(4, 10, within=6), ["within", "5", "6"]),
        (lambda: tasks.marked_recall(4, 10, within=2.5), ["within", "int"]),
    ],
)
def test_marker_windows_are_checked(call, words):
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    assert all(word in str(info.value) for word in words), str(info.value)


def test_the_foothold_study_builds_both_tasks():
    from rhn.studies import foothold

    adding, recall = foothold.task("adding"), foothold.task("recall")
    assert (adding.baseline(100), recall.baseline(100)) == (1 / 6, 1 / 12)
    x_a, _ = adding.generate(50, 100, seed=1)
    x_r, _ = recall.generate(50, 100, seed=1)
    assert torch.equal(x_a[..., 0], x_r[..., 0])
    assert x_a[..., 1].sum().item() == 100 and x_r[..., 1].sum().item() == 50
    with pytest.raises(ValueError, match="task must be 'adding' or 'recall'"):
        foothold.task("copy")


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: tasks.adding_problem(8, 20, **kw),
        lambda **kw: tasks.copy_memory(8, 5, **kw),
        lambda **kw: tasks.temporal_order(8, 30, **kw),
    ],
)
def test_seeded_and_deterministic(make):
    rng_before = torch.random.get_rng_state()
    a = make(seed=7)
    b = make(seed=7)
    c = make(seed=8)
    # generating data does not touch the global random number generator
    assert torch.equal(rng_before, torch.random.get_rng_state())
    for u, v in zip(a, b, strict=True):
        assert torch.equal(u, v)
    assert not all(torch.equal(u, v) for u, v in zip(a, c, strict=True))
    # a generator gives the same data as a seed, and advances
    g = torch.Generator().manual_seed(7)
    for u, v in zip(a, make(generator=g), strict=True):
        assert torch.equal(u, v)
    assert not torch.equal(a[0], make(generator=g)[0])


def test_dtype_and_device():
    x, y = tasks.adding_problem(2, 5, dtype=torch.float64, device="cpu")
    assert x.dtype == y.dtype == torch.float64
    x, y = tasks.copy_memory(2, 5, dtype=torch.float64)
    assert x.dtype == torch.float64 and y.dtype == torch.long


def test_copy_memory_layout():
    T = 7
    x, y = tasks.copy_memory(16, T, seed=0)
    assert x.shape == (T + 20, 16, 10) and y.shape == (T + 20, 16)
    codes = x.argmax(-1)  # (T + 20, B)
    assert (x.sum(-1) == 1).all()  # one-hot
    symbols = codes[:10]
    assert ((symbols >= 1) & (symbols <= 8)).all()
    assert (codes[10 : 10 + T - 1] == 0).all()
    assert (codes[10 + T - 1] == 9).all()  # the delimiter
    assert (codes[10 + T :] == 0).all()
    assert (y[: T + 10] == 0).all()
    assert torch.equal(y[T + 10 :], symbols)


def test_copy_baseline():
    T = 100
    assert tasks.copy_baseline(T) == pytest.approx(10 * math.log(8) / (T + 20))
    # the memoryless strategy's cross-entropy, computed from its predictions
    _, y = tasks.copy_memory(32, T, seed=0)
    logits = torch.full((T + 20, 32, 9), -1e9)
    logits[: T + 10, :, 0] = 0.0  # blank, for sure
    logits[T + 10 :, :, 1:] = 0.0  # uniform over the 8 symbols
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, 9), y.reshape(-1))
    assert ce.item() == pytest.approx(tasks.copy_baseline(T), rel=1e-6)


def test_temporal_order_layout():
    x, y = tasks.temporal_order(500, 100, seed=0)
    assert x.shape == (100, 500, 8) and y.shape == (500,)
    codes = x.argmax(-1)
    assert (codes[0] == 4).all() and (codes[-1] == 5).all()
    relevant = codes >= 6  # X or Y
    assert (relevant.sum(0) == 2).all()
    steps = relevant.nonzero()[:, 0]
    assert set(steps.tolist()) <= set(range(10, 21)) | set(range(50, 61))
    assert (relevant[10:21].sum(0) == 1).all() and (relevant[50:61].sum(0) == 1).all()
    order = relevant.T.nonzero()  # sorted by sequence, then time
    seq_codes = codes.T[order[:, 0], order[:, 1]].view(500, 2) - 6
    assert torch.equal(y, 2 * seq_codes[:, 0] + seq_codes[:, 1])
    assert set(y.tolist()) == {0, 1, 2, 3}
    assert tasks.temporal_order_baseline() == pytest.approx(math.log(4))


def test_registry():
    for name, task in tasks.TASKS.items():
        assert tasks.get_task(name) is task and task.name == name
        seq_len = task.defaults.get("seq_len", 100)  # chorales: whole pieces
        x, y = task.generate(3, seq_len, seed=0)
        assert x.shape[1:] == (3, task.input_size)
        if task.loss == "frame_nll":  # one target frame per step
            assert y.shape == (x.shape[0], 3, task.output_size)
        else:
            assert y.shape == ((3,) if task.readout == "last" else (x.shape[0], 3))
        assert task.baseline(seq_len) > 0
        if task.loss == "cross_entropy":
            assert 0 <= int(y.min()) and int(y.max()) < task.output_size
    with pytest.raises(TypeError):
        tasks.TASKS["adding"].defaults["seq_len"] = 5  # read-only


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: tasks.adding_problem(0, 10), ValueError, ["num_samples", "0"]),
        (lambda: tasks.adding_problem(4, 1), ValueError, ["seq_len", ">= 2", "1"]),
        (lambda: tasks.adding_problem(4, 10.0), TypeError, ["seq_len", "float"]),
        (lambda: tasks.adding_problem(4, 10, seed=-1), ValueError, ["seed", "-1"]),
        (lambda: tasks.adding_problem(4, 10, seed="a"), TypeError, ["seed", "str"]),
        (
            lambda: tasks.adding_problem(4, 10, dtype=torch.long),
            TypeError,
            ["dtype", "floating"],
        ),
        (lambda: tasks.adding_problem(4, 10, generator=3), TypeError, ["generator"]),
        (lambda: tasks.copy_memory(4, 0), ValueError, ["seq_len", "0"]),
        (
            lambda: tasks.copy_memory(4, 5, alphabet_size=1),
            ValueError,
            ["alphabet_size", ">= 2"],
        ),
        (lambda: tasks.temporal_order(4, 9), ValueError, ["seq_len", ">= 10", "9"]),
        (
            lambda: tasks.get_task("addition"),
            ValueError,
            ["task", "adding", "addition"],
        ),
    ],
)
def test_bad_arguments(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)


def test_tasks_docstring_names_every_task_and_hides_the_dict_repr():
    # the API page shows this docstring instead of the dict's long repr
    import ast
    import inspect

    module = ast.parse(inspect.getsource(tasks))
    body = module.body
    index = next(
        i
        for i, node in enumerate(body)
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "TASKS"
    )
    doc = body[index + 1].value.value
    assert ":meta hide-value:" in doc
    named = set(re.findall(r'``"(\w+)"``', doc))
    assert named == set(tasks.TASKS)
