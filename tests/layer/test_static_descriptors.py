"""Descriptors a pipeline statically uses but no invocation reached (VUID-vkCmd*-None-08114
holds for every descriptor of a statically used binding without PARTIALLY_BOUND), through the
real layer on lavapipe with ``apps/descriptor_app.c``: the layer reports them at read-back,
once, unless the shader already reported the binding (then only the shader's message, with
its line, is given). Side by side with the Khronos layer 1.4.309, which reports them too."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuav.layer.static_descriptors import statically_used
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, app_environment, parse_c_output
from tests.layer.test_khronos_below import NewerKhronos, newer_khronos  # noqa: F401
from tests.shaders.glsl import compile_glsl

pytestmark = pytest.mark.vulkan

DISPATCH_ID = "VUID-vkCmdDispatch-None-08114"
HEADER = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 1) buffer Out { uint o[16]; } o;
"""
# name -> (descriptor_app TYPE, COUNT, GLSL after the header)
SHADERS = {
    # The read sits behind a test that is false (o.o[15] is 0): never reached.
    "unreached_buffer": (
        "storage_buffer",
        1,
        "layout(set = 0, binding = 0) buffer Data { uint v[]; } data;\n"
        "void main() { if (o.o[15] == 7u) o.o[0] = data.v[1]; o.o[1] = 5u; }\n",
    ),
    "unreached_image": (
        "sampled_image",
        1,
        "layout(set = 0, binding = 0) uniform usampler2D image;\n"
        "void main() {\n"
        "    if (o.o[15] == 7u) o.o[0] = texelFetch(image, ivec2(0), 0).x;\n"
        "    o.o[1] = 5u;\n"
        "}\n",
    ),
    "reached_buffer": (
        "storage_buffer",
        1,
        "layout(set = 0, binding = 0) buffer Data { uint v[]; } data;\n"
        "void main() { o.o[0] = data.v[1]; }\n",
    ),
}


@pytest.fixture(scope="module")
def descriptor_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("static_descriptor_app")
    return compile_c_program(folder / "descriptor_app", [APPS / "descriptor_app.c"])


@pytest.fixture(scope="module")
def shader(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    folder = tmp_path_factory.mktemp("static_descriptor_shaders")

    def compile_(name: str) -> Path:
        path = folder / f"{name}.comp.spv"
        if not path.exists():
            words = compile_glsl(HEADER + SHADERS[name][2], "comp", debug="g")
            path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        return path

    return compile_


def _argv(
    app: Path, shader: Callable[[str], Path], name: str, mode: str, options: str
) -> list[str]:
    kind, count, _ = SHADERS[name]
    return [str(app), str(shader(name)), kind, str(count), mode, "", options]


def _errors(stdout: str) -> list[dict[str, str]]:
    return [m for m in parse_c_output(stdout)["messages"] if m["severity"] >= 0x1000]


def _run(argv: list[str], layer_folder: Path | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=app_environment(layer_folder, instrumenter=None), cwd=cwd,
        capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip


def test_bindings_a_shader_statically_uses() -> None:
    words = compile_glsl(HEADER + SHADERS["unreached_image"][2], "comp", debug="g")
    used = statically_used(tuple(words))
    assert set(used) == {(0, 0), (0, 1)}
    assert used[(0, 0)].name == "image" and used[(0, 0)].length == 1


@pytest.mark.parametrize("name", ["unreached_buffer", "unreached_image"])
def test_unreached_unwritten_descriptor_is_reported_once(
    descriptor_app: Path, shader: Callable[[str], Path], layer_folder: Path, tmp_path: Path,
    name: str,
) -> None:  # fmt: skip
    done = _run(
        _argv(descriptor_app, shader, name, "unwritten", "resubmit"), layer_folder, tmp_path
    )
    assert done.returncode == 0
    (error,) = _errors(done.stdout)  # said once over both submits
    assert error["id"] == DISPATCH_ID
    text = error["text"]
    wanted = "'data'" if name == "unreached_buffer" else "'image'"
    assert f"The descriptor at {wanted}, set 0, binding 0 is uninitialized" in text
    assert "statically uses that binding" in text
    assert "Dispatch Index 0 (vkCmdDispatch)" in text
    assert parse_c_output(done.stdout)["result"].split()[:2] == ["0", "5"]


def test_reached_descriptor_is_reported_by_the_shader_only(
    descriptor_app: Path, shader: Callable[[str], Path], layer_folder: Path, tmp_path: Path
) -> None:
    argv = _argv(descriptor_app, shader, "reached_buffer", "unwritten", "")
    (error,) = _errors(_run(argv, layer_folder, tmp_path).stdout)
    assert "line 5" in error["text"]  # the shader's message, with its line


@pytest.mark.parametrize("name", list(SHADERS))
def test_written_twins_are_silent(
    descriptor_app: Path, shader: Callable[[str], Path], layer_folder: Path, tmp_path: Path,
    name: str,
) -> None:  # fmt: skip
    argv = _argv(descriptor_app, shader, name, "written", "rerecord")
    done = _run(argv, layer_folder, tmp_path)
    plain = _run(argv, None, tmp_path)
    assert done.returncode == plain.returncode == 0
    assert _errors(done.stdout) == []
    assert parse_c_output(done.stdout)["result"] == parse_c_output(plain.stdout)["result"]


@pytest.mark.parametrize("name", ["unreached_buffer", "unreached_image"])
def test_khronos_reports_it_too(
    descriptor_app: Path,
    shader: Callable[[str], Path],
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
    name: str,
) -> None:
    environment = newer_khronos.gpu_assisted_environment()
    done = subprocess.run(
        newer_khronos.command(_argv(descriptor_app, shader, name, "unwritten", "")),
        env=environment, cwd=tmp_path, capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    assert DISPATCH_ID in {m["id"] for m in _errors(done.stdout)}
