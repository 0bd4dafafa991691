"""Ray-tracing and mesh pipelines on lavapipe, side by side with the Khronos layer 1.4.309.

``apps/ray_tracing_app.c`` is a glTF viewer's ray tracer in small (a triangle in a BLAS, a
TLAS, ray generation, miss, and a closest-hit shader reading its material from a bindless
runtime array of storage buffers); ``apps/mesh_app.c`` draws with task and mesh shaders that
read a bindless palette array and a shape buffer and pass colors through the task payload.
Each planted bug fires in one invocation, so the message must name exactly it: the launch ID
of a ray-tracing stage, the workgroup and local invocation of a task or mesh shader, with the
source line. Correct twins are silent under both layers and compute what they compute without
one. Where the Khronos layer 1.4.309 stands: it finds the out-of-bounds descriptor indices
(as uninitialized descriptors, VUID-…-None-08114) and the ray generation and mesh buffer
overruns; it misses the buffer overruns through the bindless arrays (closest hit, task) and
the task-payload index (``khronos_id=None``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from gpuav.report.json_report import report_schema
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import (
    APPS,
    app_environment,
    error_messages,
    run_c_program,
)
from tests.layer.test_khronos_below import NewerKhronos, newer_khronos  # noqa: F401
from tests.shaders.glsl import compile_glsl
from tests.workflow.programs import gpuav_run

pytestmark = pytest.mark.vulkan

RAY_TRACING_SHADERS = {
    "gen.rgen": """#version 460
#extension GL_EXT_ray_tracing : require
layout(location = 0) rayPayloadEXT uint payload;
layout(set = 0, binding = 0) uniform accelerationStructureEXT scene;
layout(set = 0, binding = 1) buffer Image { uint pixels[]; } image;
layout(push_constant) uniform Push { uint material; int index; int pixel; } push;
void main() {
    vec2 uv = (vec2(gl_LaunchIDEXT.xy) + 0.5) / vec2(gl_LaunchSizeEXT.xy) * 2.0 - 1.0;
    payload = 0u;
    traceRayEXT(scene, gl_RayFlagsOpaqueEXT, 0xFF, 0, 0, 0, vec3(uv, -1.0), 0.0,
                vec3(0.0, 0.0, 1.0), 10.0, 0);
    uint at = gl_LaunchIDEXT.y * gl_LaunchSizeEXT.x + gl_LaunchIDEXT.x;
    if (gl_LaunchIDEXT.xy == uvec2(3, 2)) at += uint(push.pixel);
    image.pixels[at] = payload;
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
#extension GL_EXT_nonuniform_qualifier : require
layout(location = 0) rayPayloadInEXT uint payload;
layout(set = 0, binding = 2) readonly buffer Material { uint values[]; } materials[];
layout(push_constant) uniform Push { uint material; int index; int pixel; } push;
void main() {
    bool chosen = gl_LaunchIDEXT.xy == uvec2(2, 1);
    uint material = chosen ? push.material : 1u;
    int index = chosen ? push.index : 2;
    payload = materials[nonuniformEXT(material)].values[index] + 1000u;
}
""",
}
# A closest-hit shader that prints, in the ray tracer's place (debugPrintfEXT in its stage).
PRINTING_HIT = """#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_EXT_debug_printf : require
layout(location = 0) rayPayloadInEXT uint payload;
void main() {
    if (gl_LaunchIDEXT.xy == uvec2(2, 1))
        debugPrintfEXT("primitive %u at t %.1f", gl_PrimitiveID, gl_HitTEXT);
    payload = 5u;
}
"""
MESH_SHADERS = {
    "palette.task": """#version 460
#extension GL_EXT_mesh_shader : require
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 4) in;
struct Payload { uint task; uint colors[4]; };
taskPayloadSharedEXT Payload payload;
layout(set = 0, binding = 1) readonly buffer Palette { uint colors[]; } palettes[];
layout(push_constant) uniform Push { uint palette; int index; int corner; int lane; } push;
void main() {
    uint lane = gl_LocalInvocationIndex;
    bool chosen = gl_WorkGroupID.x == 1u && lane == 2u;
    uint palette = chosen ? push.palette : gl_WorkGroupID.x;
    int index = chosen ? push.index : int(lane);
    payload.colors[lane] = palettes[nonuniformEXT(palette)].colors[index];
    payload.task = gl_WorkGroupID.x;
    barrier();
    EmitMeshTasksEXT(1, 1, 1);
}
""",
    "shape.mesh": """#version 460
