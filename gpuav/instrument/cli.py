"""``gpuav instrument IN.spv -o OUT.spv``: run the descriptor-bounds pass on a file.

``--descriptor-state`` and ``--context-push-offset``/``--context-spec-ids`` select the issue-8
modes (``gpuav.instrument.descriptor_state``), as the layer does.

Prints what was checked, the static findings (a constant index outside its array: guarded
and reported) and the descriptor uses left unchecked; ``--json`` prints the same as one JSON
object. A declined shader is reported and written out unchanged (exit 0, as the layer would
run it); unreadable or malformed input exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from array import array
from pathlib import Path
from typing import Any

from gpuav.errors import DecodeError
from gpuav.instrument.accesses import DescriptorAccess, Lookup, MergedLookup
from gpuav.instrument.api import PASS_NAME, instrument_module
from gpuav.instrument.descriptor_state import (
    ContextAddressSource,
    PushConstantAddress,
    SpecializationAddress,
)
from gpuav.instrument.host_terms import to_rows
from gpuav.instrument.unsupported import DescriptorBoundsUnsupported
from gpuav.spirv import read, words_from_bytes, write
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Module

EXIT_BAD_INPUT = 2


def add_instrument_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "instrument",
        help=f"instrument a SPIR-V module with the {PASS_NAME} checks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("input", type=Path, help="SPIR-V binary")
    parser.add_argument("-o", dest="output", type=Path, required=True, help="output SPIR-V file")
    parser.add_argument(
        "--desc-set", type=int, default=7, help="descriptor set of the debug output buffer"
    )
    parser.add_argument("--shader-id", type=int, default=0, help="32-bit id put in records")
    parser.add_argument(
        "--descriptor-state",
        action="store_true",
        help="check runtime arrays and unwritten descriptors against the layer's state",
    )
    address = parser.add_mutually_exclusive_group()
    address.add_argument(
        "--context-push-offset",
        type=int,
        metavar="BYTES",
        help="reach our buffers through a context address pushed at this offset (no set)",
    )
    address.add_argument(
        "--context-spec-ids",
        type=int,
        nargs=2,
        metavar=("LOW", "HIGH"),
        help="reach our buffers through a context address in two specialization constants",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON report")
    parser.set_defaults(run=_instrument)


def _instrument(args: argparse.Namespace) -> int:
    try:
        words = words_from_bytes(args.input.read_bytes())
        module = read(words)
    except (DecodeError, OSError) as error:
        print(f"gpuav instrument: {args.input}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    names = _names(module)
    decorations = Decorations(module)
    report: dict[str, Any] = {"input": str(args.input), "output": str(args.output)}
    try:
        result = instrument_module(
            module,
            shader_id=args.shader_id & 0xFFFF_FFFF,
            descriptor_set=args.desc_set,
            descriptor_state=args.descriptor_state,
            context_address=_context_address(args),
        )
    except DescriptorBoundsUnsupported as error:
        report.update(declined=str(error), instrumented=False, checked=[], static_findings=[])
        report.update(unchecked=[], loops_copied=0, entry_functions_copied=[])
        out = words
    else:
        accesses = [_access(a, names, decorations) for a in result.findings.accesses]
        report.update(declined=None, instrumented=result.changed, checked=accesses)
        report["static_findings"] = [a for a in accesses if a["static_out_of_bounds"]]
        report["unchecked"] = [
            {"instruction_index": u.instruction_index, "reason": u.reason}
            for u in result.findings.unchecked
        ]
        report["loops_copied"] = result.loops_copied
        report["entry_functions_copied"] = [
            {"entry_point": name, "stage_bit": bit, "terms": to_rows(terms)}
            for name, bit, terms in result.entry_verdicts
        ]
        out = write(result.module) if result.changed else words
    try:
        args.output.write_bytes(array("I", out).tobytes())
    except OSError as error:
        print(f"gpuav instrument: {args.output}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(json.dumps(report, indent=2) if args.json else _text(report))
    return 0


def _context_address(args: argparse.Namespace) -> ContextAddressSource | None:
    if args.context_push_offset is not None:
        return PushConstantAddress(args.context_push_offset)
    if args.context_spec_ids is not None:
        return SpecializationAddress(*args.context_spec_ids)
    return None


def _names(module: Module) -> dict[int, str]:
    return {i.operands[0]: i.string(1) for i in module.debug_names if i.opcode == Op.Name}


def _lookup(lookup: Lookup, names: dict[int, str], decorations: Decorations) -> Any:
    if isinstance(lookup, MergedLookup):  # OpPhi/OpSelect: its incoming lookups
        return {
            "merged_by": lookup.merge.name,
            "incoming": [_lookup(inner, names, decorations) for _, inner in lookup.incoming],
            "static_index": None,
            "array_length": None,
        }
    return {
        "variable": names.get(lookup.variable, f"%{lookup.variable}"),
        "set": decorations.descriptor_set(lookup.variable),
        "binding": decorations.binding(lookup.variable),
        "static_index": lookup.static_index,
        "array_length": lookup.static_length,
        "ptr_access_chain": lookup.element is not None,
    }


def _access(access: DescriptorAccess, names: dict[int, str], decorations: Decorations) -> Any:
    return {
        "instruction_index": access.instruction_index,
        "consumer": access.consumer.name,
        "kind": access.kind,
        "static_out_of_bounds": access.statically_out_of_bounds,
        "lookups": [_lookup(lookup, names, decorations) for lookup in access.lookups],
    }


def _where(lookup: dict[str, Any]) -> str:
    return f"{lookup['variable']} (set {lookup['set']}, binding {lookup['binding']})"


def _text(report: dict[str, Any]) -> str:
    lines = [f"{report['input']} -> {report['output']}"]
    if report["declined"]:
        lines.append(f"  declined (written unchanged): {report['declined']}")
        return "\n".join(lines)
    checked = report["checked"]
    lines.append(f"  {len(checked)} descriptor accesses checked")
    for entry in report["entry_functions_copied"]:
        lines.append(
            f"  entry point {entry['entry_point']} also kept without checks, run where the "
            f"layer finds {len(entry['terms'])} facts of the action hold"
        )
    if report["loops_copied"]:
        lines.append(
            f"  {report['loops_copied']} loops also kept without checks, run where a test "
            "before them shows that every access fits"
        )
    for access in report["static_findings"]:
        for lookup in access["lookups"]:
            if lookup["static_index"] is not None and lookup["array_length"] is not None:
                lines.append(
                    f"  static finding: instruction {access['instruction_index']} "
                    f"({access['consumer']}) uses index {lookup['static_index']} of "
                    f"{_where(lookup)}, an array of length {lookup['array_length']}"
                )
    for use in report["unchecked"]:
        lines.append(f"  unchecked: instruction {use['instruction_index']}: {use['reason']}")
    return "\n".join(lines)
