"""What turning output blocks into messages costs on the layer's read-back path (issue 4).

After every submit the layer decodes each action's block and composes messages. Parsing a
shader and building its line tables happens once per shader (cached by its words); what is
left per block is the decode and, per record, dictionary lookups and string formatting.

Workloads (host CPU only, no Vulkan):
- decode: a full 16 KiB block (455 nine-word records), and an empty one (the common case);
- first message for a shader (cold: parse + index + disassembly when there is no line info)
  and the same again (warm), for the largest corpus shaders with and without ``-g``;
- the same for a large generated fragment shader (bench_read_write.py's, compiled with -g);
- 1000 records of one draw (8 distinct errors, so 8 messages), warm.

Usage: python benchmarks/bench_report.py [--repeat N] [--functions N].
Not a test: timings depend on the machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_read_write import large_shader
from benchmarks.timing import median_seconds
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage
from gpuav.report import shader_info as shader_info_module
from gpuav.report.context import ActionContext, ShaderContext
from gpuav.report.decode import decode_output_buffer
from gpuav.report.messages import compose_messages
from gpuav.spirv.grammar import Op
from tests.shaders.glsl import DebugMode, compile_glsl, corpus_shaders

IMAGE_OPS = {Op.ImageSampleImplicitLod, Op.ImageSampleExplicitLod, Op.ImageFetch, Op.ImageRead}


def largest_shader(debug: DebugMode) -> tuple[str, tuple[int, ...]]:
    best: tuple[str, tuple[int, ...]] = ("", ())
    for shader in corpus_shaders():
        if debug in shader.spirv_val_fails:
            continue
        words = tuple(compile_glsl(shader.path, target_env=shader.target_env, debug=debug))
        if len(words) > len(best[1]):
            best = (shader.name, words)
    return best


def consumer_index(words: tuple[int, ...]) -> int:
    info = shader_info_module.ShaderInfo(words)
    for index, instruction in enumerate(info.instructions):
        if instruction.opcode in IMAGE_OPS:
            return index
    return len(info.instructions) // 2


def context(words: tuple[int, ...]) -> ActionContext:
    shader = ShaderContext(1, 0x43, "shader", 0x45, words)
    return ActionContext(0xBC24B0, "cmd", 2, "vkCmdDraw", 0x45, "pipeline", (shader,))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--functions", type=int, default=200, help="size of the generated shader")
    args = parser.parse_args()
    repeat = args.repeat

    record = ErrorRecord(1, 100, Stage.FRAGMENT, (0x43D1C000, 0x437E8000), ErrorCode(0), 6, 6)
    words = record.encode()
    full = [455 * len(words), *(words * 455), 0, 0, 0, 0, 0]
    empty = [0] * 4097
    full_s = median_seconds(lambda: decode_output_buffer(full), repeat)
    empty_s = median_seconds(lambda: decode_output_buffer(empty), repeat)
    print(f"decode, full 16 KiB block (455 records): {full_s * 1e3:.3f} ms")
    print(f"decode, empty 16 KiB block:              {empty_s * 1e6:.1f} us")

    print()
    print(f"{'shader':48} {'words':>7} {'cold ms':>9} {'warm us':>9} {'1000 records ms':>16}")
    shaders = [(f"{name} (-g)", words) for name, words in [largest_shader("g")]] + [
        (f"{name} (no debug info)", words) for name, words in [largest_shader("none")]
    ]
    large = large_shader(args.functions)
    shaders.append(
        (
            f"generated, {args.functions} functions (-g)",
            tuple(compile_glsl(large, "frag", debug="g")),
        )
    )
    for label, shader_words in shaders:
        print(row(label, shader_words, repeat))


def row(label: str, shader_words: tuple[int, ...], repeat: int) -> str:
    index = consumer_index(shader_words)
    action = context(shader_words)
    one = [ErrorRecord(1, index, Stage.FRAGMENT, (0, 0), ErrorCode(0), 6, 4)]
    many = [
        ErrorRecord(1, index, Stage.FRAGMENT, (x, x), ErrorCode(0), 4 + x % 8, 4)
        for x in range(1000)
    ]

    def cold() -> object:
        shader_info_module.clear_cache()
        return compose_messages(one, action)

    cold_s = median_seconds(cold, max(repeat // 5, 3))
    compose_messages(one, action)
    warm_s = median_seconds(lambda: compose_messages(one, action), repeat)
    many_s = median_seconds(lambda: compose_messages(many, action), max(repeat // 5, 3))
    return (
        f"{label:48} {len(shader_words):7} {cold_s * 1e3:9.2f} {warm_s * 1e6:9.1f} "
        f"{many_s * 1e3:16.2f}"
    )


if __name__ == "__main__":
    main()
