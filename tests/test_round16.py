"""Session 44's outside reads: what a student and a hostile round found.

Student read 16: batch-first data given without ``batch_first=True`` got a
correct but unhelpful error (the expected shape only); the message now says
which flag the shapes point to.
"""

import pytest
import torch

from rhn.owntasks import tensor_task


@pytest.mark.parametrize(
    "batch_first, x_shape, y_shape, flag",
    [
        (False, (100, 40, 1), (100,), "pass batch_first=True"),
        (False, (100, 40, 1), (100, 3), "pass batch_first=True"),
        (True, (40, 100, 1), (100,), "pass batch_first=False"),
    ],
)
def test_targets_that_fit_the_other_layout_name_the_flag(
    batch_first, x_shape, y_shape, flag
):
    x, y = torch.randn(*x_shape), torch.randn(*y_shape)
    with pytest.raises(ValueError, match=flag):
        tensor_task(x, y, batch_first=batch_first)


def test_targets_that_fit_no_layout_get_no_hint():
    with pytest.raises(ValueError) as caught:
        tensor_task(torch.randn(100, 40, 1), torch.randn(90))
    assert "batch_first" not in str(caught.value)
