"""Pipelines linked from pipeline libraries on lavapipe, side by side with the Khronos layer
1.4.309.

``apps/pipeline_library_app.c`` draws one triangle with a pipeline linked from four graphics
pipeline libraries (vertex input, pre-rasterization, fragment shader, fragment output), with
and without link-time optimization, with one layout for all or with independent-sets layouts
of one set each; and traces a 4 x 4 launch with a ray-tracing pipeline whose ray generation
shader lives in a library and whose callable shader is the link's own. Each planted bug fires
in one invocation of one library stage (or of the link's own callable stage), so the message
must name exactly it, with the source line. "wide" layouts use every set the device has, so
that gpuav reaches its buffers through the pushed context address.

Where the Khronos layer 1.4.309 stands: it finds every planted shader bug of the graphics
libraries (the out-of-bounds descriptor index as VUID-vkCmdDraw-None-10068) and the callable
shader's overrun, but neither bug of the ray generation shader that lives in a ray-tracing
library, nor (as for any pipeline) a non-indexed draw fetching past the vertex buffer. Under
"wide" layouts, which leave no set free, it reports nothing. Where lavapipe reads the push constants
of a linked ray-tracing pipeline as zero, gpuav keeps such pipelines' original shaders when
only the pushed address could reach its buffers, and says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuav.instrument.api import instrument_module
from gpuav.instrument.descriptor_state import PushConstantAddress
from gpuav.spirv import read, write
from gpuav.spirv.disassembler import disassemble
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APPS, app_environment, run_c_program
from tests.layer.test_khronos_below import (  # noqa: F401
    NewerKhronos,
    Runner,
    newer_khronos,
    run_stacked,
)
from tests.shaders.glsl import compile_glsl
from tests.validate.asm import newer_spirv_val, spirv_val

pytestmark = pytest.mark.vulkan

PUSH = "layout(push_constant) uniform Push { uint palette; int corner; int word; } push;"
PARAMETERS = (
    "layout(set = 0, binding = 2) readonly buffer Params { uint material; int pixel; int word; }"
    " push;"
)
SHADERS = {
    "lib.vert": f"""#version 460
layout(set = 0, binding = 0) readonly buffer Corners {{ vec2 corners[]; }} shape;
{PUSH}
void main() {{
    int at = gl_VertexIndex == 2 ? gl_VertexIndex + push.corner : gl_VertexIndex;
    gl_Position = vec4(shape.corners[at], 0.0, 1.0);
}}
""",
    "lib.frag": f"""#version 460
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 1, binding = 0) readonly buffer Palette {{ uint colors[]; }} palettes[2];
{PUSH}
layout(location = 0) out uint color;
void main() {{
    bool chosen = uvec2(gl_FragCoord.xy) == uvec2(1, 2);
    uint palette = chosen ? push.palette : 1u;
    int word = chosen ? push.word : int(gl_FragCoord.x);
    color = palettes[nonuniformEXT(palette)].colors[word] + 1000u * uint(gl_FragCoord.y);
}}
""",
    "lib.rgen": f"""#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_EXT_nonuniform_qualifier : require
layout(location = 0) callableDataEXT uint value;
layout(set = 0, binding = 0) buffer Image {{ uint pixels[]; }} image;
layout(set = 0, binding = 1) readonly buffer Material {{ uint values[]; }} materials[2];
{PARAMETERS}
void main() {{
    bool chosen = gl_LaunchIDEXT.xy == uvec2(2, 1);
    uint material = chosen ? push.material : 1u;
    value = materials[nonuniformEXT(material)].values[gl_LaunchIDEXT.x];
    executeCallableEXT(0, 0);
    uint at = gl_LaunchIDEXT.y * gl_LaunchSizeEXT.x + gl_LaunchIDEXT.x;
    if (gl_LaunchIDEXT.xy == uvec2(3, 2)) at += uint(push.pixel);
    image.pixels[at] = value;
}}
""",
    "lib.rcall": f"""#version 460
