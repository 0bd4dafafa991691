"""GPU time of compute kernels with no layer, gpuav and the Khronos layer 1.4.309's GPU-AV.

Kernels: issue 17's ``indexed_fetches`` (1M invocations x 64 fetches from a runtime array of
storage buffers, by indices read from a uniform buffer; shader_time_app.py) and issue 14's
``ssbo_loops`` (1M invocations x 64 hashed loads from one plain storage buffer and stores to
another, each checked against the bound range; ssbo_loops_app.py), the default two;
``bda_loops`` (the same work through buffer-reference pointers, each access checked against
the live buffers' addresses; bda_loops_app.py) and ``bda_loops_store_after`` (its store after
the loop); and
``model_*``: variants of ``ssbo_loops`` with checks written by hand
(shaders/ssbo_loops_models.comp), to time what a check could cost.

Each configuration runs the kernel's app in fresh processes, round-robin; each cell is the
median over runs of the run's median dispatch (the first dispatch of a run, which pays the
pipeline's first use, is left out); the ratio to no layer is given both of the medians and
paired (each run against the no-layer run of its own round, median and range of those). The
result's checksum must be the same in every configuration. Not a test: timings depend on the
machine.

The Khronos layer 1.4.309 needs glibc 2.38; ``--khronos-root`` names a folder laid out as
``/work/shared/tools/newer-khronos.sh`` lays out ``$NK_ROOT`` (``layer/`` holds the manifest,
``root/`` Debian 13's libraries): the app then runs under Debian 13's dynamic loader, unless
``--khronos-native`` says the system's own glibc and libstdc++ are new enough.

    python -m benchmarks.bench_shader_time [--runs 3] [--dispatches 20]
        [--kernel ssbo_loops --kernel indexed_fetches] [--khronos-root $NK_ROOT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.layer_apps import (
    _LAYER_VARIABLES,
    KHRONOS,
    REPOSITORY,
    gpuav_environment,
    tree_layer_folder,
)
from gpuav.layer.native.build import layer_dir

BENCHMARKS = REPOSITORY / "benchmarks"
SHADERS = BENCHMARKS / "shaders"
LOOPS_APP = BENCHMARKS / "ssbo_loops_app.py"
ADDRESS_LOOPS_APP = BENCHMARKS / "bda_loops_app.py"


@dataclass(frozen=True)
class KernelSource:
    app: Path
    source: Path
    what: str
    defines: tuple[str, ...] = ()  # each a -D for glslangValidator


_MODELS = {
    "CHECKED": "both checks in the loop",
    "HOISTED": "the store's check before the loop",
    "VERSIONED": "one check of the mask's span, unchecked loop",
    "VERSIONED_QUIET": "VERSIONED, nothing reported on failure",
    "SUNK": "no check, the store after the loop",
    "ATOMIC_ELSEWHERE": "no check, an atomic on the result that never runs",
    "SELECTED": "no branch around an access, loads clamped, stores redirected",
    "SELECTED_QUIET": "SELECTED, nothing reported",
    "DEFERRED": "SELECTED, failures reported once after the loop",
    "ATOMIC_IN_LOOP": "no check, an atomic under a branch in the loop that never runs",
    "GUARDED_LOAD": "only the load checked in the loop",
    "GUARDED_STORE": "only the store checked in the loop",
    "GUARDED_QUIET": "both checked in the loop, nothing reported",
    "PLAIN": "no check (ssbo_loops)",
}
_HINTS = {"": "", "UNROLL": ", loops [[unroll]]", "DONT_UNROLL": ", loops [[dont_unroll]]"}
MODEL_SOURCE = SHADERS / "ssbo_loops_models.comp"
KERNELS = {
    "indexed_fetches": KernelSource(
        BENCHMARKS / "shader_time_app.py",
        SHADERS / "indexed_fetches.comp",
        "1M invocations x 64 indexed fetches",
    ),
    "ssbo_loops": KernelSource(
        LOOPS_APP, SHADERS / "ssbo_loops.comp", "1M invocations x 64 SSBO loads + stores"
    ),
    "bda_loops": KernelSource(
        ADDRESS_LOOPS_APP,
        SHADERS / "bda_loops.comp",
        "1M invocations x 64 loads + stores through buffer-reference pointers",
    ),
    "bda_loops_store_after": KernelSource(
        ADDRESS_LOOPS_APP,
        SHADERS / "bda_loops.comp",
        "bda_loops with the store after the loop (the loop walks one buffer)",
        ("STORE_AFTER_LOOP",),
    ),
    # Models of ssbo_loops checked by hand (shaders/ssbo_loops_models.comp), with a hint on
    # their loops or none: model_checked, model_checked_unroll, model_plain_dont_unroll...
    **{
        "_".join(filter(None, ["model", model.lower(), hint.lower()])): KernelSource(
            LOOPS_APP, MODEL_SOURCE, f"model: {what}{said}", tuple(filter(None, [model, hint]))
        )
        for model, what in _MODELS.items()
        for hint, said in _HINTS.items()
    },
}
DEFAULT_KERNELS = ["ssbo_loops", "indexed_fetches"]
WITHOUT_READ_ONLY = "benchmarks.without_read_only:instrument"
SILENT_RANGE_RECORDS = "benchmarks.silent_range_records:instrument"
GPU_ASSISTED = "VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT"
NO_POST_PROCESS = "VK_KHRONOS_VALIDATION_GPUAV_POST_PROCESS_DESCRIPTOR_INDEXING"
DEBIAN_LIBRARIES = "root/usr/lib/x86_64-linux-gnu"


@dataclass
class Configuration:
    environment: dict[str, str]
    prefix: list[str] = field(default_factory=list)  # runs the interpreter (a dynamic loader)
    # The Khronos layer sometimes aborts at exit after the app printed its figures.
    exit_may_fail: bool = False


def khronos_configuration(root: Path, *, native: bool, post_process: bool) -> Configuration:
    environment = {
        "VK_LAYER_PATH": str(root / "layer"),
        "VK_INSTANCE_LAYERS": KHRONOS,
        "VK_LAYER_ENABLES": GPU_ASSISTED,
    }
    if not post_process:
        environment[NO_POST_PROCESS] = "false"
    prefix: list[str] = []
    if not native:
        # --library-path replaces LD_LIBRARY_PATH, so the caller's folders (a driver's) follow.
        folders = [str(root / DEBIAN_LIBRARIES), "/usr/lib/x86_64-linux-gnu"]
        folders += [f for f in os.environ.get("LD_LIBRARY_PATH", "").split(":") if f]
        loader = root / DEBIAN_LIBRARIES / "ld-linux-x86-64.so.2"
        prefix = [str(loader), "--library-path", ":".join(folders)]
    return Configuration(environment, prefix, exit_may_fail=True)


def configurations(options: argparse.Namespace) -> dict[str, Configuration]:
    layer_folder = str(layer_dir())
    chosen = {
        "no layer": Configuration({}),
        "gpuav": Configuration(gpuav_environment(layer_folder)),
    }
    if options.without_read_only:
        without = gpuav_environment(layer_folder)
        without["GPUAV_INSTRUMENTER"] = WITHOUT_READ_ONLY
        chosen["gpuav, no NonWritable/Restrict"] = Configuration(without)
    if options.silent_range_records:
        silent = gpuav_environment(layer_folder)
        silent["GPUAV_INSTRUMENTER"] = SILENT_RANGE_RECORDS
        chosen["gpuav, range records emptied"] = Configuration(silent)
    if options.gpuav_tree is not None:
        tree = Path(options.gpuav_tree)
        other = gpuav_environment(tree_layer_folder(tree))
        other["PYTHONPATH"] = str(tree)
        chosen[f"gpuav of {tree.name}"] = Configuration(other)
    if options.khronos_root is not None:
        root, native = Path(options.khronos_root), options.khronos_native
        chosen["Khronos 1.4.309 GPU-AV"] = khronos_configuration(
            root, native=native, post_process=True
        )
        if options.khronos_no_post_process:
            chosen["Khronos 1.4.309, no post-process"] = khronos_configuration(
                root, native=native, post_process=False
            )
    if options.config:
        chosen = {name: chosen[name] for name in ["no layer", *options.config]}
    return chosen


@dataclass
class Run:
    """What one app process printed: each dispatch's GPU time, the result's checksum."""

    ms: list[float]
    checksum: int
    device: str
    exit: int


def one_run(app: Path, shader: Path, dispatches: int, configuration: Configuration) -> Run:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(_LAYER_VARIABLES)
    }
    environment["PYTHONPATH"] = str(REPOSITORY)
    environment.update(configuration.environment)
    command = [*configuration.prefix, sys.executable, str(app), str(shader)]
    done = subprocess.run(
        [*command, "--dispatches", str(dispatches)],
        env=environment, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines or (done.returncode != 0 and not configuration.exit_may_fail):
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr[-2000:]}")
    printed = json.loads(lines[-1])
    return Run(
        ms=[float(t) for t in printed["ms"]],
        checksum=int(printed["checksum"]),
        device=str(printed["device"]),
        exit=done.returncode,
    )


def compile_kernel(name: str, folder: Path) -> Path:
    kernel = KERNELS[name]
    shader = folder / f"{name}.spv"
    defines = [f"-D{define}" for define in kernel.defines]
    subprocess.run(
        ["glslangValidator", "-V", "--target-env", "vulkan1.2", *defines,
         "-o", str(shader), str(kernel.source)],
        check=True, capture_output=True,
    )  # fmt: skip
    return shader


@dataclass
class Cell:
    """One configuration's figures on one kernel, a value per run."""

    medians: list[float] = field(default_factory=list)  # ms, first dispatch left out
    dispatches: list[list[float]] = field(default_factory=list)
    checksums: list[int] = field(default_factory=list)
    exits: list[int] = field(default_factory=list)
    device: str = ""


