"""The layer's subcommands: ``gpuav layer-path`` and ``gpuav run``.

``gpuav run [--json FILE] [--fail-on-error] -- COMMAND...`` runs any program with the layer
loaded (``VK_ADD_LAYER_PATH`` + ``VK_INSTANCE_LAYERS``) and GPU-AV on, collects the
messages through the layer's message log, prints them, and exits with the program's status;
with ``--fail-on-error`` a program that succeeded still fails when errors were reported.
``--json`` writes the report of ``gpuav/report/report_schema.json`` (version 1).

Exit status: the program's own when it failed (128 + N when signal N ended it); else 3 with
--fail-on-error when gpuav reported an error; 2 when gpuav could not start the program; else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from gpuav.errors import SetupError
from gpuav.report.json_report import build_report

LAYER_NAME = "VK_LAYER_GPUAV_gpu_assisted"
EXIT_SETUP_FAILED = 2
EXIT_ERRORS_FOUND = 3


def add_layer_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    path = subparsers.add_parser(
        "layer-path",
        help="print the folder holding the layer's manifest (building the layer if needed)",
        description=_layer_path.__doc__,
    )
    path.set_defaults(run=_layer_path)
    run = subparsers.add_parser(
        "run",
        help="run a program under the layer with GPU-assisted validation on",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "--json", type=Path, help="write the report here (JSON, gpuav/report/report_schema.json)"
    )
    run.add_argument(
        "--fail-on-error",
        action="store_true",
        help=f"exit with {EXIT_ERRORS_FOUND} when the program succeeded but errors were found",
    )
    run.add_argument(
        "--printf-only",
        action="store_true",
        help="shader debugPrintfEXT only: the checks off (GPUAV_PRINTF_ONLY=1)",
    )
    run.add_argument("program", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    run.set_defaults(run=_run)


def _layer_path(args: argparse.Namespace) -> int:
    """Print the folder that holds the layer library and its manifest."""
    from gpuav.layer.native.build import layer_dir

    try:
        print(layer_dir())
    except SetupError as error:
        print(f"gpuav layer-path: {error}", file=sys.stderr)
        return EXIT_SETUP_FAILED
    return 0


def layer_environment(layer_folder: Path, message_log: Path | None) -> dict[str, str]:
    """The environment that makes the loader load the layer with GPU-AV on."""
    environment = dict(os.environ)
    paths = [str(layer_folder), *filter(None, environment.get("VK_ADD_LAYER_PATH", "").split(":"))]
    environment["VK_ADD_LAYER_PATH"] = os.pathsep.join(paths)
    layers = [name for name in environment.get("VK_INSTANCE_LAYERS", "").split(":") if name]
    environment["VK_INSTANCE_LAYERS"] = ":".join(
        [LAYER_NAME, *(n for n in layers if n != LAYER_NAME)]
    )
    environment["GPUAV_ENABLE"] = "1"
    if message_log is not None:
        environment["GPUAV_MESSAGE_LOG"] = str(message_log)
    return environment


def read_message_log(path: Path) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if not path.exists():
        return messages
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            messages.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return messages


def _run(args: argparse.Namespace) -> int:
    """Run a program under the layer and report what it found."""
    from gpuav.layer.native.build import layer_dir

    program = list(args.program)
    if program and program[0] == "--":
        program = program[1:]
    if not program:
        print("gpuav run: no program given (gpuav run -- COMMAND ...)", file=sys.stderr)
        return EXIT_SETUP_FAILED
    try:
        folder = layer_dir()
    except SetupError as error:
        print(f"gpuav run: {error}", file=sys.stderr)
        return EXIT_SETUP_FAILED
    with tempfile.TemporaryDirectory(prefix="gpuav-run-") as scratch:
        log = Path(scratch) / "messages.jsonl"
        try:
            environment = layer_environment(folder, log)
            if args.printf_only:
                environment["GPUAV_PRINTF_ONLY"] = "1"
            status = subprocess.call(program, env=environment)
        except OSError as error:
            print(f"gpuav run: cannot run {program[0]}: {error}", file=sys.stderr)
            return EXIT_SETUP_FAILED
        messages = read_message_log(log)
    for message in messages:
        print(f"gpuav: [{message['message_id']}] {message['text']}", file=sys.stderr)
    status = status if status >= 0 else 128 - status
    report = build_report(messages, status)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if status == 0 and report["errors"] and args.fail_on_error:
        return EXIT_ERRORS_FOUND
    return status
