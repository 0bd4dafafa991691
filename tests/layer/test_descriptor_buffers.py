"""Descriptors in descriptor buffers (VK_EXT_descriptor_buffer, issue 16), through the real
layer on lavapipe with ``apps/descriptor_buffer_app.c``: a compute shader indexes an array of
four storage buffers whose descriptors were written with vkGetDescriptorEXT into a mapped
descriptor buffer. Planted bugs: an index past the array, a read past the range a descriptor
was got with, a descriptor never written. Each is reported with the descriptor and the line,
and the access is skipped; correct twins are silent and compute what they compute without the
layer. The descriptor buffer is mapped with vkMapMemory or vkMapMemory2KHR, the offsets set
with vkCmdSetDescriptorBufferOffsetsEXT or vkCmdSetDescriptorBufferOffsets2EXT. gpuav reaches
its own buffers through the pushed context address, so the Khronos layer 1.4.309 beneath it
finds nothing in how it binds them; the Khronos layer's own GPU-AV turns its shader
instrumentation off when VK_EXT_descriptor_buffer is enabled, and finds none of the bugs."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuav.instrument.api import instrument_shader
from gpuav.instrument.descriptor_state import PushConstantAddress
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, app_environment, parse_c_output
from tests.layer.test_khronos_below import NewerKhronos, newer_khronos  # noqa: F401
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

SHADERS = {
    "read": """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; } data[4];
layout(set = 0, binding = 1) buffer Result { uint r[16]; } result;
layout(push_constant) uniform Push { int index; int word; } p;
void main() {
    result.r[0] = data[p.index].v[p.word];
    result.r[1] = 7;
}
""",
    "texel": """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 1) buffer Result { uint r[16]; } result;
layout(set = 0, binding = 2) uniform utextureBuffer texels[4];
layout(push_constant) uniform Push { int index; int word; } p;
void main() {
    result.r[0] = texelFetch(texels[p.index], p.word).x;
    result.r[1] = 7;
}
""",
    "image": """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 1) buffer Result { uint r[16]; } result;
layout(set = 0, binding = 3, r32ui) uniform readonly uimage2D images[4];
layout(push_constant) uniform Push { int index; int word; } p;
void main() {
    result.r[0] = imageLoad(images[p.index], ivec2(0, 0)).x;
    result.r[1] = 7;
}
""",
    # Combined image samplers: lavapipe keeps them in one array (the layer asks the device's
    # combinedImageSamplerDescriptorSingleArray).
    "sampled": """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 1) buffer Result { uint r[16]; } result;
layout(set = 0, binding = 4) uniform usampler2D samplers[4];
layout(push_constant) uniform Push { int index; int word; } p;
void main() {
    result.r[0] = texelFetch(samplers[p.index], ivec2(0, 0), 0).x;
    result.r[1] = 7;
}
""",
    # The views are 2D: a 3D image type does not fit them (VUID-vkCmdDispatch-viewType-07752).
    "image3d": """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 1) buffer Result { uint r[16]; } result;
layout(set = 0, binding = 3, r32ui) uniform readonly uimage3D images[4];
layout(push_constant) uniform Push { int index; int word; } p;
void main() {
    result.r[0] = imageLoad(images[p.index], ivec3(0, 0, 0)).x;
    result.r[1] = 7;
}
""",
    # Set 1 pushed (descriptorBufferPushDescriptors) beside set 0 in the descriptor buffer.
    "push": """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; } data[4];
layout(set = 1, binding = 0) buffer Result { uint r[16]; } result;
layout(push_constant) uniform Push { int index; int word; } p;
void main() {
    result.r[0] = data[p.index].v[p.word];
    result.r[1] = 7;
}
""",
    # A descriptor-buffer pipeline whose layout has no set at all: gpuav's set may not be
    # bound for it either (VUID-vkCmdDispatch-None-08115), so its layout, like every layout of
    # no sets on a device with descriptorBuffer on, reaches gpuav's buffers by address too.
    "no_sets": """#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 1) in;
