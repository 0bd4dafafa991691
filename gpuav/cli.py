"""Command-line entry point; subcommands are added by the parts that implement them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from gpuav.errors import EXIT_BAD_INPUT, DecodeError
from gpuav.instrument.cli import add_instrument_command
from gpuav.layer.cli import add_layer_commands
from gpuav.report.cli import add_decode_command
from gpuav.validate.cli import add_validate_command
from gpuav.validate.interface_cli import add_interface_commands


def _add_dis(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dis = subparsers.add_parser(
        "dis", help="disassemble a SPIR-V module in spirv-dis syntax", description=_dis.__doc__
    )
    dis.add_argument("file", type=Path, help="SPIR-V binary (either byte order)")
    dis.add_argument("--raw-id", action="store_true", help="print %%<number> for every id")
    dis.add_argument("--no-header", action="store_true", help="omit the '; SPIR-V' header")
    dis.add_argument("-o", dest="output", type=Path, help="write here instead of stdout")
    dis.set_defaults(run=_dis)


def _dis(args: argparse.Namespace) -> int:
    """Disassemble a SPIR-V module into the same text as spirv-dis."""
    from gpuav.spirv.disassembler import disassemble

    try:
        text = disassemble(
            args.file.read_bytes(), friendly_names=not args.raw_id, header=not args.no_header
        )
    except (DecodeError, OSError) as error:
        print(f"gpuav dis: {args.file}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    # Strings keep bytes that are not UTF-8 as surrogate escapes: write them back unchanged.
    data = text.encode("utf-8", errors="surrogateescape")
    if args.output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        args.output.write_bytes(data)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpuav", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_dis(subparsers)
    add_layer_commands(subparsers)
    add_decode_command(subparsers)
    add_interface_commands(subparsers)
    add_validate_command(subparsers)
    add_instrument_command(subparsers)
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