#extension GL_EXT_mesh_shader : require
layout(local_size_x = 1) in;
layout(triangles, max_vertices = 3, max_primitives = 1) out;
struct Payload { uint task; uint colors[4]; };
taskPayloadSharedEXT Payload payload;
layout(set = 0, binding = 0) readonly buffer Shape { vec2 corners[]; } shape;
layout(location = 0) perprimitiveEXT flat out uint primitive_color[];
layout(push_constant) uniform Push { uint palette; int index; int corner; int lane; } push;
void main() {
    SetMeshOutputsEXT(3, 1);
    bool chosen = payload.task == 1u;
    for (int i = 0; i < 3; ++i) {
        int at = chosen && i == 2 ? i + push.corner : i;
        vec2 corner = shape.corners[at] + vec2(float(payload.task), 0.0);
        gl_MeshVerticesEXT[i].gl_Position = vec4(corner, 0.0, 1.0);
    }
    gl_PrimitiveTriangleIndicesEXT[0] = uvec3(0, 1, 2);
    primitive_color[0] = payload.colors[chosen ? push.lane : 3];
}
""",
    "color.frag": """#version 460
#extension GL_EXT_mesh_shader : require
layout(location = 0) perprimitiveEXT flat in uint color;
layout(location = 0) out vec4 frag;
void main() {
    frag = unpackUnorm4x8(color);
}
""",
}


@dataclass(frozen=True)
class Scenario:
    app: str  # "ray_tracing" or "mesh"
    arguments: tuple[str, ...]
    gpuav_id: str | None  # None: silent, and the results of a run without layer
    expected: tuple[str, ...] = ()  # patterns gpuav's message must hold
    khronos_id: str | None = None  # what the Khronos layer 1.4.309 reports; None: nothing


RAY_TRACE = "Ray Trace Index 0 \\(vkCmdTraceRays{}KHR\\)"
HIT_LAUNCH = "Stage = Closest Hit\\. Launch ID \\(x, y, z\\) = \\(2, 1, 0\\)\\."
HIT_LINE = "At hit\\.rchit line 11\\."
TASK_INVOCATION = (
    "Stage = Task\\. Workgroup ID \\(x, y, z\\) = \\(1, 0, 0\\)\\. Local invocation index = 2\\."
)
MESH_INVOCATION = (
    "Stage = Mesh\\. Workgroup ID \\(x, y, z\\) = \\(0, 0, 0\\)\\. Local invocation index = 0\\."
)
SCENARIOS = {
    "ray_tracing_correct": Scenario("ray_tracing", ("0", "3", "0"), None),
    "ray_tracing_correct_indirect": Scenario("ray_tracing", ("0", "3", "0", "indirect"), None),
    "ray_tracing_correct_indirect2": Scenario("ray_tracing", ("0", "3", "0", "indirect2"), None),
    "closest_hit_descriptor_index": Scenario(
        "ray_tracing",
        ("5", "3", "0"),
        "GPUAV-descriptor-index-out-of-bounds",
        (
            "Index of 5 used to index descriptor array of length 3\\.",
            HIT_LINE,
            HIT_LAUNCH,
            RAY_TRACE.format(""),
            "Descriptor: materials \\(block Material\\), set 0, binding 2",
        ),
        "VUID-vkCmdTraceRaysKHR-None-08114",
    ),
    "closest_hit_descriptor_index_indirect2": Scenario(
        "ray_tracing",
        ("5", "3", "0", "indirect2"),
        "GPUAV-descriptor-index-out-of-bounds",
        (HIT_LAUNCH, RAY_TRACE.format("Indirect2")),
        "VUID-vkCmdTraceRaysIndirect2KHR-None-08114",
    ),
    "closest_hit_buffer_overrun": Scenario(
        "ray_tracing",
        ("0", "4", "0"),
        "VUID-vkCmdTraceRaysKHR-storageBuffers-06936",
        (
            "storage buffer read: 4 bytes at offset 16 .* past the end of the 16 bytes bound",
            "Buffer 'material 0'",
            HIT_LINE,
            HIT_LAUNCH,
        ),
    ),
    "ray_generation_buffer_overrun": Scenario(
        "ray_tracing",
        ("0", "3", "5"),
        "VUID-vkCmdTraceRaysKHR-storageBuffers-06936",
        (
            "storage buffer write: 4 bytes at offset 64 .* past the end of the 64 bytes bound",
            "Buffer 'image'",
            "At gen\\.rgen line 14\\.",
            "Stage = Ray Generation\\. Launch ID \\(x, y, z\\) = \\(3, 2, 0\\)\\.",
        ),
        "VUID-vkCmdTraceRaysKHR-storageBuffers-06936",
    ),
    "ray_generation_buffer_overrun_indirect": Scenario(
        "ray_tracing",
        ("0", "3", "5", "indirect"),
        "VUID-vkCmdTraceRaysIndirectKHR-storageBuffers-06936",
        (RAY_TRACE.format("Indirect"),),
        "VUID-vkCmdTraceRaysIndirectKHR-storageBuffers-06936",
    ),
    "mesh_correct": Scenario("mesh", ("1", "2", "0", "1"), None),
    "mesh_correct_indirect": Scenario("mesh", ("1", "2", "0", "1", "indirect"), None),
    "task_descriptor_index": Scenario(
        "mesh",
        ("5", "2", "0", "1"),
        "GPUAV-descriptor-index-out-of-bounds",
        (
            "Index of 5 used to index descriptor array of length 2\\.",
            "At palette\\.task line 14\\.",
            TASK_INVOCATION,
            "Draw Index 0 \\(vkCmdDrawMeshTasksEXT\\)",
        ),
        "VUID-vkCmdDrawMeshTasksEXT-None-08114",
    ),
    "task_buffer_overrun": Scenario(
        "mesh",
        ("1", "4", "0", "1"),
        "VUID-vkCmdDrawMeshTasksEXT-storageBuffers-06936",
        (
            "storage buffer read: 4 bytes at offset 16 .* past the end of the 16 bytes bound",
            "Buffer 'palette 1'",
            "At palette\\.task line 14\\.",
            TASK_INVOCATION,
        ),
    ),
    "mesh_buffer_overrun": Scenario(
        "mesh",
        ("1", "2", "1", "1"),
        "VUID-vkCmdDrawMeshTasksEXT-storageBuffers-06936",
        (
            "storage buffer read: 8 bytes at offset 24 .* past the end of the 24 bytes bound",
            "Buffer 'shape'",
            "At shape\\.mesh line 15\\.",
            MESH_INVOCATION,
        ),
        "VUID-vkCmdDrawMeshTasksEXT-storageBuffers-06936",
    ),
    "mesh_buffer_overrun_indirect": Scenario(
        "mesh",
        ("1", "2", "1", "1", "indirect"),
        "VUID-vkCmdDrawMeshTasksIndirectEXT-storageBuffers-06936",
        ("Draw Index 0 \\(vkCmdDrawMeshTasksIndirectEXT\\)", MESH_INVOCATION),
        "VUID-vkCmdDrawMeshTasksIndirectEXT-storageBuffers-06936",
    ),
    "mesh_task_payload_index": Scenario(
        "mesh",
        ("1", "2", "0", "4"),
        "GPUAV-local-array-index-out-of-bounds",
        (
            "Index 4 \\(one past the end\\) out of bounds of `payload.colors` \\(uint\\[4\\]\\) in "
            "task payload variable `payload`",
            "At shape\\.mesh line 19\\.",
            MESH_INVOCATION,
        ),
    ),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Each app with its shaders' paths (compiled with -g, for the source lines)."""
    folder = tmp_path_factory.mktemp("ray_tracing_mesh")
    printing = {**RAY_TRACING_SHADERS, "printing.rchit": PRINTING_HIT}
    del printing["hit.rchit"]
    found = {}
    for name, app, shaders in (
        ("ray_tracing", "ray_tracing", RAY_TRACING_SHADERS),
        ("ray_tracing_printf", "ray_tracing", printing),
        ("mesh", "mesh", MESH_SHADERS),
    ):
        program = compile_c_program(folder / app, [APPS / f"{app}_app.c"])
        paths = []
        for file_name, source in shaders.items():
            words = compile_glsl(
                source, file_name.rsplit(".", 1)[1], target_env="vulkan1.2", debug="g",
                source_name=file_name,
            )  # fmt: skip
            path = folder / f"{file_name}.spv"
            path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
            paths.append(str(path))
        found[name] = [str(program), *paths]
    return found