layout(buffer_reference, std430) buffer Result { uint r[16]; };
layout(push_constant) uniform Push { int index; int word; Result result; } p;
void main() {
    uint local[4] = uint[4](10, 11, 12, 13);
    p.result.r[0] = local[p.index];
    p.result.r[1] = 7;
}
""",
}
# The read program as a fragment shader, drawn once over a 1x1 target.
GRAPHICS = {
    "frag": """#version 450
layout(set = 0, binding = 0) buffer Data { uint v[]; } data[4];
layout(set = 0, binding = 1) buffer Result { uint r[16]; } result;
layout(push_constant) uniform Push { int index; int word; } p;
layout(location = 0) out vec4 color;
void main() {
    result.r[0] = data[p.index].v[p.word];
    result.r[1] = 7;
    color = vec4(1.0);
}
""",
    "vert": """#version 450
void main() {
    vec2 position = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(position * 2.0 - 1.0, 0.0, 1.0);
}
""",
}
DESCRIPTORS = {
    "read": "Descriptor: data (block Data), set 0, binding 0.",
    "texel": "Descriptor: texels, set 0, binding 2.",
    "image": "Descriptor: images, set 0, binding 3.",
    "image3d": "Descriptor: images, set 0, binding 3.",
    "sampled": "Descriptor: samplers, set 0, binding 4.",
}
IMAGE_VALUE = 1234  # what the app clears its image to
NEVER_WRITTEN = (
    "It was never written (vkUpdateDescriptorSets, a copy, an update template, or "
    "vkGetDescriptorEXT into a descriptor buffer)"
)
# The buffer a short descriptor points at, found by its address (descriptor 2 of each array).
BUFFER_NAMED = "Buffer 'particles' (0x"
BUFFER_BOUND = "): written with offset 128, range 32, buffer size 256."
# (program, mode, index, word) -> (message id, what its text says)
PLANTED: dict[tuple[str, str, int, int], tuple[str, ...]] = {
    ("read", "written", 4, 1): (
        "GPUAV-descriptor-index-out-of-bounds",
        "Index of 4 used to index descriptor array of length 4. At read.comp line 7.",
    ),
    ("read", "short", 2, 10): (
        "VUID-vkCmdDispatch-storageBuffers-06936",
        "4 bytes at offset 40 of the buffer at descriptor (set 0, binding 0, index 2): bytes "
        "[40, 43] of which 4 lie past the end of the 32 bytes bound. At read.comp line 7.",
        BUFFER_NAMED,
    ),
    ("read", "unwritten", 3, 1): (
        "VUID-vkCmdDispatch-None-08116",
        "Descriptor index 3 is uninitialized. At read.comp line 7.",
        NEVER_WRITTEN,
    ),
    ("texel", "written", 4, 1): (
        "GPUAV-descriptor-index-out-of-bounds",
        "Index of 4 used to index descriptor array of length 4. At texel.comp line 7.",
    ),
    ("texel", "short", 2, 10): (
        "GPUAV-texel-buffer-out-of-bounds",
        "texel 10 of the view at descriptor (set 0, binding 2, index 2), which holds 8 texels "
        "(valid: 0 to 7). At texel.comp line 7.",
        BUFFER_NAMED,
    ),
    ("texel", "unwritten", 3, 1): (
        "VUID-vkCmdDispatch-None-08116",
        "Descriptor index 3 is uninitialized. At texel.comp line 7.",
        NEVER_WRITTEN,
    ),
    ("image", "written", 4, 0): (
        "GPUAV-descriptor-index-out-of-bounds",
        "Index of 4 used to index descriptor array of length 4. At image.comp line 7.",
    ),
    ("image", "unwritten", 3, 0): (
        "VUID-vkCmdDispatch-None-08116",
        "Descriptor index 3 used to index descriptor array of length 4 is uninitialized. At "
        "image.comp line 7.",
        NEVER_WRITTEN,
    ),
    ("sampled", "written", 4, 0): (
        "GPUAV-descriptor-index-out-of-bounds",
        "Index of 4 used to index descriptor array of length 4. At sampled.comp line 7.",
    ),
    ("sampled", "unwritten", 3, 0): (
        "VUID-vkCmdDispatch-None-08116",
        "Descriptor index 3 used to index descriptor array of length 4 is uninitialized. At "
        "sampled.comp line 7.",
        NEVER_WRITTEN,
    ),
    ("image3d", "written", 1, 0): (
        "VUID-vkCmdDispatch-viewType-07752",
        "The image view's type is VK_IMAGE_VIEW_TYPE_2D, but the shader's image type (its Dim "
        "and Arrayed) needs VK_IMAGE_VIEW_TYPE_3D. At image3d.comp line 7.",
    ),
}
# lavapipe crashes on an unwritten texel buffer or image descriptor, and past the last
# binding's array (one past any other array reads the next binding's first descriptor).
CRASHING = {("texel", "unwritten"), ("image", "unwritten"), ("sampled", "unwritten")}
CRASHING.add(("sampled", "written"))
# (program, mode, index, word, options): every access in bounds, in range and written when
# it runs.
CORRECT = [
    ("read", "written", 1, 3, ""),
    ("read", "written", 3, 15, "offset"),
    ("read", "short", 2, 7, ""),
    ("read", "unwritten", 2, 5, "offset"),
    ("read", "unwritten", 3, 1, "late"),
    ("read", "unwritten", 3, 1, "late,v2"),
    ("read", "written", 1, 3, "v2"),
    ("texel", "written", 1, 3, ""),
    ("texel", "short", 2, 7, "offset"),
    ("texel", "unwritten", 3, 1, "late"),
    ("push", "written", 1, 3, "push"),
    ("image", "written", 1, 0, ""),
    ("image", "unwritten", 2, 0, "offset"),
    ("sampled", "written", 1, 0, ""),
    ("sampled", "unwritten", 2, 0, "offset"),
]
KHRONOS_DISABLES = "VK_EXT_descriptor_buffer is enabled, but GPU-AV does not currently support"

Run = Callable[..., tuple[int, dict[str, Any]]]


@pytest.fixture(scope="module")
def descriptor_buffer_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("descriptor_buffer_app")
    return compile_c_program(folder / "descriptor_buffer_app", [APPS / "descriptor_buffer_app.c"])


@pytest.fixture(scope="module")
def shaders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("descriptor_buffer_shaders")
    paths = {}
    sources = [(name, "comp", text) for name, text in SHADERS.items()]
    sources += [(stage, stage, text) for stage, text in GRAPHICS.items()]
    for name, stage, text in sources:
        path = paths[name] = folder / f"{name}.{stage}.spv"
        words = compile_glsl(text, stage, debug="g", source_name=f"{name}.{stage}")
        path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
    return paths


def _argv(
    app: Path, shaders: dict[str, Path], program: str, mode: str, index: int, word: int,
    options: str,
) -> list[str]:  # fmt: skip
    """The app's command line; the "frag" program is drawn with the "vert" vertex shader."""
    argv = [str(app), str(shaders[program]), mode, str(index), str(word), options]
    return [*argv, str(shaders["vert"])] if program == "frag" else argv


