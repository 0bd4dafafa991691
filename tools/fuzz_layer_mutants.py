"""Seed shaders and their mutants for ``fuzz_layer.py``.

Every seed uses the fuzz app's one pipeline layout (set 0: a result buffer, 4 storage buffers,
4 sampled images, 2 uniform buffers; 16 bytes of push constants) and indexes descriptor arrays
dynamically, so gpuav instruments it. Each is compiled without and with debug information.
Mutant N of a run is a pure function of the run's seed and N: a crash found once can be
rebuilt from its two numbers.
"""

from __future__ import annotations

import random
import subprocess
import tempfile
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMMON = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) buffer Result { uint words[]; } result;
layout(set = 0, binding = 1) buffer Item { uint value; } items[];
layout(set = 0, binding = 2) uniform sampler2D textures[4];
layout(set = 0, binding = 3) uniform Params { uvec4 values; } params[2];
layout(push_constant) uniform Push { uint index; uint slot; uint pad0; uint pad1; } push;
"""

SOURCES: dict[str, tuple[str, str]] = {
    "gather.comp": (
        "comp",
        COMMON
        + """layout(local_size_x = 4) in;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint k = (push.index + i) & 3u;
    vec4 texel = textureLod(textures[nonuniformEXT(k)], vec2(0.5), 0.0);
    result.words[i] = items[nonuniformEXT(k)].value + params[push.index & 1u].values.x
        + uint(texel.x * 255.0);
}
""",
    ),
    "loops.comp": (
        "comp",
        COMMON
        + """layout(local_size_x = 8) in;
shared uint partial[8];
uint pick(uint which) { return items[which & 3u].value; }
void main() {
    uint i = gl_LocalInvocationID.x;
    uint sum = 0u;
    for (uint n = 0u; n < push.slot; ++n) {
        sum += pick(n + push.index);
        if ((sum & 1u) != 0u) { sum += params[n & 1u].values.y; }
    }
    partial[i] = sum;
    barrier();
    if (i == 0u) {
        atomicAdd(items[push.index].value, partial[7]);
        result.words[push.slot] = sum;
    }
}
""",
    ),
    "quad.vert": (
        "vert",
        COMMON
        + """layout(location = 0) out vec2 uv;
layout(location = 1) flat out uint which;
void main() {
    vec2 position = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    uv = position;
    which = params[push.index].values.y & 3u;
    gl_Position = vec4(position * 2.0 - 1.0, 0.0, 1.0);
}
""",
    ),
    "textured.frag": (
        "frag",
        COMMON
        + """layout(location = 0) in vec2 uv;
layout(location = 1) flat in uint which;
layout(location = 0) out vec4 color;
void main() {
    color = texture(textures[which], uv) + vec4(float(items[push.slot].value));
    if (gl_FragCoord.x < 1.0 && gl_FragCoord.y < 1.0) {
        atomicAdd(result.words[which], 1u);
    }
}
""",
    ),
}
DEBUG_FLAGS: dict[str, tuple[str, ...]] = {"": (), "-g": ("-g",), "-gV": ("-gV",)}


@dataclass(frozen=True)
class Seed:
    name: str
    stage: str
    words: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "stage": self.stage, "words": list(self.words)}

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> Seed:
        return cls(str(item["name"]), str(item["stage"]), tuple(item["words"]))


def compile_seeds() -> list[Seed]:
    """Every source in every debug mode, compiled with glslangValidator (spirv-val'd)."""
    seeds = []
    with tempfile.TemporaryDirectory(prefix="gpuav-fuzz-") as work:
        for name, (stage, source) in SOURCES.items():
            path = Path(work) / name
            path.write_text(source)
            for suffix, flags in DEBUG_FLAGS.items():
                output = Path(work) / f"{name}{suffix}.spv"
                subprocess.run(
                    ["glslangValidator", "-V", "--target-env", "vulkan1.2", *flags,
                     "-o", str(output), str(path)],
                    check=True, capture_output=True, text=True,
                )  # fmt: skip
                subprocess.run(
                    ["spirv-val", "--target-env", "vulkan1.2", str(output)],
                    check=True, capture_output=True, text=True,
                )  # fmt: skip
                words = tuple(array("I", output.read_bytes()))
                seeds.append(Seed(f"{name}{suffix}", stage, words))
    return seeds


def mutate(words: list[int], rng: random.Random) -> list[int]:
    """One to three edits of the kinds of tests/instrument/test_fuzz.py, plus the header's id
    bound (word 3), which those leave alone."""
    words = list(words)
    for _ in range(rng.randint(1, 3)):
        at = 3 if rng.random() < 0.05 else rng.randint(5, len(words) - 1)
        kind = rng.choice(("flip", "small", "delete", "duplicate"))
        if kind == "flip":
            words[at] ^= 1 << rng.randint(0, 31)
        elif kind == "small":  # a small value where an id or a count was
            words[at] = rng.randint(0, 64)
        elif kind == "delete" and at > 4:
            del words[at]
        elif kind == "duplicate" and at > 4:
            words[at:at] = words[at : at + rng.randint(1, 8)]
    return words


def mutant(seeds: list[Seed], run_seed: int, number: int) -> tuple[Seed, list[int]]:
    """Mutant ``number`` of run ``run_seed``: its seed and its words."""
    rng = random.Random(run_seed * 1_000_003 + number)
    seed = seeds[number % len(seeds)]
    return seed, mutate(list(seed.words), rng)
