"""Stopping a run cleanly: SIGINT, SIGTERM and SIGHUP between two steps, and the
caller's global state (threads, random generators) given back afterwards."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

__all__ = [
    "TrainingInterrupted",
    "caller_state_kept",
    "signals_deferred",
    "signals_held",
]


class TrainingInterrupted(KeyboardInterrupt):
    """:func:`train` was stopped by SIGINT, SIGTERM or SIGHUP between two steps.

    A ``KeyboardInterrupt``, so that code catching ``Exception`` lets it
    through as it would a plain Ctrl-C.

    Attributes:
        signum: the signal number (``signal.SIGINT``, ``signal.SIGTERM`` or
            ``signal.SIGHUP``, which a closed terminal or a dropped ssh sends).
        step: the last step completed.
        checkpoint: the checkpoint written on the way out (``None`` when the
            config has no ``out``, or when ``kept`` holds the run's state).
        kept: where the state of a run that ``overwrite`` started went when
            it stopped before its first checkpoint: beside the run it was to
            replace, which is put back (``None`` otherwise). It resumes into
            a folder of its own.
        exit_code: the conventional exit status, ``128 + signum`` (130 for
            SIGINT, 143 for SIGTERM, 129 for SIGHUP).
    """

    def __init__(
        self,
        signum: int,
        step: int,
        checkpoint: Path | None,
        why_none: str = "config.out is None",
        kept: Path | None = None,
    ) -> None:
        self.signum, self.step, self.checkpoint = signum, step, checkpoint
        self.kept = kept
        self.exit_code = 128 + signum
        if checkpoint is not None:
            where = f"checkpoint written to {checkpoint}"
        elif kept is not None:
            where = f"its state is kept in {kept} ({why_none})"
        else:
            where = f"no checkpoint written ({why_none})"
        name = signal.Signals(signum).name
        super().__init__(f"training interrupted by {name} after step {step}; {where}")


@contextlib.contextmanager
def caller_state_kept() -> Iterator[None]:
    """Restore torch's thread count and global random state on the way out."""
    threads = torch.get_num_threads()
    rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    try:
        yield
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        torch.set_rng_state(rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)


@contextlib.contextmanager
def signals_deferred() -> Iterator[list[int]]:
    """Turn SIGINT, SIGTERM and SIGHUP (where the system has it) into a note
    that the loop reads between steps.

    Stopping between two steps keeps the model, the optimiser and the data
    generator consistent, so the checkpoint written then resumes exactly. A
    second SIGINT raises ``KeyboardInterrupt`` at once, for a stuck step; a
    SIGINT after SIGTERMs or SIGHUPs only (a scheduler's, then a Ctrl-C) is
    noted like them, and the run reports the first signal received.
    Signal handlers can only be set in the main thread; elsewhere nothing
    changes.
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def note(signum: int, frame: Any) -> None:
        if signum == signal.SIGINT and signal.SIGINT in received:
            raise KeyboardInterrupt  # a second Ctrl-C: stop at once
        received.append(signum)

    with _stoppers_handled(note):
        yield received


@contextlib.contextmanager
def signals_held() -> Iterator[list[int]]:
    """Hold SIGINT, SIGTERM and SIGHUP off while a checkpoint is written on the
    way out: a second Ctrl-C pressed because the save seems slow must not cut
    the one write that keeps the run. Signals received meanwhile are noted
    in the list yielded, not acted on (the run is stopping anyway). Only in
    the main thread; elsewhere nothing changes."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    with _stoppers_handled(lambda signum, frame: received.append(signum)):
        yield received


@contextlib.contextmanager
def _stoppers_handled(handler: Any) -> Iterator[None]:
    """Give SIGINT, SIGTERM and SIGHUP (where the system has it) ``handler``,
    and their handlers back on the way out (main thread only)."""
    stoppers = [signal.SIGINT, signal.SIGTERM]
    if hasattr(signal, "SIGHUP"):  # not on Windows
        stoppers.append(signal.SIGHUP)
    previous = {sig: signal.getsignal(sig) for sig in stoppers}
    # a signal the user set to be ignored stays ignored: `nohup` ignores
    # SIGHUP so that closing the terminal does not stop the run
    previous = {s: h for s, h in previous.items() if h is not signal.SIG_IGN}
    for sig in previous:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, handler_before in previous.items():
            signal.signal(
                sig, signal.SIG_DFL if handler_before is None else handler_before
            )
