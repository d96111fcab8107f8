# SPDX-License-Identifier: GPL-2.0
"""The rows a guest script of bench/ prints: key=value words on a line,
one row a line; lines without a kind= key are not rows."""


def rows_of(path):
    """The rows of file path, as dicts, in order."""
    out = []
    for line in open(path):
        r = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        if r.get("kind"):
            out.append(r)
    return out
