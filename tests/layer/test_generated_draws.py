"""Draws from device-generated commands (VK_EXT_device_generated_commands, issue 16).

``apps/dgc_draw_app.c`` draws inside one dynamic rendering: an execute of two sequences, a
vkCmdDraw, another execute (the third action, which the planted push constants reach). Each
sequence is one draw token (DRAW, DRAW_INDEXED, DRAW_COUNT or DRAW_INDEXED_COUNT) of a triangle
covering the area, its instance the sequence's number; the fragment shader adds a palette
word to its pixel. With an indirect execution set, sequence 1 runs the set's second pipeline
(or, in a set of shader objects, its third shader object), whose fragment shader is another
(``other.frag``), so a record must be decoded with the set's member's shader, not the bound
one's. In the "wide" set, that pipeline's layout is compatible but names every set the device
binds, so it reaches gpuav's buffers through the pushed address while the bound pipeline binds
gpuav's set: the execute must serve both (without the address, the member crashes lavapipe).
The planted bugs (a palette index past the array, a word past the palette) fire in one
invocation of the second execute: the message names it (``Draw Index 2
(vkCmdExecuteGeneratedCommandsEXT)``), the fragment and the source line of the shader that
ran, and the access is skipped; the correct twins are silent and identical to no layer.

Where the Khronos layer 1.4.309 stands: without an execution set it finds both bugs
(VUID-vkCmdExecuteGeneratedCommandsEXT-None-10068 for the index, …-storageBuffers-06936);
with an execution set, of pipelines or of shader objects, it crashes (a segmentation fault,
the correct twins too), while its core checks alone find the app valid. Beneath gpuav it
finds nothing in gpuav's work for the executes of any kind; of the "wide" set it says that
the member's layout is not compatible with the initial pipeline's for set 7
(VUID-vkUpdateIndirectExecutionSetPipelineEXT-None-11039), where gpuav's set now stands in
the one and the app's empty set in the other (lavapipe runs both, and gpuav checks both).
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, app_environment, error_messages, parse_c_output
from tests.layer.test_khronos_below import (  # noqa: F401
    NewerKhronos,
    Runner,
    newer_khronos,
    run_stacked,
)
from tests.shaders.glsl import compile_glsl

pytestmark = pytest.mark.vulkan

PAINT = """#version 460
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) readonly buffer Palette { uint colors[]; } palettes[2];
layout(set = 0, binding = 1) buffer Image { uint pixels[]; } image;
layout(push_constant) uniform Push { uint palette; int word; uint action; } push;
layout(location = 0) flat in uint instance;
void main() {
    uint at = uint(gl_FragCoord.y) * 4u + uint(gl_FragCoord.x);
    bool chosen = at == 6u && instance == 1u;
    uint palette = chosen ? push.palette : instance;
    int word = chosen ? push.word : int(at & 3u);
    atomicAdd(image.pixels[at], palettes[nonuniformEXT(palette)].colors[word] * (push.action + 1u));
}
"""
SHADERS = {
    "quad.vert": """#version 460
layout(location = 0) flat out uint instance;
void main() {
    vec2 corner = vec2(float((gl_VertexIndex & 1) * 4), float((gl_VertexIndex >> 1) * 4)) - 1.0;
    gl_Position = vec4(corner, 0.0, 1.0);
    instance = uint(gl_InstanceIndex);
}
""",
    "paint.frag": PAINT,
    # The execution set's second pipeline: its words count a thousand more, one line lower.
    "other.frag": PAINT.replace(
        "void main", "// the execution set's second pipeline\nvoid main"
    ).replace("(push.action + 1u));", "(push.action + 1u) + 1000u);"),
}
TOKENS = ("draw", "draw_indexed", "draw_count", "draw_indexed_count")
EXECUTE = "vkCmdExecuteGeneratedCommandsEXT"
INVOCATION = (
    f"Draw Index 2 \\({EXECUTE}\\)",
    "Stage = Fragment\\. Fragment coord \\(x,y\\) = \\(2\\.5, 1\\.5\\)\\.",
)
SETS = ("none", "pipelines", "wide", "shaders")
LINE = {
    "none": "At paint\\.frag line 12\\.",
    "pipelines": "At other\\.frag line 13\\.",
    "wide": "At other\\.frag line 13\\.",
    "shaders": "At other\\.frag line 13\\.",
}
SHADER = {
    "none": "Shader Module \\(",
    "pipelines": "Shader Module \\(",
    "wide": "Shader Module \\(",
    "shaders": "Shader Object \\(",
}
# The chosen pixel (6): the second execute's chosen access adds palette 0's word 0 times 3.
CHOSEN = 6
CHOSEN_RESULT = {"none": 24, "pipelines": 2024, "wide": 2024, "shaders": 2024}
SKIPPED = 3
BUGS = {
    "correct": (("0", "0"), None, ()),
    "palette_past_the_array": (
        ("2", "0"),
        "GPUAV-descriptor-index-out-of-bounds",
        ("Index of 2 used to index descriptor array of length 2\\.",),
    ),
    "word_past_the_palette": (
        ("1", "4"),
        f"VUID-{EXECUTE}-storageBuffers-06936",  # None-08613 from shader objects
        ("storage buffer .*: 4 bytes at offset 16 .* past the end of the 16 bytes bound",),
    ),
}
SHADER_OBJECT_OVERRUN = f"VUID-{EXECUTE}-None-08613"
KHRONOS_IDS = {
    "correct": None,
    "palette_past_the_array": f"VUID-{EXECUTE}-None-10068",
    "word_past_the_palette": f"VUID-{EXECUTE}-storageBuffers-06936",
}
CASES = [
    (token, execution_set, bug)
    for token in TOKENS
    for execution_set in SETS
    for bug in BUGS
    if bug != "word_past_the_palette" or token in ("draw", "draw_indexed_count")
]


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The app and its three shaders (compiled with -g, for the source lines)."""
    folder = tmp_path_factory.mktemp("generated_draws")
    app = compile_c_program(folder / "dgc_draw_app", [APPS / "dgc_draw_app.c"])
    paths = []
    for name, source in SHADERS.items():
        words = compile_glsl(
            source, name.rsplit(".", 1)[1], target_env="vulkan1.2", debug="g", source_name=name
        )
        path = folder / f"{name}.spv"
        path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        paths.append(str(path))
    return [str(app), *paths]


