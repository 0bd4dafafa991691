"""How the benchmarks time a piece of work and print a table of figures, in one place.

The machine is shared, so a figure is either the fastest run (the least disturbed one) or the
median of the runs; each benchmark says which it reports.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def wall_times(action: Callable[[], object], repeat: int) -> list[float]:
    """Wall time of each run of ``action``; its result is dropped outside the timed region."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
        del result
    return times


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    return statistics.median(wall_times(action, repeat))


def fastest(action: Callable[[], object], runs: int) -> float:
    return min(wall_times(action, runs))


def ratio(ours: float, theirs: float) -> str:
    """ours / theirs for a table cell ("n/a" where theirs measured as nothing)."""
    return f"{ours / theirs:.2f}" if theirs > 0 else "n/a"


def print_table(header: list[str], rows: list[list[str]]) -> None:
    """Left-aligned columns under ``header`` and a rule of dashes."""
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    for row in [header, ["-" * width for width in widths], *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
