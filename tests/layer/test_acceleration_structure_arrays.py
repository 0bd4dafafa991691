"""Indices into arrays of acceleration structures, from ray queries and ray traces (issue 16).

``apps/ray_query_app.c`` keeps two top-level acceleration structures in a descriptor array
(``uniform accelerationStructureEXT scenes[2]``) and picks one per invocation: a compute
shader starts a ray query (VK_KHR_ray_query, outside any ray-tracing stage) on
``scenes[scene]``, and a ray generation shader traces ``scenes[scene]``; both take the ray's
origin from a storage buffer. One invocation (2, 1) takes its scene and ray from push
constants, for the planted bugs: a scene index past the array, a scene never written, a ray
origin read past the buffer. Each is reported once, with the stage words and the source line,
and the access is skipped: a skipped trace leaves the payload as it was, a skipped query start
starts the query on no acceleration structure, so that it finds nothing (an unstarted query is
undefined). The correct twins are silent and compute what they compute without a layer.

Where the Khronos layer 1.4.309 stands (``khronos_id``): it finds the unwritten scene
(VUID-…-None-08114) and the ray origin overruns (storageBuffers-06936), and misses the scene
index past the array in both stages.
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
from gpuav.spirv.grammar import Op
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import (
    APPS,
    app_environment,
    error_messages,
    run_c_program,
)
from tests.layer.test_khronos_below import NewerKhronos, newer_khronos  # noqa: F401
from tests.shaders.glsl import compile_glsl
from tests.validate.asm import newer_spirv_val, spirv_val

pytestmark = pytest.mark.vulkan

DECLARATIONS = """layout(set = 0, binding = 0) uniform accelerationStructureEXT scenes[2];
layout(set = 0, binding = 1) buffer Image { uint pixels[]; } image;
layout(set = 0, binding = 2) readonly buffer Rays { vec4 origins[]; } rays;
layout(push_constant) uniform Push { int scene; int pixel; int ray; } push;
const vec3 ahead = vec3(0.0, 0.0, 1.0);"""
SHADERS = {
    "query.comp": f"""#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 4, local_size_y = 4) in;
{DECLARATIONS}
void main() {{
    uint at = gl_LocalInvocationIndex;
    bool chosen = gl_LocalInvocationID.xy == uvec2(2, 1);
    int scene = chosen ? push.scene : 0;
    int ray = chosen ? push.ray : int(at);
    vec3 origin = rays.origins[ray].xyz;
    rayQueryEXT query;
    rayQueryInitializeEXT(query, scenes[scene], 0u, 0xFF, origin, 0.0, ahead, 9.0);
    while (rayQueryProceedEXT(query)) {{}}
    bool hit = rayQueryGetIntersectionTypeEXT(query, true) ==
               gl_RayQueryCommittedIntersectionTriangleEXT;
    image.pixels[at + (chosen ? uint(push.pixel) : 0u)] = hit ? 10u + uint(scene) : 1u;
}}
""",
    "gen.rgen": f"""#version 460
#extension GL_EXT_ray_tracing : require
layout(location = 0) rayPayloadEXT uint payload;
{DECLARATIONS}
void main() {{
    uint at = gl_LaunchIDEXT.y * gl_LaunchSizeEXT.x + gl_LaunchIDEXT.x;
    bool chosen = gl_LaunchIDEXT.xy == uvec2(2, 1);
    int scene = chosen ? push.scene : 0;
    int ray = chosen ? push.ray : int(at);
    vec3 origin = rays.origins[ray].xyz;
    payload = 0u;
    traceRayEXT(scenes[scene], 0u, 0xFF, 0, 0, 0, origin, 0.0, ahead, 9.0, 0);
    image.pixels[at + (chosen ? uint(push.pixel) : 0u)] = payload + 10u * uint(scene);
}}
""",
    # One acceleration structure, not an array: with descriptor state, checked for being written
    # (its word read once per function).
    "single.comp": """#version 460
