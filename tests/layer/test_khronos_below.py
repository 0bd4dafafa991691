"""gpuav's own Vulkan usage is valid (issue 13): the Khronos validation layer 1.4.309 stacked
*beneath* gpuav, with core and synchronization validation on and its GPU-AV off, reports for
every app of ``apps/`` and for the demo only what the app alone causes.

The 1.4.309 layer is Debian 13's, fetched once by ``../shared/tools/newer-khronos.sh`` (or the
script ``GPUAV_NEWER_KHRONOS`` names); it needs Debian 13's glibc, so every app here runs under
Debian 13's dynamic loader, gpuav's layer library (linked to the venv's libpython) included.
gpuav's static shader check is off (``GPUAV_VALIDATE_SHADERS=0``): its findings carry VUIDs
too, and would read as the Khronos layer's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.layer.conftest import (
    APP_TIMEOUT,
    APPS,
    REPOSITORY,
    SHADERS,
    VALIDATION_LAYER,
    app_environment,
    parse_c_output,
)
from tests.layer.test_wild_apps import wild_app  # noqa: F401  (the compiled wild_app fixture)

pytestmark = pytest.mark.vulkan

KHRONOS_VERSION = "1.4.309"
FAKE = "tests.layer.fake_instrument:instrument"
FAKE_CONTEXT = "tests.layer.fake_context_instrument:instrument"
# Messages that are not the Khronos layer's findings: the loader's, the Khronos layer's own
# start-up notice, gpuav's.
NOT_FINDINGS = ("Loader Message", "WARNING-CreateInstance-status-message", "GPUAV-")
# What the apps alone make the Khronos layer say (test_the_apps_own_messages checks them).
APPS_OWN = {
    "vk_app-host-event": {
        "SYNC-vkCmdWaitEvents-hostevent-unsupported": 1,  # waits on a host-set event
        "VUID-vkSetEvent-event-09543": 1,  # sets it while the waiting submission is pending
    },
    "indexing-push": {"VUID-vkDestroyDevice-device-05137": 6},  # leaks its buffers and pool
}
# A Khronos message printed by the demo's messenger (text only): "vkCmdX(): ..." or a VUID's.
KHRONOS_TEXT = re.compile(r"^vk\w+\(\): |The Vulkan spec states:", re.MULTILINE)


@dataclass(frozen=True)
class NewerKhronos:
    root: Path

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` under Debian 13's dynamic loader and libraries (the script's nk_run)."""
        libraries = self.root / "root/usr/lib/x86_64-linux-gnu"
        loader = libraries / "ld-linux-x86-64.so.2"
        return [str(loader), "--library-path", f"{libraries}:/usr/lib/x86_64-linux-gnu", *argv]

    def gpu_assisted_environment(self) -> dict[str, str]:
        """A program's environment under this Khronos layer alone, its GPU-AV on."""
        environment = app_environment(None, instrumenter=None)
        environment.update(
            VK_LAYER_PATH=str(self.root / "layer"),
            VK_INSTANCE_LAYERS=VALIDATION_LAYER,
            VK_LAYER_ENABLES="VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT",
        )
        return environment

    def environment(
        self, layer_folder: Path | None, instrumenter: str | None, extra: dict[str, str]
    ) -> dict[str, str]:
        environment = app_environment(
            layer_folder, instrumenter=instrumenter, layers=[VALIDATION_LAYER], extra=extra
        )
        # VK_LAYER_PATH hides the system's 1.3.239 layer. (gpuav through VK_ADD_LAYER_PATH
        # beside it made the stack crash at start-up, before any message; left for later.)
        folders = [str(self.root / "layer")]
        added = environment.pop("VK_ADD_LAYER_PATH", None)
        environment["VK_LAYER_PATH"] = os.pathsep.join([added, *folders] if added else folders)
        environment["VK_KHRONOS_VALIDATION_VALIDATE_SYNC"] = "true"
        environment["GPUAV_VALIDATE_SHADERS"] = "0"
        return environment


