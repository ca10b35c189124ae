"""Doctests in the package see ``torch`` and ``rhn`` like a reader's session."""

import pytest
import torch

import rhn


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace.update(torch=torch, rhn=rhn)
    torch.manual_seed(0)