#extension GL_EXT_ray_tracing : require
layout(location = 0) callableDataInEXT uint value;
layout(set = 0, binding = 1) readonly buffer Material {{ uint values[]; }} materials[2];
{PARAMETERS}
void main() {{
    int word = gl_LaunchIDEXT.xy == uvec2(1, 3) ? push.word : int(gl_LaunchIDEXT.y);
    value += materials[0].values[word] * 10u + 1000u * gl_LaunchIDEXT.y;
}}
""",
}
SHADERS_OF = {"graphics": ("lib.vert", "lib.frag"), "ray-tracing": ("lib.rgen", "lib.rcall")}


@dataclass(frozen=True)
class Scenario:
    app: str  # "graphics" or "ray-tracing"
    arguments: tuple[str, ...]
    gpuav_id: str | None  # None: silent, and the results of a run without layer
    expected: tuple[str, ...] = ()  # patterns gpuav's message must hold
    khronos_id: str | None = None  # what the Khronos layer 1.4.309 reports; None: nothing


CORRECT = ("1", "0", "1")
DRAW = "Draw Index 0 \\(vkCmdDraw\\)"
FRAGMENT = "Stage = Fragment\\. Fragment coord \\(x,y\\) = \\(1\\.5, 2\\.5\\)\\."
FRAGMENT_LINE = "At lib\\.frag line 10\\."
FRAGMENT_INDEX = (
    "Index of 2 used to index descriptor array of length 2\\.",
    FRAGMENT_LINE,
    FRAGMENT,
    DRAW,
    "Descriptor: palettes \\(block Palette\\), set 1, binding 0",
)
VERTEX_OVERRUN = (
    "storage buffer read: 8 bytes at offset 24 .* past the end of the 24 bytes bound",
    "Buffer 'corners'",
    "At lib\\.vert line 6\\.",
    "Stage = Vertex\\. Vertex index = 2\\. Instance index = 0\\.",
    DRAW,
)
TRACE = "Ray Trace Index 0 \\(vkCmdTraceRaysKHR\\)"
INDEX_ID = "GPUAV-descriptor-index-out-of-bounds"
DRAW_RANGE_ID = "VUID-vkCmdDraw-storageBuffers-06936"
TRACE_RANGE_ID = "VUID-vkCmdTraceRaysKHR-storageBuffers-06936"
SCENARIOS = {
    **{
        f"graphics_correct_{'_'.join(options) or 'plain'}": Scenario(
            "graphics", (*CORRECT, *options), None
        )
        for options in (
            (),
            ("lto",),
            ("independent",),
            ("independent", "lto"),
            ("wide",),
            ("vertices3",),
        )
    },
    "fragment_descriptor_index": Scenario(
        "graphics", ("2", "0", "1"), INDEX_ID, FRAGMENT_INDEX, "VUID-vkCmdDraw-None-10068"
    ),
    "fragment_descriptor_index_lto": Scenario(
        "graphics", ("2", "0", "1", "lto"), INDEX_ID, FRAGMENT_INDEX, "VUID-vkCmdDraw-None-10068"
    ),
    "fragment_descriptor_index_independent": Scenario(
        "graphics",
        ("2", "0", "1", "independent"),
        INDEX_ID,
        FRAGMENT_INDEX,
        "VUID-vkCmdDraw-None-10068",
    ),
    "fragment_descriptor_index_wide": Scenario(
        "graphics", ("2", "0", "1", "wide", "lto"), INDEX_ID, FRAGMENT_INDEX
    ),
    "fragment_buffer_overrun_lto": Scenario(
        "graphics",
        ("1", "0", "4", "lto"),
        DRAW_RANGE_ID,
        (
            "storage buffer read: 4 bytes at offset 16 .* past the end of the 16 bytes bound",
            "Buffer 'palette 1'",
            FRAGMENT_LINE,
            FRAGMENT,
        ),
        DRAW_RANGE_ID,
    ),
    "vertex_buffer_overrun": Scenario(
        "graphics", ("1", "1", "1"), DRAW_RANGE_ID, VERTEX_OVERRUN, DRAW_RANGE_ID
    ),
    "vertex_buffer_overrun_independent_lto": Scenario(
        "graphics",
        ("1", "1", "1", "independent", "lto"),
        DRAW_RANGE_ID,
        VERTEX_OVERRUN,
        DRAW_RANGE_ID,
    ),
    "vertex_buffer_overrun_wide": Scenario(
        "graphics", ("1", "1", "1", "wide"), DRAW_RANGE_ID, VERTEX_OVERRUN
    ),
    # The vertex input lives in its library: the linked pipeline's vertex fetches are checked.
    "vertex_fetch_past_the_vertex_buffer_lto": Scenario(
        "graphics",
        ("1", "0", "1", "vertices2", "lto"),
        "VUID-vkCmdDraw-None-02721",
        (
            "vertexCount 3 fetch vertices \\[0, 3\\), but the bound vertex buffers hold 2 vertices",
            "buffer 'vertices'",
            DRAW,
        ),
    ),
    "ray_tracing_correct": Scenario("ray-tracing", CORRECT, None),
    "ray_tracing_correct_wide": Scenario("ray-tracing", (*CORRECT, "wide"), None),
    "ray_generation_descriptor_index": Scenario(
        "ray-tracing",
        ("2", "0", "1"),
        INDEX_ID,
        (
            "Index of 2 used to index descriptor array of length 2\\.",
            "At lib\\.rgen line 11\\.",
            "Stage = Ray Generation\\. Launch ID \\(x, y, z\\) = \\(2, 1, 0\\)\\.",
            TRACE,
            "Descriptor: materials \\(block Material\\), set 0, binding 1",
        ),
    ),
    "ray_generation_buffer_overrun": Scenario(
        "ray-tracing",
        ("1", "5", "1"),
        TRACE_RANGE_ID,
        (
            "storage buffer write: 4 bytes at offset 64 .* past the end of the 64 bytes bound",
            "Buffer 'image'",
            "At lib\\.rgen line 15\\.",
            "Stage = Ray Generation\\. Launch ID \\(x, y, z\\) = \\(3, 2, 0\\)\\.",
        ),
    ),
    "callable_buffer_overrun": Scenario(
        "ray-tracing",
        ("1", "0", "4"),
        TRACE_RANGE_ID,
        (
            "storage buffer read: 4 bytes at offset 16 .* past the end of the 16 bytes bound",
            "Buffer 'material 0'",
            "At lib\\.rcall line 8\\.",
            "Stage = Callable\\. Launch ID \\(x, y, z\\) = \\(1, 3, 0\\)\\.",
            TRACE,
        ),
        TRACE_RANGE_ID,
    ),
}


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """The app, and its shaders' paths (compiled with -g, for the source lines)."""
    folder = tmp_path_factory.mktemp("pipeline_libraries")
    app = compile_c_program(folder / "pipeline_library_app", [APPS / "pipeline_library_app.c"])
    paths = {}
    for file_name, source in SHADERS.items():
        words = compile_glsl(
            source, file_name.rsplit(".", 1)[1], target_env="vulkan1.2", debug="g",
            source_name=file_name,
        )  # fmt: skip
        paths[file_name] = folder / f"{file_name}.spv"
        paths[file_name].write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
    return app, paths


