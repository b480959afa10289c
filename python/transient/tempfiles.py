#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Temporary files that never outlive an interrupted program.

A temporary file made with ``tempfile.mkstemp`` and removed in a ``finally``
leaks when Ctrl-C, SIGTERM or SIGHUP lands between the file's creation and
the ``try`` that owns it: the handler raises KeyboardInterrupt where no
clean-up runs. :func:`temporary` creates the file with those signals
blocked and unblocks them only inside the block that removes it, so a signal
is delivered where its clean-up already holds the path.
"""

import contextlib
import os
import signal
import tempfile
import threading

_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP")
                 if hasattr(signal, n))


def _block():
    """Blocks the interrupting signals in this thread; returns the old mask
    (None where signal masks do not exist)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)


@contextlib.contextmanager
def temporary(folder=None, prefix="tmp", suffix="", keep=False):
    """Yields the path of a new empty file in folder (None: $TMPDIR), closed,
    and removes it when the block ends, unless the block moved it away
    (os.replace onto the final name); with keep, only when the block raises
    (the caller owns the file after a block that ends normally)."""
    # Python runs signal handlers in the main thread only; another thread's
    # mask would not keep the handler from raising there.
    old = _block() if threading.current_thread() is threading.main_thread() else None
    path = None
    kept = False
    try:
        fd, path = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
        os.close(fd)
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            old = None
        yield path
        kept = keep
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
        if path is not None and not kept:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