@pytest.mark.parametrize("name", SCENARIOS)
def test_gpuav_names_the_invocation_and_khronos_stands_where_the_docstring_says(
    name: str,
    programs: dict[str, list[str]],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = SCENARIOS[name]
    argv = [*programs[scenario.app], *scenario.arguments]
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


def test_json_report_names_launch_ids_and_workgroups(
    programs: dict[str, list[str]], tmp_path: Path
) -> None:
    invocations = {}
    for name in ("closest_hit_buffer_overrun", "task_descriptor_index"):
        scenario = SCENARIOS[name]
        report = tmp_path / f"{name}.json"
        gpuav_run(["--json", str(report)], [*programs[scenario.app], *scenario.arguments], tmp_path)
        content = json.loads(report.read_text())
        jsonschema.validate(content, report_schema())
        (error,) = [m for m in content["messages"] if m["severity"] == "error"]
        invocations[name] = error["invocation"]
    assert invocations == {
        "closest_hit_buffer_overrun": {"stage": "closest-hit", "launch_id": [2, 1, 0]},
        "task_descriptor_index": {
            "stage": "task",
            "workgroup_id": [1, 0, 0],
            "local_invocation_index": 2,
        },
    }


def test_printf_in_a_closest_hit_shader_names_its_launch(
    programs: dict[str, list[str]], layer_folder: Path, tmp_path: Path
) -> None:
    argv = [*programs["ray_tracing_printf"], "0", "3", "0"]
    ours = run_c_program(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    messages = ours["messages"]
    assert isinstance(messages, list)
    (line,) = [m["text"] for m in messages if m["id"] == "GPUAV-debug-printf"]
    assert re.fullmatch(
        "DEBUG-PRINTF in Ray Trace Index 0 \\(vkCmdTraceRaysKHR\\), "
        "Command buffer \\(0x[0-9a-f]+\\), Closest Hit, launch \\(2, 1, 0\\), "
        "printing\\.rchit line 7 \\| primitive 0 at t 1\\.0",
        line,
    ), line
    assert ours["result"] == run_c_program(argv, app_environment(None), tmp_path)["result"]