@pytest.fixture
def run(
    descriptor_buffer_app: Path, shaders: dict[str, Path], layer_folder: Path, tmp_path: Path
) -> Run:
    """(exit status, parsed output) of one scenario, under gpuav unless ``layer`` is False."""

    def run_(
        program: str, mode: str, index: int, word: int, options: str = "", layer: bool = True
    ) -> tuple[int, dict[str, Any]]:
        argv = _argv(descriptor_buffer_app, shaders, program, mode, index, word, options)
        environment = app_environment(layer_folder if layer else None, instrumenter=None)
        done = subprocess.run(
            argv, env=environment, cwd=tmp_path, capture_output=True, text=True,
            timeout=APP_TIMEOUT,
        )  # fmt: skip
        return done.returncode, parse_c_output(done.stdout)

    return run_


def _errors(output: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in output["messages"] if m["severity"] >= 0x1000]


@pytest.mark.parametrize("program", ["read", "texel"])
def test_shader_reaching_gpuav_by_pushed_address_passes_spirv_val(program: str) -> None:
    """What the layer makes of the shader: no descriptor set of gpuav's (the pipeline may bind
    none beside its descriptor buffers), the context address pushed after the app's bytes."""
    words = compile_glsl(SHADERS[program], "comp", debug="g")
    checked = instrument_shader(
        words,
        shader_id=1,
        descriptor_set=7,
        descriptor_state=True,
        context_address=PushConstantAddress(120),
    )
    assert checked != words
    spirv_val(checked)