def _run(
    command: list[str], environment: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, env=environment, cwd=cwd, capture_output=True, text=True, timeout=APP_TIMEOUT
    )


def _pixels(parsed: dict[str, object]) -> list[int]:
    result = parsed["result"]
    assert isinstance(result, str)
    return [int(word) for word in result.split()]


@pytest.mark.parametrize(("token", "execution_set", "bug"), CASES)
def test_generated_draw_checked_and_khronos_stands_where_the_docstring_says(
    token: str,
    execution_set: str,
    bug: str,
    program: list[str],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    arguments, gpuav_id, expected = BUGS[bug]
    argv = [*program, token, execution_set, *arguments]
    done = _run(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    ours = parse_c_output(done.stdout)
    theirs = _run(newer_khronos.command(argv), newer_khronos.gpu_assisted_environment(), tmp_path)
    if execution_set != "none":
        assert theirs.returncode != 0  # the Khronos layer's GPU-AV crashes on the set
    else:
        assert theirs.returncode == 0, theirs.stderr[-3000:]
        khronos_ids = {m["id"] for m in error_messages(parse_c_output(theirs.stdout))}
        khronos_id = KHRONOS_IDS[bug]
        assert khronos_ids == ({khronos_id} if khronos_id else set()), khronos_ids
    errors = error_messages(ours)
    pixels = _pixels(ours)
    if gpuav_id is None:
        assert errors == []
        plain = _run(argv, app_environment(None), tmp_path)
        assert plain.returncode == 0, plain.stderr[-3000:]
        assert pixels == _pixels(parse_c_output(plain.stdout))
        assert pixels[CHOSEN] == CHOSEN_RESULT[execution_set]  # every sequence drew
        return
    # One message, folding every invocation of the instruction: the planted one alone.
    (error,) = errors
    if execution_set == "shaders" and bug == "word_past_the_palette":
        gpuav_id = SHADER_OBJECT_OVERRUN
    assert error["id"] == gpuav_id
    for pattern in (*expected, *INVOCATION, LINE[execution_set], SHADER[execution_set]):
        assert re.search(pattern, error["text"]), (pattern, error["text"])
    assert "more invocations" not in error["text"]
    assert pixels[CHOSEN] == CHOSEN_RESULT[execution_set] - SKIPPED  # skipped, nothing else


@pytest.mark.parametrize("execution_set", SETS)
def test_khronos_layer_below_sees_nothing_from_gpuav(
    execution_set: str,
    run_stacked: Runner,  # noqa: F811  (the fixture imported above)
    program: list[str],
) -> None:
    """The Khronos layer 1.4.309 (core and synchronization checks) beneath gpuav: the app is
    valid alone, and so is gpuav's work for executes with and without an execution set, but
    for the set whose member's layout names every set (see the module's docstring)."""
    argv = [*program, "draw_indexed_count", execution_set, "0", "0"]
    alone = run_stacked(argv, gpuav=False)
    run = run_stacked(argv)
    assert alone.findings() == Counter()
    wide = Counter({"VUID-vkUpdateIndirectExecutionSetPipelineEXT-None-11039": 1})
    assert run.findings() == (wide if execution_set == "wide" else Counter())
    assert parse_c_output(run.stdout)["result"] == parse_c_output(alone.stdout)["result"]