def measure(
    kernel: str, shader: Path, configs: dict[str, Configuration], options: argparse.Namespace
) -> dict[str, Cell]:
    app = KERNELS[kernel].app
    found = {name: Cell() for name in configs}
    for _ in range(options.runs):
        for name, configuration in configs.items():
            result = one_run(app, shader, options.dispatches, configuration)
            cell = found[name]
            cell.medians.append(statistics.median(result.ms[1:]))
            cell.dispatches.append(result.ms)
            cell.checksums.append(result.checksum)
            cell.exits.append(result.exit)
            cell.device = result.device
    return found


def paired_ratios(cell: Cell, plain: Cell) -> list[float]:
    """Each run's median over the no-layer median of the same round: on a shared machine the
    rounds' load drifts, and a ratio within a round cancels it."""
    return [ours / theirs for ours, theirs in zip(cell.medians, plain.medians, strict=True)]


def print_kernel(kernel: str, found: dict[str, Cell]) -> None:
    device = found["no layer"].device
    print(f"\n{kernel}: {KERNELS[kernel].what}; {device}")
    header = f"{'median':>9s}   {'ratio':>7s}  {'paired':>7s} {'[range]':12s}  run medians (ms)"
    print(f"  {'':34s} {header}")
    plain = found["no layer"]
    plain_median = statistics.median(plain.medians)
    for name, cell in found.items():
        median = statistics.median(cell.medians)
        paired = paired_ratios(cell, plain)
        runs = " ".join(f"{v:.3f}" for v in cell.medians)
        aborted = sum(1 for e in cell.exits if e != 0)
        print(
            f"  {name:34s} {median:9.3f} ms  {median / plain_median:6.2f}x"
            f"  {statistics.median(paired):6.2f}x [{min(paired):.2f}..{max(paired):.2f}]"
            f"  {runs}  checksums: {sorted(set(cell.checksums))}"
            + (f"  (exited non-zero after printing: {aborted})" if aborted else "")
        )
    every = {c for cell in found.values() for c in cell.checksums}
    print("  checksums " + ("identical" if len(every) == 1 else f"DIFFER: {sorted(every)}"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dispatches", type=int, default=20)
    parser.add_argument("--kernel", action="append", choices=sorted(KERNELS))
    parser.add_argument("--khronos-root", help="$NK_ROOT of newer-khronos.sh (or its layout)")
    parser.add_argument(
        "--khronos-native",
        action="store_true",
        help="load the Khronos layer with the system's own glibc",
    )
    parser.add_argument(
        "--khronos-no-post-process",
        action="store_true",
        help="also run the Khronos layer with descriptor post-processing off",
    )
    parser.add_argument(
        "--without-read-only",
        action="store_true",
        help="also run gpuav without NonWritable/Restrict on its buffers",
    )
    parser.add_argument(
        "--silent-range-records",
        action="store_true",
        help="also run gpuav with its buffer-range record writer emptied",
    )
    parser.add_argument(
        "--config", action="append", help="run only these configurations (and no layer)"
    )
    parser.add_argument(
        "--gpuav-tree", help="also run gpuav from this checkout (before and after a change)"
    )
    parser.add_argument("--json", help="write every dispatch time to this file")
    parser.add_argument("--print", help="print the tables of a file --json wrote, run nothing")
    options = parser.parse_args()
    if options.print:
        for kernel, table in json.loads(Path(options.print).read_text()).items():
            print_kernel(kernel, {name: Cell(**cell) for name, cell in table.items()})
        return 0
    kernels = options.kernel or DEFAULT_KERNELS
    configs = configurations(options)
    everything: dict[str, dict[str, Cell]] = {}
    with tempfile.TemporaryDirectory(prefix="gpuav-bench-") as work:
        for kernel in kernels:
            found = measure(kernel, compile_kernel(kernel, Path(work)), configs, options)
            everything[kernel] = found
            print_kernel(kernel, found)
    if options.json:
        tables = {k: {n: asdict(c) for n, c in found.items()} for k, found in everything.items()}
        Path(options.json).write_text(json.dumps(tables, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
