"""Compile the demo's GLSL into the SPIR-V the package ships (with -g, for source lines).

The demo must run where glslang is not installed, so its modules are committed;
tests/demo/test_demo_shaders.py recompiles them and fails when they are stale.

Usage: python tools/build_demo_shaders.py [--check]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

SHADERS = Path(__file__).resolve().parent.parent / "gpuav" / "demo" / "shaders"
SOURCES = ("shade_particles.comp", "fullscreen.vert", "textured_face.frag")


def compile_shader(source: Path) -> bytes:
    """-g keeps OpLine/OpSource so gpuav can print the source line of an error."""
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "out.spv"
        subprocess.run(
            [
                "glslangValidator",
                "-V",
                "-g",
                "--target-env",
                "vulkan1.1",
                source.name,
                "-o",
                str(output),
            ],
            cwd=source.parent,
            check=True,
            capture_output=True,
        )
        return output.read_bytes()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a shipped module is stale")
    args = parser.parse_args()
    stale = []
    for name in SOURCES:
        compiled = compile_shader(SHADERS / name)
        target = SHADERS / f"{name}.spv"
        if args.check:
            if not target.exists() or target.read_bytes() != compiled:
                stale.append(name)
        else:
            target.write_bytes(compiled)
    if stale:
        print(f"stale demo shaders: {', '.join(stale)}; run {__file__}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
