#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The GNU Radio Companion definitions (grc/*.block.yml) as a user sees them:
parameters in tabs (General, a detector tab, GPU), and a documentation tab
without repetition (GRC shows the YAML documentation and then the class
docstring of the block, so the docstring is a short summary that repeats no
sentence of the YAML)."""

import glob
import os
import re

import yaml
from gnuradio import gr_unittest, transient

GRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "grc")
# CUDA settings, in the GPU tab of every block that has them
GPU_PARAMS = {"backend", "device", "batch", "device_buffers"}


def blocks():
    for path in sorted(glob.glob(os.path.join(GRC, "transient_*.block.yml"))):
        with open(path) as f:
            yield os.path.basename(path), yaml.safe_load(f)


def classes(block):
    """The Python classes the block's make template can name."""
    m = re.match(r"\s*transient\.(\w+?)(\$\{\s*type\.fcn\s*\})?\(", block["templates"]["make"])
    if m is None:  # a Python block of a submodule (dispersed_pulse): not a bound class
        return []
    name = m.group(1)
    if m.group(2):
        return [name + p["option_attributes"]["fcn"][i]
                for p in block["parameters"] if p["id"] == "type"
                for i in range(len(p["options"]))]
    return [name]


def sentences(text):
    """Runs of 8 words of a text (whitespace and case folded)."""
    words = re.findall(r"[\w|^\"'.=+-]+", text.lower())
    return {" ".join(words[i:i + 8]) for i in range(len(words) - 7)}


class qa_grc_blocks(gr_unittest.TestCase):

    def test_000_tabs(self):
        for name, block in blocks():
            tabs = {p["id"]: p.get("category", "General") for p in block["parameters"]}
            for pid, tab in tabs.items():
                if pid in GPU_PARAMS:
                    self.assertEqual(tab, "GPU", "%s: %s" % (name, pid))
            # every tab but General holds settings a user may leave alone; the
            # main settings stay on the first tab
            self.assertIn("General", tabs.values(), name)
            self.assertLessEqual(len(set(tabs.values())), 4, name)

    def test_001_documentation_not_repeated(self):
        for name, block in blocks():
            doc = block["documentation"]
            for cls in classes(block):
                cdoc = getattr(transient, cls).__doc__ or ""
                self.assertLessEqual(len(cdoc.strip().splitlines()), 6, cls)
                shared = sentences(doc) & sentences(cdoc)
                self.assertFalse(shared, "%s: %s repeats %s" % (cls, name, sorted(shared)[:2]))
                # Python users still find everything in the constructor's docstring
                self.assertGreater(len(getattr(transient, cls).__init__.__doc__), 400, cls)


if __name__ == "__main__":
    gr_unittest.run(qa_grc_blocks)