#extension GL_EXT_ray_query : require
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1) buffer Image { uint pixels[]; } image;
void main() {
    rayQueryEXT query;
    rayQueryInitializeEXT(query, scene, 0u, 0xFF, vec3(0.0), 0.0, vec3(0.0, 0.0, 1.0), 9.0);
    while (rayQueryProceedEXT(query)) {}
    image.pixels[gl_LocalInvocationIndex] = rayQueryGetIntersectionTypeEXT(query, true);
}
""",
    "miss.rmiss": """#version 460
#extension GL_EXT_ray_tracing : require
layout(location = 0) rayPayloadInEXT uint payload;
void main() {
    payload = 1u;
}
""",
    "hit.rchit": """#version 460
#extension GL_EXT_ray_tracing : require
layout(location = 0) rayPayloadInEXT uint payload;
void main() {
    payload = 2u;
}
""",
}
# The chosen invocation's pixel: 7 of 16 (launch or local invocation (2, 1) is pixel 6, and
# ray 7 is the one that hits scene 1, whose triangle is moved one unit along x).
CHOSEN = 6


@dataclass(frozen=True)
class Scenario:
    mode: str  # "query" (compute) or "trace" (ray generation)
    arguments: tuple[str, str, str, str]  # WRITTEN SCENE PIXEL RAY
    gpuav_id: str | None  # None: silent, and the results of a run without a layer
    expected: tuple[str, ...] = ()  # patterns gpuav's message must hold
    khronos_id: str | None = None  # what the Khronos layer 1.4.309 reports; None: nothing
    chosen_result: str | None = None  # the chosen pixel once gpuav skipped the access
    # (a skipped trace: the payload stayed 0, 10 * scene; a skipped query: no hit, 1)


QUERY = (
    "Dispatch Index 0 \\(vkCmdDispatch\\)",
    "Stage = Compute\\. Global invocation ID \\(x, y, z\\) = \\(2, 1, 0\\)\\.",
)
TRACE = (
    "Ray Trace Index 0 \\(vkCmdTraceRaysKHR\\)",
    "Stage = Ray Generation\\. Launch ID \\(x, y, z\\) = \\(2, 1, 0\\)\\.",
)
SCENES = "Descriptor: scenes, set 0, binding 0\\."
QUERY_START, TRACE_CALL = "At query\\.comp line 16\\.", "At gen\\.rgen line 16\\."
QUERY_ORIGIN, TRACE_ORIGIN = "At query\\.comp line 14\\.", "At gen\\.rgen line 14\\."
PAST_THE_ARRAY = "Index of 2 used to index descriptor array of length 2\\."
UNWRITTEN = "Descriptor index 1 used to index descriptor array of length 2 is uninitialized\\."
RAYS = (
    "storage buffer read: 16 bytes at offset 256 .* past the end of the 256 bytes bound",
    "Buffer 'rays'",
)
SCENARIOS = {
    "query_correct": Scenario("query", ("2", "1", "0", "7"), None),
    "trace_correct": Scenario("trace", ("2", "1", "0", "7"), None),
    "query_scene_past_the_array": Scenario(
        "query",
        ("2", "2", "0", "7"),
        "GPUAV-descriptor-index-out-of-bounds",
        (PAST_THE_ARRAY, SCENES, QUERY_START, *QUERY),
        chosen_result="1",
    ),
    "trace_scene_past_the_array": Scenario(
        "trace",
        ("2", "2", "0", "7"),
        "GPUAV-descriptor-index-out-of-bounds",
        (PAST_THE_ARRAY, SCENES, TRACE_CALL, *TRACE),
        chosen_result="20",
    ),
    "query_scene_unwritten": Scenario(
        "query",
        ("1", "1", "0", "7"),
        "VUID-vkCmdDispatch-None-08114",
        (UNWRITTEN, SCENES, QUERY_START, *QUERY),
        "VUID-vkCmdDispatch-None-08114",
        chosen_result="1",
    ),
    "trace_scene_unwritten": Scenario(
        "trace",
        ("1", "1", "0", "7"),
        "VUID-vkCmdTraceRaysKHR-None-08114",
        (UNWRITTEN, SCENES, TRACE_CALL, *TRACE),
        "VUID-vkCmdTraceRaysKHR-None-08114",
        chosen_result="10",
    ),
    "query_ray_origin_overrun": Scenario(
        "query",
        ("2", "1", "0", "16"),
        "VUID-vkCmdDispatch-storageBuffers-06936",
        (*RAYS, QUERY_ORIGIN, *QUERY),
        "VUID-vkCmdDispatch-storageBuffers-06936",
    ),
    "trace_ray_origin_overrun": Scenario(
        "trace",
        ("2", "1", "0", "16"),
        "VUID-vkCmdTraceRaysKHR-storageBuffers-06936",
        (*RAYS, TRACE_ORIGIN, *TRACE),
        "VUID-vkCmdTraceRaysKHR-storageBuffers-06936",
    ),
}


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    """The app and its shaders (compiled with -g, for the source lines)."""
    folder = tmp_path_factory.mktemp("acceleration_structure_arrays")
    app = compile_c_program(folder / "ray_query_app", [APPS / "ray_query_app.c"])
    shaders = {}
    for name, source in SHADERS.items():
        words = compile_glsl(
            source, name.rsplit(".", 1)[1], target_env="vulkan1.2", debug="g", source_name=name
        )
        path = folder / f"{name}.spv"
        path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        shaders[name] = path
    return app, shaders


def _argv(program: tuple[Path, dict[str, Path]], scenario: Scenario) -> list[str]:
    app, shaders = program
    names = ["query.comp"] if scenario.mode == "query" else ["gen.rgen", "miss.rmiss", "hit.rchit"]
    return [str(app), scenario.mode, *(str(shaders[name]) for name in names), *scenario.arguments]


@pytest.mark.parametrize("name", SCENARIOS)
def test_structure_index_checked_and_khronos_stands_where_the_docstring_says(
    name: str,
    program: tuple[Path, dict[str, Path]],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = SCENARIOS[name]
    argv = _argv(program, scenario)
    ours = run_c_program(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    theirs = run_c_program(
        newer_khronos.command(argv), newer_khronos.gpu_assisted_environment(), tmp_path
    )
    khronos_ids = {m["id"] for m in error_messages(theirs)}
    assert khronos_ids == ({scenario.khronos_id} if scenario.khronos_id else set()), khronos_ids
    errors = error_messages(ours)
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
    if scenario.chosen_result is not None:
        result = ours["result"]
        assert isinstance(result, str)
        assert result.split()[CHOSEN] == scenario.chosen_result, result


@pytest.mark.parametrize("reach", ["set", "pushed_address"])
def test_structure_arrays_instrumented_are_valid(
    reach: str, program: tuple[Path, dict[str, Path]]
) -> None:
    """The ray query and the trace on ``scenes[scene]`` get their index checked, a single
    acceleration structure its being written (with descriptor state), a skipped query start
    starts on the null acceleration structure, and the instrumented modules (gpuav's set or the
    pushed address) pass spirv-val and spirv-val 2025.1."""
    _, shaders = program
    options = {} if reach == "set" else {"context_address": PushConstantAddress(248)}
    cases = [("query.comp", False), ("gen.rgen", False)]
    cases += [(name, True) for name in ("query.comp", "gen.rgen", "single.comp")]
    for name, descriptor_state in cases:
        data = shaders[name].read_bytes()
        words = [int.from_bytes(data[at : at + 4], "little") for at in range(0, len(data), 4)]
        result = instrument_module(
            read(words), shader_id=3, descriptor_set=7, descriptor_state=descriptor_state,
            **options,  # type: ignore[arg-type]
        )  # fmt: skip
        (access,) = result.findings.accesses
        assert access.kind == "acceleration structure", name
        assert result.findings.unchecked == [], name
        empty_starts = [
            instruction
            for function in result.module.functions
            for block in function.blocks
            for instruction in block.instructions
            if instruction.opcode == Op.ConvertUToAccelerationStructureKHR
        ]
        assert len(empty_starts) == (name != "gen.rgen"), name
        instrumented = write(result.module)
        for validate in (spirv_val, newer_spirv_val):
            accepted, output = validate(instrumented, "vulkan1.2")
            assert accepted, name + output + disassemble(instrumented)