@pytest.mark.parametrize("options", ["", "offset", "v2"])
@pytest.mark.parametrize(("program", "mode", "index", "word"), list(PLANTED))
def test_planted_bug_is_reported_and_skipped(
    run: Run, program: str, mode: str, index: int, word: int, options: str
) -> None:
    status, output = run(program, mode, index, word, options)
    assert status == 0
    (error,) = _errors(output)
    message_id, *says = PLANTED[(program, mode, index, word)]
    assert error["id"] == message_id
    assert all(part in error["text"] for part in says)
    if BUFFER_NAMED in says:
        assert BUFFER_BOUND in error["text"]
    assert DESCRIPTORS[program] in error["text"]
    assert "Dispatch Index 0 (vkCmdDispatch)" in error["text"]
    assert "Stage = Compute" in error["text"]
    assert output["result"].split()[:2] == ["0", "7"]  # skipped; the rest ran
    assert output["messages"] == [error]  # no notice: nothing passed unchecked


@pytest.mark.parametrize(("program", "mode", "index", "word", "options"), CORRECT)
def test_correct_twin_is_silent_and_identical(
    run: Run, program: str, mode: str, index: int, word: int, options: str
) -> None:
    status, output = run(program, mode, index, word, options)
    plain_status, plain = run(program, mode, index, word, options, layer=False)
    assert status == plain_status == 0
    assert output["messages"] == []
    assert output["result"] == plain["result"]
    expected = IMAGE_VALUE if program in ("image", "sampled") else 100 * index + word
    assert output["result"].split()[0] == str(expected)


@pytest.mark.parametrize(("program", "mode"), sorted(CRASHING))
def test_no_crash_where_lavapipe_crashes_without_the_layer(
    run: Run, program: str, mode: str
) -> None:
    """A texel buffer or storage image past the array, or never written: lavapipe reads the
    bytes as a view."""
    (planted,) = [key for key in PLANTED if key[:2] == (program, mode)]
    status, _ = run(*planted, layer=False)
    assert status != 0
    status, output = run(*planted)
    assert status == 0
    assert [error["id"] for error in _errors(output)] == [PLANTED[planted][0]]


# (program, option) -> what the message says the descriptor names, and what went
GONE = {
    ("read", "destroyed"): "names VkBuffer 'particles' (0x",
    ("texel", "destroyed"): "names VkBuffer 'particles' (0x",
    ("image", "destroyed"): "names VkImageView (0x",
    ("sampled", "destroyed"): "names VkImageView (0x",
    ("read", "freed"): "names VkBuffer 'particles' (0x",
    ("texel", "freed"): "names VkBuffer 'particles' (0x",
}


