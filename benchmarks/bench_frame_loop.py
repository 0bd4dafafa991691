"""Frame throughput of a render loop with 3 frames in flight, with no layer, gpuav and the
Khronos layer 1.4.309's GPU-AV, side by side in one run (issue 17, target 4).

The app (``frame_loop_app.c``, knowing nothing of gpuav) waits only for the fence of the frame
3 back, re-records that slot's command buffer (one pipeline, one set of 8 textures and a
storage buffer, ``--draws`` draws of a triangle covering the target, each fragment making two
texture fetches by a dynamic index and one storage-buffer read) and submits it; it reports the
frames per second over ``--frames`` frames after ``--warmup``, the median host time per frame
spent recording and submitting, and the median time waiting for the fence. A layer that waits
where the app does not, or costs more host time per frame than the GPU takes, shows here.

Each configuration runs in ``--runs`` fresh processes, round-robin; a cell is the median over
runs, and the ratio to no layer is given of the medians and paired (each run against the
no-layer run of its round). Every process must receive no error message and render the same
last frame (pixel hash). ``--size`` may be given several times (a table each). Not a test:
timings depend on the machine.

The Khronos layer is found as ``bench_shader_time`` finds it: ``--khronos-root`` names a folder
laid out as ``/work/shared/tools/newer-khronos.sh`` lays out ``$NK_ROOT``; without it, that
script is sourced (it downloads the layer once).

    python -m benchmarks.bench_frame_loop [--runs 5] [--frames 300] [--size 64x64]
        [--khronos-root $NK_ROOT] [--no-khronos] [--plain-shaders] [--gpuav-tree LABEL=TREE]
        [--fragment benchmarks/shaders/texture_array.frag] [--json figures.json]
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

from benchmarks.bench_shader_time import Configuration, khronos_configuration
from benchmarks.layer_apps import (
    _LAYER_VARIABLES,
    REPOSITORY,
    compile_shader,
    gpuav_environment,
    tree_layer_folder,
)
from gpuav.layer.native.build import layer_dir
from tests.apps_common.build import compile_c_program

BENCHMARKS = REPOSITORY / "benchmarks"
APP_SOURCE = BENCHMARKS / "frame_loop_app.c"
VERTEX_SHADER = BENCHMARKS / "shaders" / "frame_loop.vert"
FRAGMENT_SHADER = BENCHMARKS / "shaders" / "frame_loop.frag"
NEWER_KHRONOS = Path("/work/shared/tools/newer-khronos.sh")
KHRONOS = "Khronos 1.4.309 GPU-AV"


@dataclass
class Cell:
    """One configuration's figures at one size, a value per run."""

    fps: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    wait_ms: list[float] = field(default_factory=list)
    checksums: list[str] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)
    exits: list[int] = field(default_factory=list)
    device: str = ""


def newer_khronos_root() -> Path:
    """``$NK_ROOT`` of newer-khronos.sh on this machine (downloaded on first use)."""
    done = subprocess.run(
        ["bash", "-c", f"source '{NEWER_KHRONOS}' >/dev/null && echo \"$NK_ROOT\""],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return Path(done.stdout.strip())


def configurations(options: argparse.Namespace) -> dict[str, Configuration]:
    chosen = {
        "no layer": Configuration({}),
        "gpuav": Configuration(gpuav_environment(str(layer_dir()))),
    }
    if options.plain_shaders:
        # The layer's whole host path and per-draw binding, with the shaders as the app made
        # them: what is left of the gap is the instrumented shaders' GPU time.
        chosen["gpuav, shaders left plain"] = Configuration(
            gpuav_environment(str(layer_dir()), stand_in=True)
        )
    for named in options.gpuav_tree or []:
        label, tree = named.split("=", 1)
        # That tree's own layer binary: its Python refuses another tree's entry points.
        environment = gpuav_environment(tree_layer_folder(Path(tree).resolve()))
        environment["PYTHONPATH"] = str(Path(tree).resolve())
        chosen[label] = Configuration(environment)
    if not options.no_khronos:
        root = Path(options.khronos_root) if options.khronos_root else newer_khronos_root()
        chosen[KHRONOS] = khronos_configuration(
            root, native=options.khronos_native, post_process=True
        )
    return chosen


def one_run(argv: list[str], configuration: Configuration) -> dict[str, object]:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(_LAYER_VARIABLES)
    }
    environment["PYTHONPATH"] = str(REPOSITORY)
    environment.update(configuration.environment)
    command = [*configuration.prefix, *argv]
    done = subprocess.run(
        command, env=environment, capture_output=True, text=True, check=False, timeout=600
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr[-2000:]}")
    printed: dict[str, object] = json.loads(lines[-1])
    printed["exit"] = done.returncode
    if done.returncode != 0 and not configuration.exit_may_fail:
        print(f"  {command[0]} exited {done.returncode}: {done.stderr[-1000:]}", file=sys.stderr)
    return printed