@pytest.fixture(scope="session")
def newer_khronos() -> NewerKhronos:
    script = Path(
        os.environ.get("GPUAV_NEWER_KHRONOS")
        or REPOSITORY.parent / "shared" / "tools" / "newer-khronos.sh"
    )
    if not script.exists():
        pytest.fail(f"{script} is missing: it provides the Khronos layer {KHRONOS_VERSION}")
    done = subprocess.run(
        ["bash", "-c", 'source "$0" >/dev/null && printf %s "$NK_ROOT"', str(script)],
        capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    root = Path(done.stdout)
    manifest = json.loads((root / "layer" / "VkLayer_khronos_validation.json").read_text())
    assert manifest["layer"]["api_version"] == KHRONOS_VERSION
    return NewerKhronos(root)


@dataclass
class StackRun:
    messages: list[dict[str, Any]]
    stdout: str

    def findings(self) -> Counter[str]:
        """The Khronos layer's messages by id: gpuav's own carry VUIDs too (the spec's id for
        what it finds), but never the Khronos layer's text ("vkX(): ...", "The Vulkan spec
        states:")."""
        return Counter(
            message["id"]
            for message in self.messages
            if not message["id"].startswith(NOT_FINDINGS)
            and KHRONOS_TEXT.search(message.get("text", ""))
        )


Runner = Callable[..., StackRun]


def _parse_messages(stdout: str) -> list[dict[str, Any]]:
    """vk_app-style JSON (last line) or c_app-style ``message`` lines."""
    last = stdout.strip().splitlines()[-1] if stdout.strip() else ""
    if last.startswith("{"):
        return list(json.loads(last).get("messages", []))
    return list(parse_c_output(stdout)["messages"])


@pytest.fixture
def run_stacked(newer_khronos: NewerKhronos, layer_folder: Path, tmp_path: Path) -> Runner:
    """Run an app under the 1.4.309 layer, with gpuav above it unless ``gpuav=False``."""

    def run(
        argv: list[str],
        gpuav: bool = True,
        instrumenter: str | None = None,
        extra: dict[str, str] | None = None,
    ) -> StackRun:
        environment = newer_khronos.environment(
            layer_folder if gpuav else None, instrumenter, extra or {}
        )
        completed = subprocess.run(
            newer_khronos.command(argv), env=environment, cwd=tmp_path, capture_output=True,
            text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr[-4000:]
        assert "gpuav: layer disabled" not in completed.stderr
        return StackRun(_parse_messages(completed.stdout), completed.stdout)

    return run


def _shader(spirv: Callable[[str], Path], name: str) -> str:
    return str(spirv(name))


VK_APP = [
    ("vk_app-compute", FAKE, ["--shader", "region_reporting.comp", "--bad-dispatch", "1"]),
    ("vk_app-secondary-submit2", FAKE, ["--shader", "region_reporting.comp", "--bad-dispatch",
     "1", "--secondary", "--submit2", "--features2"]),
    ("vk_app-many-chunks", FAKE, ["--shader", "region_reporting.comp", "--bad-dispatch", "300",
     "--dispatches", "320", "--destroy-module-early", "--destroy-layout-early", "--repeat", "2",
     "--rerecord"]),
    ("vk_app-host-event", FAKE, ["--shader", "region_reporting.comp", "--bad-dispatch", "1",
     "--host-event"]),
    ("vk_app-timeline-wait", FAKE, ["--shader", "region_reporting.comp", "--bad-dispatch", "1",
     "--timeline-wait"]),
    ("vk_app-shipped-pass", None, ["--shader", "region_array.comp", "--dispatches", "600"]),
    ("vk_app-by-address", None, ["--shader", "region_array.comp", "--fill-sets"]),
    ("vk_app-graphics", FAKE, ["--mode", "graphics", "--vert", "quad_reporting.vert", "--frag",
     "quad_reporting.frag", "--bad-draw", "1"]),
    ("vk_app-indexed-indirect", FAKE, ["--mode", "graphics", "--vert", "quad_reporting.vert",
     "--frag", "quad_reporting.frag", "--bad-draw", "0", "--draw-command", "indexed_indirect"]),
]  # fmt: skip
INDEXING_APP = [
    ("indexing-template", FAKE, ["--shader", "indexing_reporting.comp", "--update-after-bind",
     "--write", "0,1", "--late-write", "2", "--access", "0,2,4,9", "--how", "template",
     "--free-sets"]),
    ("indexing-by-address", FAKE_CONTEXT, ["--shader", "indexing_reporting_bda.comp",
     "--fill-sets", "--update-after-bind", "--write", "0,1", "--late-write", "2", "--access",
     "0,2,4,9"]),
    ("indexing-fragment-by-address", None, ["--shader", "fullscreen.vert", "--frag",
     "indexing.frag", "--fill-sets", "--write", "0,1", "--access", "0,5,9"]),
    ("indexing-push", None, ["--shader", "indexing.comp", "--push", "--layout-count", "8",
     "--write", "0,1,2", "--access", "0,2,9,1"]),
    ("indexing-bind2", None, ["--shader", "indexing.comp", "--bind2", "--write", "0,1,2",
     "--access", "0,3,9"]),
]  # fmt: skip
PYTHON_APPS = {"vk_app": VK_APP, "indexing_app": INDEXING_APP}


def _python_app_cases() -> list[tuple[str, str, str | None, list[str]]]:
    return [
        (app, name, instrumenter, arguments)
        for app, cases in PYTHON_APPS.items()
        for name, instrumenter, arguments in cases
    ]


def _compiled(arguments: list[str], spirv: Callable[[str], Path]) -> list[str]:
    shader_names = (".comp", ".vert", ".frag")
    return [_shader(spirv, a) if a.endswith(shader_names) else a for a in arguments]


@pytest.mark.parametrize(
    ("app", "name", "instrumenter", "arguments"),
    _python_app_cases(),
    ids=[case[1] for case in _python_app_cases()],
)
def test_python_apps(
    run_stacked: Runner, spirv: Callable[[str], Path], app: str, name: str,
    instrumenter: str | None, arguments: list[str],
) -> None:  # fmt: skip
    argv = [sys.executable, str(APPS / f"{app}.py"), *_compiled(arguments, spirv)]
    if app == "vk_app":
        argv += ["--messenger", "--names"]
    run = run_stacked(argv, instrumenter=instrumenter)
    assert run.findings() == Counter(APPS_OWN.get(name, {}))
    if any("reporting" in argument for argument in arguments):
        assert any(message["id"].startswith("GPUAV-descriptor") for message in run.messages)


def test_c_app(run_stacked: Runner, spirv: Callable[[str], Path], c_app: Path) -> None:
    shaders = [_shader(spirv, name) for name in
               ("region_reporting.comp", "quad_reporting.vert", "quad_reporting.frag")]  # fmt: skip
    run = run_stacked(
        [str(c_app), *shaders, "--bad-dispatch", "0", "--bad-draw", "1", "--messenger"],
        instrumenter=FAKE,
    )
    assert run.findings() == Counter()
    assert len([m for m in run.messages if m["id"] == "GPUAV-descriptor-index-out-of-bounds"]) == 3


WILD_COMPUTE = ["compute", "many", "threads", "second-device", "second-instance",
                "wait-before-signal", "wait-before-signal-empty", "threads-timeline",
                "shader-object", "library-flags2"]  # fmt: skip
WILD_GRAPHICS = ["dynamic-rendering", "geometry-tessellation", "tessellation-indexed",
                 "multiview", "library", "multi-draw", "mesh"]  # fmt: skip


@pytest.mark.parametrize("scenarios", [WILD_COMPUTE, WILD_GRAPHICS], ids=["compute", "graphics"])
def test_wild_app(
    run_stacked: Runner, spirv: Callable[[str], Path], wild_app: Path,  # noqa: F811
    scenarios: list[str],
) -> None:  # fmt: skip
    """Every scenario, the shader object among them (issue 13 item 8: gpuav's wider
    push-constant ranges made the app's layout incompatible with its shader object,
    VUID-vkCmdDispatch-None-08600), with host allocation callbacks; the results are the app's
    alone."""
    argv = [str(wild_app), str(_wild_shaders(spirv)), "--messenger", "--allocator", *scenarios]
    alone = run_stacked(argv, gpuav=False)
    run = run_stacked(argv)
    assert run.findings() == Counter()
    assert alone.findings() == Counter()
    assert _hashes(run.stdout) == _hashes(alone.stdout)
    assert [line.split()[0] for line in _hashes(run.stdout)][: len(scenarios)] != []
    if "shader-object" in scenarios:  # instrumented, its push-constant ranges still matching
        assert not any(m["id"].startswith("GPUAV-shader-object") for m in run.messages)


def test_pipeline_bound_after_python_is_gone(
    run_stacked: Runner, spirv: Callable[[str], Path], wild_app: Path,  # noqa: F811
) -> None:  # fmt: skip
    """Instrumented pipelines made while the layer's Python side ran, then bound and dispatched
    once it is gone (as at the end of a process: C++ destructors, atexit handlers): the C
    front end binds gpuav's set with them, so the Khronos layer beneath finds every set the
    shaders use bound, and the results are the app's alone. --leak 2: the device outlives the
    scenario (destroyed then, gpuav's own objects would be reported as leaked, Python being
    gone)."""
    argv = [str(wild_app), str(_wild_shaders(spirv)), "--messenger", "--leak", "2", "python-gone"]
    alone = run_stacked(argv, gpuav=False)
    run = run_stacked(argv)
    assert run.findings() == Counter()
    assert _hashes(run.stdout) == _hashes(alone.stdout)


def _hashes(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line and not line.startswith("message ")]


def _wild_shaders(spirv: Callable[[str], Path]) -> Path:
    names = ["wild.comp", "wild.tesc", "wild.tese", "wild.geom", "wild_view.frag", "quad.vert",
             "quad.frag", "quad_reporting.frag", "wild_index.tese", "wild_index.geom"]  # fmt: skip
    folder = spirv(names[0]).parent
    for name in names[1:]:
        spirv(name)
    mesh = folder / "wild.mesh.spv"
    if not mesh.exists():
        subprocess.run(
            ["glslangValidator", "-V", "--target-env", "vulkan1.2", "-o", str(mesh),
             str(SHADERS / "wild.mesh")],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    return folder


def test_pressure_app_growing_output_memory(
    run_stacked: Runner, spirv: Callable[[str], Path]
) -> None:
    """2000 dispatches of an instrumented pipeline: gpuav's output memory grows chunk by
    chunk (blocks of 64) while the app records, and its barriers cover every chunk."""
    argv = [sys.executable, str(APPS / "pressure_app.py"), _shader(spirv, "region_array.comp"),
            "--dispatches", "2000", "--messenger"]  # fmt: skip
    run = run_stacked(argv, extra={"GPUAV_BLOCKS_PER_CHUNK": "64"})
    assert run.findings() == Counter()
    assert json.loads(run.stdout.strip().splitlines()[-1])["errors"] == []


def test_demo(run_stacked: Runner) -> None:
    """The demo's messenger prints each message's text: none may be the Khronos layer's."""
    run = run_stacked([sys.executable, "-m", "gpuav.demo"])
    assert KHRONOS_TEXT.findall(run.stdout) == []
    assert "Index of 6 used to index descriptor array of length 6." in run.stdout


def test_the_apps_own_messages(run_stacked: Runner, spirv: Callable[[str], Path]) -> None:
    """What APPS_OWN allows is what the apps make the Khronos layer say without gpuav (their
    bug-free variants: without gpuav an out-of-bounds index crashes lavapipe). The host event's
    SYNC- message also shows that synchronization validation is on."""
    host_event = [sys.executable, str(APPS / "vk_app.py"), "--shader",
                  _shader(spirv, "region.comp"), "--host-event", "--messenger"]  # fmt: skip
    run = run_stacked(host_event, gpuav=False)
    assert run.findings() == Counter(APPS_OWN["vk_app-host-event"])
    push = [sys.executable, str(APPS / "indexing_app.py"), "--shader",
            _shader(spirv, "indexing.comp"), "--push", "--layout-count", "8", "--write", "0,1,2",
            "--access", "0,2,1"]  # fmt: skip
    assert run_stacked(push, gpuav=False).findings() == Counter(APPS_OWN["indexing-push"])