@pytest.mark.parametrize(("program", "option"), list(GONE))
def test_descriptor_naming_a_destroyed_or_freed_object_is_reported(
    run: Run, program: str, option: str
) -> None:
    """The descriptor was written before its buffer or view was destroyed (or the buffer's
    memory freed); lavapipe alone reads what is left (freed memory: garbage)."""
    status, output = run(program, "written", 1, 0, option)
    assert status == 0
    (error,) = _errors(output)
    assert error["id"] == "VUID-vkCmdDispatch-None-08116"
    assert GONE[(program, option)] in error["text"]
    gone = "which was destroyed" if option == "destroyed" else "whose VkDeviceMemory (0x"
    assert gone in error["text"]
    assert DESCRIPTORS[program] in error["text"]
    assert output["result"].split()[:2] == ["0", "7"]


@pytest.mark.parametrize(("mode", "index", "word"), [k[1:] for k in PLANTED if k[0] == "read"])
def test_fragment_stage_of_a_graphics_pipeline_is_checked(
    run: Run, mode: str, index: int, word: int
) -> None:
    """The read program's planted bugs in a fragment shader of a graphics pipeline made with
    VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT, drawn once."""
    status, output = run("frag", mode, index, word)
    assert status == 0
    (error,) = _errors(output)
    message_id, *says = PLANTED[("read", mode, index, word)]
    assert error["id"] == message_id.replace("vkCmdDispatch", "vkCmdDraw")
    assert all(part.replace("read.comp", "frag.frag") in error["text"] for part in says)
    assert "Draw Index 0 (vkCmdDraw)" in error["text"]
    assert "Stage = Fragment" in error["text"]
    assert output["result"].split()[:2] == ["0", "7"]
    _, output = run("frag", "written", 1, 3)
    _, plain = run("frag", "written", 1, 3, layer=False)
    assert output["messages"] == [] and output["result"] == plain["result"]


def test_pushed_descriptors_beside_a_descriptor_buffer_are_checked(run: Run) -> None:
    _, output = run("push", "written", 1, 3, "push_short")
    (error,) = _errors(output)
    assert error["id"] == "VUID-vkCmdDispatch-storageBuffers-06936"
    assert (
        "write: 4 bytes at offset 4 of the buffer at descriptor (set 1, binding 0, index 0): "
        "bytes [4, 7] of which 4 lie past the end of the 4 bytes bound. At push.comp line 8."
    ) in error["text"]
    assert output["result"].split()[:2] == ["103", "0"]
    _, output = run("push", "unwritten", 3, 1, "push")
    assert [error["id"] for error in _errors(output)] == ["VUID-vkCmdDispatch-None-08116"]


def test_pipeline_of_no_sets_is_checked(run: Run) -> None:
    _, output = run("no_sets", "written", 4, 0, "no_sets")
    (error,) = _errors(output)
    assert error["id"] == "GPUAV-local-array-index-out-of-bounds"
    assert "At no_sets.comp line 8." in error["text"]
    assert output["result"].split()[:2] == ["0", "7"]
    _, output = run("no_sets", "written", 3, 0, "no_sets")
    _, plain = run("no_sets", "written", 3, 0, "no_sets", layer=False)
    assert output["messages"] == []
    assert output["result"] == plain["result"] and output["result"].split()[0] == "13"


def test_each_submission_reports(run: Run) -> None:
    _, output = run("read", "unwritten", 3, 1, "resubmit")
    assert [error["id"] for error in _errors(output)] == ["VUID-vkCmdDispatch-None-08116"] * 2


def test_unmapped_descriptor_buffer_checks_indices_only_and_says_so(run: Run) -> None:
    _, output = run("read", "unwritten", 3, 1, "unmap")
    assert _errors(output) == []  # its bytes cannot be read: not known to be unwritten
    (notice,) = [m for m in output["messages"] if m["id"] == "GPUAV-descriptor-buffer-unread"]
    assert "array indices are checked" in notice["text"]
    _, output = run("texel", "written", 4, 1, "unmap")
    assert [error["id"] for error in _errors(output)] == ["GPUAV-descriptor-index-out-of-bounds"]


