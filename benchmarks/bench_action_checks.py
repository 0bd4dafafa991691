"""What the indirect and vertex-fetch checks (``gpuav.layer.action_checks``) cost per action:
``tests/layer/apps/indirect_app.c`` records one command buffer of N draws of one kind, with no
layer, with gpuav and with the Khronos layer 1.4.309's GPU-AV (which validates indirect and
index buffers too), and re-records and submits it F times as a renderer does every frame.

    python -m benchmarks.bench_action_checks [--draws 1000] [--frames 20] [--runs 3] [--draw NAME]
        [--buffers 1] [--gpuav-tree PATH] [--no-khronos] [--khronos-root PATH [--khronos-native]]

Each run is a fresh process; a figure is the median over runs of: the first recording (which
includes making gpuav's validation pipeline), and the median re-recording and submit (to the
end of the fence and queue waits) of frames 2 to F. Per-draw figures divide by N. Every draw
re-binds its pipeline and vertex (and index) buffers, so a draw is three or four commands;
with ``--buffers K`` draw k binds the k % K-th of K copies of the buffers (many meshes).
``--gpuav-tree`` runs gpuav from another checkout (say, a worktree of an earlier commit) with
this tree's app: before and after figures of one change. The Khronos layer runs through
``nk_vvl14`` of ``/work/shared/tools/newer-khronos.sh``, or, with ``--khronos-root``, from a
folder laid out as that script's ``$NK_ROOT`` (a machine without the script: the GPU machine),
as ``bench_shader_time`` runs it. Not a test: timings depend on the machine, which is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from benchmarks.bench_shader_time import khronos_configuration
from benchmarks.layer_apps import LAYER_NAME, REPOSITORY, tree_layer_folder
from benchmarks.timing import print_table
from tests.apps_common.build import compile_c_program
from tests.layer.test_action_checks_khronos import SHADERS
from tests.shaders.glsl import compile_glsl

APP_SOURCE = REPOSITORY / "tests" / "layer" / "apps" / "indirect_app.c"
NEWER_KHRONOS = Path("/work/shared/tools/newer-khronos.sh")
MODES = {
    "vkCmdDraw": ["vertices", "0", "3"],
    "vkCmdDrawIndexed": ["indexed", "2", "0"],
    "vkCmdDrawIndirect": ["draw", "0"],
    "vkCmdDrawIndexedIndirect": ["indexed_indirect", "0", "6"],
}
_LAYER_VARIABLES = ("GPUAV_", "VK_INSTANCE_LAYERS", "VK_LAYER_", "VK_ADD_LAYER_PATH")


def _command(
    configuration: str, options: argparse.Namespace, argv: list[str]
) -> tuple[list[str], dict[str, str]]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(_LAYER_VARIABLES)}
    if configuration == "gpuav":
        environment.update(
            VK_ADD_LAYER_PATH=tree_layer_folder(options.gpuav_tree),
            VK_INSTANCE_LAYERS=LAYER_NAME,
            GPUAV_ENABLE="1",
            PYTHONPATH=str(options.gpuav_tree),
        )
    elif configuration == "khronos" and options.khronos_root is not None:
        khronos = khronos_configuration(
            options.khronos_root, native=options.khronos_native, post_process=True
        )
        return [*khronos.prefix, *argv], {**environment, **khronos.environment}
    elif configuration == "khronos":
        quoted = " ".join(f"'{part}'" for part in argv)
        return ["bash", "-c", f"source '{NEWER_KHRONOS}' && nk_vvl14 {quoted}"], environment
    return argv, environment


def _run(
    command: list[str], environment: dict[str, str], *, exit_may_fail: bool
) -> tuple[float, float, float]:
    """(first recording, median re-recording, median submit) in microseconds.
    ``exit_may_fail``: the Khronos layer sometimes aborts at exit, after the app's figures."""
    done = subprocess.run(
        command, env=environment, capture_output=True, text=True, check=False, timeout=600
    )
    if done.returncode != 0 and not exit_may_fail:
        raise RuntimeError(f"exit status {done.returncode}: {done.stderr[-2000:]}")
    first = frames = None
    for line in done.stdout.splitlines():
        words = line.split()
        if words and words[0] == "timing":
            first = float(words[1])
        elif words and words[0] == "frames":
            frames = (float(words[1]), float(words[2]))
    if first is None or frames is None:
        raise RuntimeError(f"no timings in {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return first, *frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--buffers", type=int, default=1)
    parser.add_argument("--draw", action="append", choices=MODES, help="only these (a probe)")
    parser.add_argument("--gpuav-tree", type=Path, default=REPOSITORY)
    parser.add_argument("--no-khronos", action="store_true")
    parser.add_argument(
        "--khronos-root", type=Path, help="$NK_ROOT of newer-khronos.sh (or its layout)"
    )
    parser.add_argument(
        "--khronos-native",
        action="store_true",
        help="with --khronos-root: load the Khronos layer with the system's own glibc",
    )
    options = parser.parse_args()
    configurations = ["none", "gpuav"] + ([] if options.no_khronos else ["khronos"])
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        app = compile_c_program(folder / "indirect_app", [APP_SOURCE])
        for name, (stage, source) in SHADERS.items():
            words = compile_glsl(source, stage)
            (folder / f"{name}.spv").write_bytes(b"".join(w.to_bytes(4, "little") for w in words))
        os.environ.update(
            INDIRECT_APP_REPEAT=str(options.draws),
            INDIRECT_APP_FRAMES=str(options.frames),
            INDIRECT_APP_BUFFERS=str(options.buffers),
        )
        rows = []
        for command_name in options.draw or MODES:
            mode = MODES[command_name]
            argv = [str(app), str(folder), *mode]
            figures = {}
            for configuration in configurations:
                command, environment = _command(configuration, options, argv)
                exit_may_fail = configuration == "khronos"
                runs = [
                    _run(command, environment, exit_may_fail=exit_may_fail)
                    for _ in range(options.runs)
                ]
                columns = zip(*runs, strict=True)
                figures[configuration] = [statistics.median(column) for column in columns]
            row = [command_name]
            for column in range(3):
                row += [f"{figures[c][column] / options.draws:.2f}" for c in configurations]
            rows.append(row)
    header = ["per draw, us"]
    for what in ("first recording", "re-recording", "submit"):
        header += [f"{what}: {c}" for c in configurations]
    print(f"{options.draws} draws over {options.buffers} copies of their buffers, "
          f"{options.frames} frames, median of {options.runs} runs; "
          f"gpuav from {options.gpuav_tree}")  # fmt: skip
    print_table(header, rows)


if __name__ == "__main__":
    main()
