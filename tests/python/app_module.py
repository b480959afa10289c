#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A program of apps/ imported as a module from the source tree, so that a
test can call its run(argv, stdout, stderr) in process."""

import importlib.util
import os

APPS = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "apps"))


def load_app(filename):
    """apps/<filename> as a module (named after the file, with an _app suffix)."""
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(filename)[0] + "_app", os.path.join(APPS, filename))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
