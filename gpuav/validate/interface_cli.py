"""``gpuav interface`` (the location/transform-feedback table and its diagnostics) and
``gpuav split-output-structs`` (the pass of the same name).

Exit status of ``interface``: 0 when no error is found, 1 when there is one, 2 when the input
(module, device file, limit option) cannot be used.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from gpuav.errors import EXIT_BAD_INPUT, DecodeError, GpuavError
from gpuav.spirv import read, words_from_bytes, write_bytes
from gpuav.spirv.grammar import StorageClass
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic, Severity
from gpuav.validate.interface import EntryPointInterface, InterfaceVariable
from gpuav.validate.interface_rules import VULKAN_MINIMUM_LIMITS
from gpuav.validate.rules_interface import check, interfaces

_COLUMNS = ("variable", "storage", "location", "component", "locations", "components", "xfb")


def add_interface_commands(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    interface = subparsers.add_parser(
        "interface",
        help="interface locations and transform-feedback layout of a SPIR-V module",
        description=_interface.__doc__,
    )
    interface.add_argument("file", type=Path, help="SPIR-V binary")
    interface.add_argument("--device-json", type=Path, help="limits from `vulkaninfo --json`")
    interface.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a device limit (maxVertexOutputComponents=128); overrides --device-json",
    )
    interface.add_argument(
        "--minimum-limits",
        action="store_true",
        help="check against the limits every Vulkan device supports where none is given",
    )
    interface.add_argument("--json", action="store_true", help="machine-readable output")
    interface.set_defaults(run=_interface)
    split = subparsers.add_parser(
        "split-output-structs",
        help="one output variable per leaf member of struct-typed outputs",
        description="Split struct-typed shader outputs into one variable per member.",
    )
    split.add_argument("file", type=Path, help="SPIR-V binary")
    split.add_argument("-o", dest="output", type=Path, required=True, help="output SPIR-V file")
    split.set_defaults(run=_split)


def _limits(args: argparse.Namespace) -> dict[str, int]:
    limits: dict[str, int] = dict(VULKAN_MINIMUM_LIMITS) if args.minimum_limits else {}
    if args.device_json is not None:
        from gpuav.validate.device_json import load_device_json

        limits.update(load_device_json(args.device_json).limits)
    for item in args.limit:
        name, _, value = item.partition("=")
        try:
            limits[name.strip()] = int(value, 0)
        except ValueError:
            raise GpuavError(f"--limit {item!r} is not NAME=INTEGER") from None
    return limits


def _interface(args: argparse.Namespace) -> int:
    """Print, per entry point, every Input/Output variable with its Location and Component,
    the locations and components it consumes and its transform-feedback decorations; then the
    interface diagnostics (missing Locations, overlaps, device limits, transform feedback)."""
    try:
        limits = _limits(args)
        module = read(words_from_bytes(args.file.read_bytes()))
    except (GpuavError, OSError) as error:
        print(f"gpuav interface: {args.file}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    context = ValidationContext(module, limits=limits)
    try:
        entries = interfaces(context)
    except (GpuavError, KeyError, IndexError, ValueError, RecursionError) as error:
        print(f"gpuav interface: {args.file}: cannot analyze: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    diagnostics = list(check(context))
    if args.json:
        print(json.dumps(to_json(entries, diagnostics, limits), indent=2))
    else:
        print(render_text(entries, diagnostics))
    return 1 if any(d.severity == Severity.ERROR for d in diagnostics) else 0


def _split(args: argparse.Namespace) -> int:
    from gpuav.transform.split_output_structs import split_output_structs

    try:
        module = read(words_from_bytes(args.file.read_bytes()))
        args.output.write_bytes(write_bytes(split_output_structs(module)))
    except (DecodeError, GpuavError, OSError) as error:
        print(f"gpuav split-output-structs: {args.file}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def _storage(variable: InterfaceVariable) -> str:
    kind = "in" if variable.storage_class == StorageClass.Input else "out"
    return f"patch {kind}" if variable.patch else kind


def _row(variable: InterfaceVariable) -> dict[str, object]:
    location: object = variable.location
    if variable.builtin:
        location = "built-in"
    elif location is None and variable.slots:
        location = "members"
    return {
        "variable": variable.name or f"%{variable.variable}",
        "id": variable.variable,
        "storage": _storage(variable),
        "location": location,
        "component": variable.component,
        "locations": variable.locations_used,
        "components": variable.components_used,
        "xfb": dict(variable.xfb),
        "members": [
            {
                "member": member.name,
                "location": member.location,
                "component": member.component,
                "locations": member.locations_used,
                "components": member.components_used,
                "xfb": dict(member.xfb),
            }
            for member in variable.members
        ],
    }


def to_json(
    entries: list[EntryPointInterface], diagnostics: list[Diagnostic], limits: Mapping[str, int]
) -> dict[str, object]:
    return {
        "entry_points": [
            {
                "name": entry.name,
                "execution_model": entry.model_name,
                "variables": [_row(variable) for variable in entry.variables],
            }
            for entry in entries
        ],
        "limits": dict(limits),
        "diagnostics": [
            {
                "rule": d.rule,
                "severity": d.severity.value,
                "message": d.message,
                "instruction_index": d.instruction_index,
            }
            for d in diagnostics
        ],
    }


def render_text(entries: list[EntryPointInterface], diagnostics: list[Diagnostic]) -> str:
    lines: list[str] = []
    for entry in entries:
        lines.append(f"entry point '{entry.name}' ({entry.model_name})")
        rows: list[tuple[str, ...]] = [_COLUMNS]
        for variable in entry.variables:
            row = _row(variable)
            xfb = " ".join(f"{key}={value}" for key, value in variable.xfb.items())
            rows.append(
                (
                    str(row["variable"]),
                    str(row["storage"]),
                    "-" if row["location"] is None else str(row["location"]),
                    "-" if row["component"] is None else str(row["component"]),
                    str(row["locations"]),
                    str(row["components"]),
                    xfb or "-",
                )
            )
            for member in variable.members:
                rows.append(
                    (
                        f"  .{member.name}",
                        "",
                        str(member.location),
                        "-" if member.component is None else str(member.component),
                        str(member.locations_used),
                        str(member.components_used),
                        " ".join(f"{key}={value}" for key, value in member.xfb.items()) or "-",
                    )
                )
        widths = [max(len(row[column]) for row in rows) for column in range(len(_COLUMNS))]
        for cells in rows:
            lines.append(
                "  "
                + "  ".join(
                    cell.ljust(width) for cell, width in zip(cells, widths, strict=True)
                ).rstrip()
            )
        lines.append("")
    if diagnostics:
        for d in diagnostics:
            where = "" if d.instruction_index is None else f" (instruction {d.instruction_index})"
            lines.append(f"{d.severity.value}: [{d.rule}]{where} {d.message}")
    else:
        lines.append("no interface problems found")
    return "\n".join(lines)
