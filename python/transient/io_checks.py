#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Checks of the files transient-detect reads and writes, made before a
flowgraph starts, and the guards that keep a run from hanging, from
clobbering a file or from leaving temporary files behind
(share/doc/gr-transient/reliability.md).

Inputs: :func:`input_file` accepts only a readable regular file (a directory
named like a recording, a FIFO or a device is refused with a message naming
it); :func:`channels` bounds a header's channel count. :class:`StreamWatch`
is the watchdog of a running flowgraph: it stops the run when the data file
shrinks below what is still to be read, disappears, or when no sample has
moved for ``stall_s`` seconds.

Outputs: :func:`output_path` checks an output before the run (its folder
exists and is writable; a directory is refused; a symlink is followed to its
target); :func:`write_output` writes regular files through a temporary file
and a rename, but device nodes and FIFOs in place, so that nothing is
replaced. :func:`merge_meta` decides how existing SigMF metadata is kept.

Signals: :func:`exit_on_signals` turns SIGTERM and SIGHUP into
:class:`Terminated` (a KeyboardInterrupt), so that the clean-up that runs on
Ctrl-C (temporary files of the sigrok reader and of the writers) runs too.

Ceilings (documented in share/doc/gr-transient/reliability.md): MAX_CHANNELS,
MAX_LEVEL_SAMPLES, MAX_HIST_BINS, MAX_EXTRACT_BYTES.
"""

import os
import signal
import stat
import tempfile
import time

try:  # inside the package
    from . import sigmf
except ImportError:  # imported by file path
    import sigmf

__all__ = [
    "MAX_CHANNELS", "MAX_LEVEL_SAMPLES", "MAX_HIST_BINS", "MAX_EXTRACT_BYTES", "InputError",
    "OutputError", "Terminated", "input_file", "channels", "extract_budget", "StreamWatch",
    "output_path", "write_output", "merge_meta", "exit_on_signals", "note", "fail"
]

# Channels of one multi-channel recording (SigMF, SIGPROC): the GNU Radio
# buffers hold whole vectors, so the count sizes every buffer of the run.
MAX_CHANNELS = 16384
# Samples of one edges level estimate (one float32 buffer of this many).
MAX_LEVEL_SAMPLES = 1 << 24
# Bins of one edges level histogram.
MAX_HIST_BINS = 1 << 16
# Bytes a sigrok session may expand to in its temporary float32 file, unless
# TRANSIENT_MAX_EXTRACT_BYTES says otherwise; also never more than the free
# space of the temporary folder.
MAX_EXTRACT_BYTES = 1 << 34


class InputError(ValueError):
    """An input that cannot be read as asked (the message names the file)."""


class OutputError(ValueError):
    """An output that cannot be written safely (the message names the file)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C; `status` is 128 + the signal."""

    def __init__(self, signum):
        KeyboardInterrupt.__init__(self, "signal %d" % signum)
        self.status = 128 + signum


def _kind(mode):
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def input_file(path, what="recording"):
    """Size in bytes of path, a readable regular file; InputError otherwise
    (missing, a directory, a FIFO or device, unreadable)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError("%s: no such file" % path)
    except OSError as e:
        raise InputError("%s: %s" % (path, e.strerror or e))
    if not stat.S_ISREG(st.st_mode):
        raise InputError("%s: is %s, not a %s file" % (path, _kind(st.st_mode), what))
    try:
        with open(path, "rb"):
            pass
    except OSError as e:
        raise InputError("%s: cannot be read: %s" % (path, e.strerror or e))
    return st.st_size


def channels(path, n, frame_bytes, payload):
    """Check a header's channel count n against MAX_CHANNELS and the bytes of
    samples the file holds (at least one sample of all channels)."""
    if n > MAX_CHANNELS:
        raise InputError("%s: %d channels; at most %d are supported" % (path, n, MAX_CHANNELS))
    if payload < frame_bytes:
        raise InputError("%s: %d bytes of samples, less than one sample of %d channels "
                         "(%d bytes)" % (path, payload, n, frame_bytes))


def extract_budget(path, need, folder=None):
    """Check that a sigrok extraction of `need` bytes fits the ceiling and the
    free space of the temporary folder before anything is written."""
    limit = int(os.environ.get("TRANSIENT_MAX_EXTRACT_BYTES", MAX_EXTRACT_BYTES))
    if need > limit:
        raise InputError("%s: the channel expands to %d bytes, more than the %d allowed "
                         "(TRANSIENT_MAX_EXTRACT_BYTES)" % (path, need, limit))
    folder = folder or tempfile.gettempdir()
    try:
        free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    except OSError:
        return
    if need > free:
        raise InputError("%s: the channel expands to %d bytes, but %s has %d free (TMPDIR)" %
                         (path, need, folder, free))