def _argv(program: tuple[Path, dict[str, Path]], app: str, arguments: tuple[str, ...]) -> list[str]:
    binary, shaders = program
    return [str(binary), app, *(str(shaders[name]) for name in SHADERS_OF[app]), *arguments]


def _messages(parsed: dict[str, object]) -> list[dict[str, str]]:
    messages = parsed["messages"]
    assert isinstance(messages, list)
    return messages


def _errors(parsed: dict[str, object]) -> list[dict[str, str]]:
    return [m for m in _messages(parsed) if int(m["severity"]) >= 0x1000]


@pytest.mark.parametrize("name", SCENARIOS)
def test_library_stages_are_checked_and_khronos_stands_where_the_docstring_says(
    name: str,
    program: tuple[Path, dict[str, Path]],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = SCENARIOS[name]
    argv = _argv(program, scenario.app, scenario.arguments)
    ours = run_c_program(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    theirs = run_c_program(
        newer_khronos.command(argv), newer_khronos.gpu_assisted_environment(), tmp_path
    )
    khronos_ids = {m["id"] for m in _errors(theirs)}
    assert khronos_ids == ({scenario.khronos_id} if scenario.khronos_id else set()), khronos_ids
    # Nothing is left unchecked without a word: no library notice but the one lavapipe forces.
    notices = {m["id"] for m in _messages(ours) if "library" in m["id"]}
    ray_tracing_wide = scenario.app == "ray-tracing" and "wide" in scenario.arguments
    assert notices == ({"GPUAV-ray-tracing-library-by-address"} if ray_tracing_wide else set())
    errors = _errors(ours)
    if scenario.gpuav_id is None:
        assert errors == []
        plain = run_c_program(argv, app_environment(None), tmp_path)
        assert ours["result"] == plain["result"] == theirs["result"]
        return
    # One message, folding every invocation of the instruction: the planted one alone.
    (error,) = errors
    assert error["id"] == scenario.gpuav_id
    for pattern in scenario.expected:
        assert re.search(pattern, error["text"]), (pattern, error["text"])
    assert "more invocations" not in error["text"]


@pytest.mark.parametrize("options", [(), ("lto",), ("independent",), ("independent", "lto")])
def test_khronos_below_says_nothing_of_the_linked_libraries(
    options: tuple[str, ...],
    program: tuple[Path, dict[str, Path]],
    run_stacked: Runner,  # noqa: F811
) -> None:
    """gpuav's set (or, for independent-sets layouts, its pushed address) keeps the
    libraries' layouts and the link's compatible: the Khronos layer 1.4.309 below gpuav says
    nothing of the link that it does not say of the app alone, and the bug is still found."""
    argv = _argv(program, "graphics", ("1", "1", "1", *options))
    alone = run_stacked(argv, gpuav=False)
    stacked = run_stacked(argv)
    assert stacked.findings() == alone.findings() == {}
    assert [m["id"] for m in stacked.messages if m["severity"] >= 0x1000] == [DRAW_RANGE_ID]


@pytest.mark.parametrize("reach", ["set", "pushed_address"])
def test_library_stages_instrumented_are_valid(
    reach: str, program: tuple[Path, dict[str, Path]]
) -> None:
    """The four library stages as the layer instruments them (through gpuav's set, or the
    pushed address that wide and independent-sets layouts use) are valid SPIR-V for spirv-val
    and spirv-val 2025.1."""
    _, shaders = program
    options = {} if reach == "set" else {"context_address": PushConstantAddress(248)}
    for name, path in shaders.items():
        data = path.read_bytes()
        words = [int.from_bytes(data[at : at + 4], "little") for at in range(0, len(data), 4)]
        result = instrument_module(
            read(words), shader_id=3, descriptor_set=7, descriptor_state=True,
            **options,  # type: ignore[arg-type]
        )  # fmt: skip
        assert result.findings.accesses or result.buffer_findings.accesses, name
        instrumented = write(result.module)
        for validate in (spirv_val, newer_spirv_val):
            accepted, output = validate(instrumented, "vulkan1.2")
            assert accepted, name + output + disassemble(instrumented)
