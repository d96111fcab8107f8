# SPDX-License-Identifier: GPL-2.0
"""A table cell of the bench reports: the median over the rounds, with the
spread (lowest and highest) beside it; a figure a round did not give is
NaN and left out."""
import math
import statistics


def num(v):
    """v as a number, NaN if it is missing or not one."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def cell(v, f="%.2f"):
    """'median [min–max]' of the numbers in v, '–' if there are none."""
    v = [x for x in v if not math.isnan(x)]
    if not v:
        return "–"
    return (f + " [" + f + "–" + f + "]") % (statistics.median(v), min(v), max(v))


def med(v):
    """The median of the numbers in v, NaN if there are none."""
    v = [x for x in v if not math.isnan(x)]
    return statistics.median(v) if v else math.nan