class StreamWatch(object):
    """Watchdog of a flowgraph reading data_path up to byte `end`.

    check(done) returns None while all is well, else the one-line reason to
    stop: the file was truncated, removed or replaced while being read, or
    `done` (samples through the detector) has not moved for stall_s seconds
    before reaching `total` (after it, the detector may still be finishing).
    """

    def __init__(self, data_path, end, total, stall_s=60.0, clock=time.monotonic):
        self.path, self.end, self.total = data_path, end, total
        self.stall_s, self.clock = stall_s, clock
        self.last, self.t_last = -1, clock()

    def check(self, done):
        try:
            st = os.stat(self.path)
        except OSError as e:
            return "%s: cannot be read any more (%s)" % (self.path, e.strerror or e)
        if not stat.S_ISREG(st.st_mode):
            return "%s: replaced by %s while being read" % (self.path, _kind(st.st_mode))
        if st.st_size < self.end:
            return ("%s: truncated while being read (%d bytes, %d needed)" %
                    (self.path, st.st_size, self.end))
        now = self.clock()
        if done != self.last:
            self.last, self.t_last = done, now
        elif done < self.total and now - self.t_last > self.stall_s:
            return ("%s: no sample moved for %.0f s after %d samples; stopped (a read "
                    "error of the file source?)" % (self.path, self.stall_s, done))
        return None


def output_path(path, what="-o"):
    """Check an output before the run. Returns the path to write: path
    itself, or the target of a symlink (followed, never replaced). OutputError
    when it is a directory, its folder is missing or not writable, or an
    existing special file cannot be opened for writing."""
    if path == "-":
        return path
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise OutputError("%s %s: %s" % (what, path, e.strerror or e))
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError("%s %s: is a directory" % (what, path))
    if st is not None and not stat.S_ISREG(st.st_mode):
        if not os.access(target, os.W_OK):
            raise OutputError("%s %s: %s that is not writable" % (what, path,
                                                                   _kind(st.st_mode)))
        return target
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise OutputError("%s: folder of %s does not exist" % (what, path))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError("%s: folder %s of %s is not writable" % (what, folder, path))
    return target


def write_output(path, data, mode=0o644):
    """Write bytes to an output checked by output_path: a device node or FIFO
    in place; a regular file through a temporary file in its folder and a
    rename (readers see the old file or the whole new one); a symlink's
    target, the link kept."""
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        special = not stat.S_ISREG(os.stat(target).st_mode)
    except FileNotFoundError:
        special = False
    if special:
        with open(target, "wb") as f:
            f.write(data)
        return
    sigmf.atomic_write(target, data, mode)


def merge_meta(meta_path, load, same_recording):
    """Existing SigMF metadata at meta_path: None when there is none, its
    document when same_recording(doc) says it describes the recording being
    annotated (the new annotations are then added to it), else OutputError
    (it is never overwritten). load: the SigMF reader (ValueError on bad
    metadata)."""
    if not os.path.lexists(meta_path):
        return None
    try:
        doc = load(meta_path)
    except (ValueError, OSError) as e:
        raise OutputError("%s exists and is not SigMF metadata this tool can add to (%s); "
                          "remove it or choose another --sigmf-annotations file" %
                          (meta_path, str(e).splitlines()[0]))
    if not same_recording(doc):
        raise OutputError("%s exists and describes another recording; remove it or choose "
                          "another --sigmf-annotations file" % meta_path)
    return doc


def exit_on_signals(signals=("SIGTERM", "SIGHUP")):
    """Raise Terminated in the main thread on SIGTERM and SIGHUP."""

    def handler(signum, frame):
        raise Terminated(signum)

    for name in signals:
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), handler)


def note(stream, prog, text):
    """One warning line on stream."""
    stream.write("%s: warning: %s\n" % (prog, text))
    if hasattr(stream, "flush"):
        stream.flush()


def fail(exc, prog, stderr, usage=()):
    """Report what ended a program's run: one line on stderr and the exit
    status, 2 for a usage or input error (InputError, OutputError, the
    classes in `usage`), 128 + the signal (130 for Ctrl-C) on an interrupt,
    1 for anything else."""
    if isinstance(exc, KeyboardInterrupt):
        stderr.write("%s: interrupted; nothing written\n" % prog)
        return getattr(exc, "status", 130)
    stderr.write("%s: error: %s\n" % (prog, exc))
    return 2 if isinstance(exc, (InputError, OutputError) + tuple(usage)) else 1


def emit(path, data, stdout, write=None):
    """Write the bytes data to path (through write, write_output by default),
    or to stdout for None or '-'."""
    if path in (None, "-"):
        out = getattr(stdout, "buffer", None)
        if out is not None:
            out.write(data)
            out.flush()
        else:
            stdout.write(data.decode("utf-8"))
    else:
        (write or write_output)(path, data)