def measure(argv: list[str], configs: dict[str, Configuration], runs: int) -> dict[str, Cell]:
    found = {name: Cell() for name in configs}
    for _ in range(runs):
        for name, configuration in configs.items():
            printed = one_run(argv, configuration)
            cell = found[name]
            cell.fps.append(float(str(printed["fps"])))
            cell.cpu_ms.append(float(str(printed["cpu_ms"])))
            cell.wait_ms.append(float(str(printed["wait_ms"])))
            cell.checksums.append(str(printed["checksum"]))
            cell.errors.append(int(str(printed["errors"])))
            cell.exits.append(int(str(printed["exit"])))
            cell.device = str(printed["device"])
    return found


def print_table(title: str, found: dict[str, Cell]) -> None:
    print(f"\n{title}; {found['no layer'].device}")
    print(
        f"  {'configuration':34s} {'fps':>8s}  {'ratio':>6s}  {'paired [range]':18s}"
        f" {'host ms':>8s} {'wait ms':>8s}  errors  run fps"
    )
    plain = found["no layer"]
    plain_fps = statistics.median(plain.fps)
    for name, cell in found.items():
        fps = statistics.median(cell.fps)
        paired = [ours / theirs for ours, theirs in zip(cell.fps, plain.fps, strict=True)]
        aborted = sum(1 for code in cell.exits if code != 0)
        print(
            f"  {name:34s} {fps:8.1f}  {fps / plain_fps:5.2f}x"
            f"  {statistics.median(paired):5.2f}x [{min(paired):.2f}..{max(paired):.2f}]"
            f" {statistics.median(cell.cpu_ms):8.3f} {statistics.median(cell.wait_ms):8.3f}"
            f"  {sum(cell.errors):6d}  {' '.join(f'{v:.1f}' for v in cell.fps)}"
            + (f"  (exited non-zero: {aborted})" if aborted else "")
        )
    every = {checksum for cell in found.values() for checksum in cell.checksums}
    print("  last frame " + ("identical" if len(every) == 1 else f"DIFFERS: {sorted(every)}"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument(
        "--fragment",
        default=str(FRAGMENT_SHADER),
        help="the fragment shader (shaders/texture_array.frag: 64 samples of the texture array)",
    )
    parser.add_argument("--size", action="append", help="WIDTHxHEIGHT (default 64x64)")
    parser.add_argument("--khronos-root", help="$NK_ROOT of newer-khronos.sh (or its layout)")
    parser.add_argument(
        "--khronos-native", action="store_true", help="load the Khronos layer with this glibc"
    )
    parser.add_argument("--no-khronos", action="store_true")
    parser.add_argument(
        "--plain-shaders",
        action="store_true",
        help="also gpuav with the test suite's stand-in pass (shaders left as they are)",
    )
    parser.add_argument(
        "--gpuav-tree",
        action="append",
        help="LABEL=TREE: also gpuav with its Python from another tree (a change to compare)",
    )
    parser.add_argument("--json", help="write every run's figures to this file")
    options = parser.parse_args()
    configs = configurations(options)
    everything: dict[str, dict[str, Cell]] = {}
    with tempfile.TemporaryDirectory(prefix="gpuav-frame-loop-") as work:
        folder = Path(work)
        app = compile_c_program(folder / "frame_loop_app", [APP_SOURCE])
        shaders = (VERTEX_SHADER, Path(options.fragment))
        spirv = [folder / f"{source.name}.spv" for source in shaders]
        for source, output in zip(shaders, spirv, strict=True):
            compile_shader(source, output)
        for size in options.size or ["64x64"]:
            width, height = size.split("x")
            argv = [str(app), *map(str, spirv), "--frames", str(options.frames),
                    "--warmup", str(options.warmup), "--draws", str(options.draws),
                    "--width", width, "--height", height]  # fmt: skip
            found = measure(argv, configs, options.runs)
            everything[size] = found
            title = (
                f"{size}, {Path(options.fragment).name}, {options.draws} draws a frame, "
                f"{options.frames} frames after {options.warmup}, {options.runs} runs"
            )
            print_table(title, found)
    if options.json:
        tables = {s: {n: asdict(c) for n, c in found.items()} for s, found in everything.items()}
        Path(options.json).write_text(json.dumps(tables, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