def test_descriptor_buffer_written_by_a_copy_is_not_read_and_says_so(run: Run) -> None:
    """At submit the copy into the descriptor buffer has not run: its bytes there are zeros,
    which would read as never written (and skip every access)."""
    _, output = run("read", "written", 1, 3, "copied")
    _, plain = run("read", "written", 1, 3, "copied", layer=False)
    assert output["result"] == plain["result"] and output["result"].split()[0] == "103"
    assert [m["id"] for m in output["messages"]] == ["GPUAV-descriptor-buffer-unread"]
    assert "commands write" in output["messages"][0]["text"]
    _, output = run("read", "written", 4, 1, "copied")
    assert [error["id"] for error in _errors(output)] == ["GPUAV-descriptor-index-out-of-bounds"]


def _khronos_run(
    newer_khronos: NewerKhronos,  # noqa: F811
    argv: list[str],
    environment: dict[str, str],
    cwd: Path,
) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        newer_khronos.command(argv), env=environment, cwd=cwd, capture_output=True, text=True,
        timeout=APP_TIMEOUT,
    )  # fmt: skip
    return done.returncode, parse_c_output(done.stdout)


@pytest.mark.parametrize(("program", "mode", "index", "word"), list(PLANTED))
def test_khronos_gpu_av_turns_itself_off_and_finds_nothing(
    run: Run,
    descriptor_buffer_app: Path,
    shaders: dict[str, Path],
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
    program: str,
    mode: str,
    index: int,
    word: int,
) -> None:
    """Recorded: no report from the Khronos layer; where lavapipe crashes on the texel
    descriptor, it crashes under the Khronos layer too."""
    environment = newer_khronos.gpu_assisted_environment()
    argv = _argv(descriptor_buffer_app, shaders, program, mode, index, word, "")
    status, output = _khronos_run(newer_khronos, argv, environment, tmp_path)
    crashes = (program, mode) in CRASHING
    assert (status != 0) == crashes
    assert _errors(output) == []
    if not crashes:  # (a crash loses what the app had printed)
        assert any(KHRONOS_DISABLES in m["text"] for m in output["messages"])
        _, plain = run(program, mode, index, word, layer=False)
        assert output["result"] == plain["result"]  # what lavapipe does alone, unreported


BENEATH = [(*planted, "") for planted in PLANTED] + [
    ("no_sets", "written", 4, 0, "no_sets"),
    ("push", "written", 1, 3, "push_short"),
    ("frag", "written", 4, 1, ""),
]
BENEATH_IDS = {
    "frag": "GPUAV-descriptor-index-out-of-bounds",
    "no_sets": "GPUAV-local-array-index-out-of-bounds",
    "push": "VUID-vkCmdDispatch-storageBuffers-06936",
}


@pytest.mark.parametrize(("program", "mode", "index", "word", "options"), BENEATH)
def test_khronos_beneath_gpuav_finds_nothing_in_its_bindings(
    descriptor_buffer_app: Path,
    shaders: dict[str, Path],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
    program: str,
    mode: str,
    index: int,
    word: int,
    options: str,
) -> None:
    """No classic set in a descriptor-buffer layout (08008), none bound for a
    descriptor-buffer pipeline (08115), no other finding; gpuav still reports the bug."""
    environment = newer_khronos.environment(layer_folder, None, {})
    argv = _argv(descriptor_buffer_app, shaders, program, mode, index, word, options)
    status, output = _khronos_run(newer_khronos, argv, environment, tmp_path)
    assert status == 0
    (error,) = _errors(output)
    planted = PLANTED.get((program, mode, index, word), (BENEATH_IDS.get(program),))
    assert error["id"] == planted[0]
    assert "The Vulkan spec states" not in error["text"]
