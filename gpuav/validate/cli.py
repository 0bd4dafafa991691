"""`gpuav validate`: the Vulkan environment rules on one SPIR-V file, for people and for CI.

Exit status 0 when no rule is broken (warnings allowed), 1 when one is, 2 when the module or
the device description cannot be read. Each diagnostic is one line naming the rule, the
instruction (its index in the file and its disassembly) and, with debug info, the source line.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from gpuav.errors import EXIT_BAD_INPUT, DecodeError
from gpuav.spirv import words_from_bytes
from gpuav.validate.api import validate
from gpuav.validate.device_json import DeviceDescription, DeviceJsonError, load_device_json
from gpuav.validate.diagnostics import Diagnostic, Severity
from gpuav.validate.rules_capabilities import load_table
from gpuav.validate.target_envs import TARGET_ENVS

if TYPE_CHECKING:
    from gpuav.report.shader_info import ShaderInfo

EXIT_VALID = 0
EXIT_BROKEN = 1
DEFAULT_TARGET_ENV = "vulkan1.1"


def add_validate_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = subparsers.add_parser(
        "validate",
        help="check a SPIR-V module against the Vulkan environment rules",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("file", type=Path, help="SPIR-V binary (either byte order)")
    command.add_argument(
        "--target-env",
        choices=TARGET_ENVS,
        help=f"Vulkan version to validate for (default: the device's, else {DEFAULT_TARGET_ENV} "
        "or the oldest one that accepts the module's SPIR-V version)",
    )
    command.add_argument(
        "--features",
        default="",
        help="comma-separated enabled Vulkan features (shaderFloat64,shaderInt64,...)",
    )
    command.add_argument(
        "--extensions",
        default="",
        help="comma-separated enabled device extensions (VK_KHR_8bit_storage,...)",
    )
    command.add_argument(
        "--device-json",
        type=Path,
        help="validate against a device: the file `vulkaninfo --json` writes",
    )
    command.add_argument("--json", action="store_true", help="machine-readable output")
    command.set_defaults(run=run_validate)


def run_validate(args: argparse.Namespace) -> int:
    device = DeviceDescription()
    try:
        if args.device_json is not None:
            device = load_device_json(args.device_json)
        words = words_from_bytes(args.file.read_bytes())
        target_env = args.target_env or (
            device.target_env if args.device_json is not None else default_target_env(words)
        )
        diagnostics = validate(
            words,
            target_env=target_env,
            features=device.features | _names(args.features),
            extensions=device.extensions | _names(args.extensions),
            limits=device.limits,
        )
    except (OSError, DecodeError, DeviceJsonError) as error:
        print(f"gpuav validate: {args.file}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not diagnostics and not args.json:
        return EXIT_VALID
    # The disassembly and source-line lookup (imported here, not at start-up) describe
    # the diagnostics.
    from gpuav.report.shader_info import ShaderInfo

    info = ShaderInfo(words)
    if args.json:
        print(json.dumps(to_json(str(args.file), target_env, diagnostics, info), indent=2))
    else:
        for diagnostic in diagnostics:
            print(render_line(str(args.file), diagnostic, info))
    broken = any(diagnostic.severity is Severity.ERROR for diagnostic in diagnostics)
    return EXIT_BROKEN if broken else EXIT_VALID


def default_target_env(words: list[int]) -> str:
    """vulkan1.1, or the oldest later environment that accepts the module's SPIR-V version."""
    version = ((words[1] >> 16) & 0xFF, (words[1] >> 8) & 0xFF) if len(words) > 1 else (1, 0)
    newest = load_table().spirv_versions
    start = TARGET_ENVS.index(DEFAULT_TARGET_ENV)
    for environment in TARGET_ENVS[start:]:
        if version <= newest.get(environment, (0, 0)):
            return environment
    return DEFAULT_TARGET_ENV


def render_line(file: str, diagnostic: Diagnostic, info: ShaderInfo) -> str:
    """``file: error: RULE: message | instruction N: <disassembly> | source:line: text``."""
    parts = [f"{file}: {diagnostic.severity.value}: {diagnostic.rule}: {diagnostic.message}"]
    index = diagnostic.instruction_index
    if index is not None:
        parts.append(f"instruction {index}: {info.instruction_text(index) or '?'}")
        location = info.location(index)
        if location is not None:
            where = f"{location.file or '<source>'}:{location.line}"
            parts.append(f"{where}: {location.text.strip()}" if location.text else where)
    return " | ".join(parts)


def to_json(
    file: str, target_env: str, diagnostics: Iterable[Diagnostic], info: ShaderInfo
) -> dict[str, object]:
    entries = []
    for diagnostic in diagnostics:
        index = diagnostic.instruction_index
        location = info.location(index) if index is not None else None
        entries.append(
            {
                "rule": diagnostic.rule,
                "severity": diagnostic.severity.value,
                "message": diagnostic.message,
                "instruction_index": index,
                "instruction": info.instruction_text(index) if index is not None else None,
                "source": None
                if location is None
                else {
                    "file": location.file,
                    "line": location.line,
                    "column": location.column,
                    "text": location.text,
                },
            }
        )
    valid = not any(entry["severity"] == Severity.ERROR.value for entry in entries)
    return {"file": file, "target_env": target_env, "valid": valid, "diagnostics": entries}


def _names(text: str) -> frozenset[str]:
    return frozenset(name.strip() for name in text.split(",") if name.strip())
