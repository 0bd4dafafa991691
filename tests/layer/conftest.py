"""Fixtures for the layer tests: the built layer, compiled test shaders, and runners for the
test apps (``apps/``), which always run as subprocesses loading the layer through the loader.

Apps run with a clean environment for everything gpuav or the loader reads, in a temporary
working directory (so no stray ``vk_layer_settings.txt`` applies). Shaders that write their
own error records need ``GPUAV_INSTRUMENTER`` set to ``tests.layer.fake_instrument``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gpuav.layer.native.build import LAYER_NAME, layer_dir
from tests.apps_common.build import compile_c_program

HERE = Path(__file__).parent
REPOSITORY = HERE.parent.parent
APPS = HERE / "apps"
SHADERS = HERE / "shaders"
FAKE_INSTRUMENTER = "tests.layer.fake_instrument:instrument"
VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"
APP_TIMEOUT = 180

# Variables of the caller's environment that would change what an app run means.
_CLEARED_PREFIXES = ("GPUAV_", "VK_INSTANCE_LAYERS", "VK_LAYER_", "VK_ADD_LAYER_PATH", "VK_LOADER")


@dataclass
class AppRun:
    returncode: int
    stdout: str
    stderr: str
    result: dict[str, Any] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.result.get("messages", []))

    def ids(self) -> list[str]:
        return [message["id"] for message in self.messages]

    def with_id(self, message_id: str) -> list[dict[str, Any]]:
        return [message for message in self.messages if message["id"] == message_id]

    def validation_errors(self) -> list[dict[str, Any]]:
        """Messages of the Khronos validation layer (VUIDs and its UNASSIGNED checks)."""
        return [
            message
            for message in self.messages
            if message["id"].startswith("VUID-")
            or message["text"].startswith(("Validation Error", "Validation Warning"))
        ]


def app_environment(
    layer_folder: Path | None,
    *,
    enable: bool = True,
    instrumenter: str | None = FAKE_INSTRUMENTER,
    layers: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Environment of one app run: the layer loaded when ``layer_folder`` is given."""
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(_CLEARED_PREFIXES)
    }
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(REPOSITORY), environment.get("PYTHONPATH", "")])
    )
    names = list(layers)
    if layer_folder is not None:
        environment["VK_ADD_LAYER_PATH"] = str(layer_folder)
        names.insert(0, LAYER_NAME)
        if enable:
            environment["GPUAV_ENABLE"] = "1"
        if instrumenter:
            environment["GPUAV_INSTRUMENTER"] = instrumenter
    if names:
        environment["VK_INSTANCE_LAYERS"] = ":".join(names)
    environment.update(extra or {})
    return environment


def _run(
    command: list[str], environment: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, env=environment, cwd=cwd, capture_output=True, text=True, timeout=APP_TIMEOUT
    )


@pytest.fixture(scope="session")
def layer_folder() -> Path:
    """The built layer (the first run compiles it into the cache)."""
    return layer_dir()


@pytest.fixture(scope="session")
def spirv(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """Compile a shader of ``shaders/`` with glslangValidator (once per session)."""
    if shutil.which("glslangValidator") is None:
        pytest.fail("glslangValidator is missing (Debian: glslang-tools)")
    folder = tmp_path_factory.mktemp("spirv")
    compiled: dict[str, Path] = {}

    def compile_shader(name: str) -> Path:
        if name not in compiled:
            output = folder / f"{name}.spv"
            subprocess.run(
                ["glslangValidator", "-V", "--target-env", "vulkan1.1", "-o", str(output),
                 str(SHADERS / name)],
                check=True, capture_output=True, text=True,
            )  # fmt: skip
            compiled[name] = output
        return compiled[name]

    return compile_shader


RunPython = Callable[..., AppRun]


@pytest.fixture
def run_python_app(tmp_path: Path) -> RunPython:
    """Run ``apps/vk_app.py`` with arguments; keyword options go to ``app_environment``."""

    def run(
        arguments: list[str], layer_folder: Path | None = None, check: bool = True, **options: Any
    ) -> AppRun:
        environment = app_environment(layer_folder, **options)
        completed = _run(
            [sys.executable, str(APPS / "vk_app.py"), *arguments], environment, tmp_path
        )
        run_result = AppRun(completed.returncode, completed.stdout, completed.stderr)
        if check:
            assert completed.returncode == 0, completed.stderr[-4000:]
        if completed.returncode == 0:
            run_result.result = json.loads(completed.stdout.strip().splitlines()[-1])
        return run_result

    return run


@pytest.fixture(scope="session")
def c_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C test app, compiled with gcc against the system's Vulkan headers."""
    return compile_c_program(tmp_path_factory.mktemp("c_app") / "c_app", [APPS / "c_app.c"])


RunC = Callable[..., AppRun]


def parse_c_output(stdout: str) -> dict[str, Any]:
    result: dict[str, Any] = {"messages": []}
    for line in stdout.splitlines():
        key, _, value = line.partition(" ")
        if key == "message":
            severity, message_id, text = value.split("|", 2)
            result["messages"].append({"severity": int(severity), "id": message_id, "text": text})
        elif key:
            result[key] = value
    return result


def run_c_program(command: list[str], environment: dict[str, str], cwd: Path) -> dict[str, Any]:
    """The parsed output of a C test program, which must exit 0."""
    done = subprocess.run(
        command, env=environment, cwd=cwd, capture_output=True, text=True, timeout=APP_TIMEOUT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return parse_c_output(done.stdout)


def error_messages(parsed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The messages of error severity in a C test program's parsed output."""
    messages = parsed["messages"]
    assert isinstance(messages, list)
    return [m for m in messages if m["severity"] >= 0x1000]


@pytest.fixture
def run_c_app(c_app: Path, spirv: Callable[[str], Path], tmp_path: Path) -> RunC:
    """Run the C app on (compute, vertex, fragment) shaders, with extra arguments."""

    def run(
        shaders: tuple[str, str, str],
        arguments: list[str] = [],  # noqa: B006  (never mutated)
        layer_folder: Path | None = None,
        **options: Any,
    ) -> AppRun:
        environment = app_environment(layer_folder, **options)
        paths = [str(spirv(name)) for name in shaders]
        completed = _run([str(c_app), *paths, *arguments], environment, tmp_path)
        assert completed.returncode == 0, completed.stderr[-4000:]
        return AppRun(0, completed.stdout, completed.stderr, parse_c_output(completed.stdout))

    return run
