"""What descriptor-state tracking (issue 8) costs, per draw and per submit.

Part 1, the engine alone (in process, no Vulkan): a state buffer in plain memory, N sets of
one PARTIALLY_BOUND, variable-count binding of A descriptors; times allocating them, a flush
where nothing changed, a flush after one descriptor changed, a vkCmdBindDescriptorSets and an
action's bound-sets copy.

Part 2, the app (tests/layer/apps/indexing_app.py, fresh processes, round-robin): 1 + extra
sets of A descriptors, every dispatch binding another one; median vkQueueSubmit + wait with
no change between submits and with one descriptor rewritten before each, under no layer,
gpuav with the stand-in instrumenter (every dispatch gets its block and bound-sets words, the
shader checks nothing: the layer's own cost), gpuav with the shipped pass (the shader also
reads the state) and the Khronos layer's GPU-AV. Not a test: timings depend on the machine.

    python -m benchmarks.bench_descriptor_state [--sets 64] [--array 4096] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from pathlib import Path

from benchmarks.layer_apps import (
    REPOSITORY,
    app_timings,
    compile_shader,
    gpuav_environment,
    khronos_environment,
)
from gpuav.layer.calls import StateBufferHandles
from gpuav.layer.descriptor_sets import NO_STATE_WORDS, DescriptorTracker
from gpuav.layer.native.build import layer_dir
from gpuav.layer.set_layouts import (
    BINDING_PARTIALLY_BOUND,
    BINDING_VARIABLE_DESCRIPTOR_COUNT,
    LayoutBinding,
)
from gpuav.layer.state_buffer import StateBuffer

APP = REPOSITORY / "tests" / "layer" / "apps" / "indexing_app.py"
SHADER = REPOSITORY / "tests" / "layer" / "shaders" / "indexing.comp"


def best_us(function: Callable[[], object], repeat: int = 2000) -> float:
    """Fastest mean of five batches, in microseconds per call."""
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeat):
            function()
        timings.append((time.perf_counter() - start) / repeat * 1e6)
    return min(timings)


def engine_part(sets: int, size: int) -> None:
    capacity = sets * (size + 8) + 1024
    words = memoryview(array("I", bytes(4 * capacity)))
    tracker = DescriptorTracker(
        StateBuffer(StateBufferHandles(1, 2, 4 * capacity, words), capacity)
    )
    flags = BINDING_PARTIALLY_BOUND | BINDING_VARIABLE_DESCRIPTOR_COUNT
    tracker.create_layout(1, [LayoutBinding(0, 7, 1), LayoutBinding(1, 7, size, flags)])
    start = time.perf_counter()
    handles = list(range(100, 100 + sets))
    tracker.allocate_sets(9, [1] * sets, handles, [size] * sets)
    allocate_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    first = tracker.state.flush()
    first_flush_ms = (time.perf_counter() - start) * 1e3
    for handle in handles:
        tracker.write(handle, 1, 0, size)
    tracker.state.flush()
    clean_us = best_us(tracker.state.flush)
    counter = iter(range(10**9))

    def one_change() -> None:
        tracker.write(handles[next(counter) % sets], 1, 17, 1)
        tracker.state.flush()

    change_us = best_us(one_change)
    bound = array("I", NO_STATE_WORDS)
    target = memoryview(array("I", bytes(4 * 64)))

    def bind_and_action() -> None:
        words_copy = array("I", bound)
        words_copy[0] = tracker.region_of(handles[0])
        target[0:32] = words_copy

    action_us = best_us(bind_and_action)
    print(f"engine: {sets} sets x {size} descriptors ({first} state words)")
    print(f"  allocate all sets            {allocate_ms:9.2f} ms")
    print(f"  first flush (every word)     {first_flush_ms:9.2f} ms")
    print(f"  submit, nothing changed      {clean_us:9.2f} us")
    print(f"  submit, one descriptor new   {change_us:9.2f} us (write tracked + flush)")
    print(f"  bind + action words          {action_us:9.2f} us")


def configurations(layer_folder: str) -> dict[str, dict[str, str]]:
    return {
        "no layers": {},
        "gpuav, stand-in pass (layer cost only)": gpuav_environment(layer_folder, stand_in=True),
        "gpuav, shipped pass (state checks)": gpuav_environment(layer_folder),
        "Khronos validation, GPU-AV on": khronos_environment(gpu_assisted=True),
    }


def run_app(
    shader: Path, extra: dict[str, str], sets: int, size: int, dispatches: int, change: bool
) -> dict[str, float]:
    access = ",".join(str(index % 8) for index in range(dispatches))
    arguments = [
        str(APP), "--shader", str(shader), "--layout-count", str(size),
        "--variable-count", str(size), "--write", "0,1,2,3,4,5,6,7", "--access", access,
        "--extra-sets", str(sets - 1), "--submits", "20",
    ]  # fmt: skip
    if change:
        arguments.append("--change-one")
    timings = app_timings(arguments, extra)
    return {
        "record_us": timings["record_per_dispatch_us"],
        "submit_ms": statistics.median(timings["submit_all_ms"][1:]),
    }


def app_part(sets: int, size: int, dispatches: int, runs: int) -> None:
    configs = configurations(str(layer_dir()))
    with tempfile.TemporaryDirectory() as scratch:
        shader = Path(scratch) / "indexing.spv"
        compile_shader(SHADER, shader)
        samples: dict[tuple[str, bool], list[dict[str, float]]] = {}
        for _ in range(runs):
            for name, extra in configs.items():
                for change in (False, True):
                    sample = run_app(shader, extra, sets, size, dispatches, change)
                    samples.setdefault((name, change), []).append(sample)
    print(f"\napp: {sets} sets x {size} descriptors, {dispatches} dispatches (a bind each)")
    header = f"{'configuration':<38} {'record us':>9} {'submit ms':>9} {'1 change ms':>11}"
    print(header)
    print("-" * len(header))
    for name in configs:
        still = samples[(name, False)]
        changed = samples[(name, True)]
        print(
            f"{name:<38} {statistics.median(s['record_us'] for s in still):>9.1f} "
            f"{statistics.median(s['submit_ms'] for s in still):>9.2f} "
            f"{statistics.median(s['submit_ms'] for s in changed):>11.2f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=64)
    parser.add_argument("--array", type=int, default=4096)
    parser.add_argument("--dispatches", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engine-only", action="store_true")
    options = parser.parse_args()
    engine_part(options.sets, options.array)
    if not options.engine_only:
        app_part(options.sets, options.array, options.dispatches, options.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
