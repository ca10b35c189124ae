"""Doctests in the package see ``torch`` and ``rhn`` like a reader's session.

A test run started in the background of a script inherits SIGINT ignored
(POSIX), and Python then leaves it ignored, in this process and in every
child: the tests of Ctrl-C need it delivered, as a terminal does.
"""

import signal

import pytest
import torch

import rhn

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _doctest_namespace(doctest_namespace):
    doctest_namespace.update(torch=torch, rhn=rhn)
    torch.manual_seed(0)
