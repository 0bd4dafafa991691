"""Command-line entry point; subcommands are added by the parts that implement them.

Only the part that implements the chosen subcommand is imported (``gpuav validate`` does not
pay for the instrumentation pass or the layer), so the command starts in tens of milliseconds;
``gpuav --help`` and unknown commands import them all to list them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

from gpuav.errors import EXIT_BAD_INPUT, DecodeError

# Exit status after the reader of our output went away (``gpuav validate x.spv | head -1``),
# as a shell reports a process that SIGPIPE ended.
EXIT_BROKEN_PIPE = 128 + 13

# subcommand -> (module, function that adds it and its siblings to the parser).
COMMANDS: dict[str, tuple[str, str]] = {
    "dis": (__name__, "add_dis_command"),
    "layer-path": ("gpuav.layer.cli", "add_layer_commands"),
    "run": ("gpuav.layer.cli", "add_layer_commands"),
    "decode": ("gpuav.report.cli", "add_decode_command"),
    "interface": ("gpuav.validate.interface_cli", "add_interface_commands"),
    "split-output-structs": ("gpuav.validate.interface_cli", "add_interface_commands"),
    "validate": ("gpuav.validate.cli", "add_validate_command"),
    "instrument": ("gpuav.instrument.cli", "add_instrument_command"),
}


def add_dis_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with ``command``'s part registered, or every part when it is not known."""
    parser = argparse.ArgumentParser(prog="gpuav", description=__doc__)
    subparsers = parser.add_subparsers(dest="command", required=True)
    chosen = [COMMANDS[command]] if command in COMMANDS else list(COMMANDS.values())
    for module_name, function_name in dict.fromkeys(chosen):
        add: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None] = getattr(
            importlib.import_module(module_name), function_name
        )
        add(subparsers)
    return parser


def _command_word(argv: list[str]) -> str | None:
    """The subcommand argparse will see: the first argument (the top level has no options
    besides --help, which lists every command)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    args = build_parser(_command_word(arguments)).parse_args(arguments)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        status = run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # Whoever read our output stopped (``| head``): not an error of ours. Point stdout at
        # /dev/null so the interpreter's final flush does not fail a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    return status


if __name__ == "__main__":
    sys.exit(main())
