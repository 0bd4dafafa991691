"""Issue 17 target 3: the layer imports a hook module at the first call of one of its entry
points, so starting Python at vkCreateInstance imports what instance creation needs, and a
module found in gpuav's module cache needs no pass.

The start-up test runs a Python program knowing nothing of gpuav under the real layer on
lavapipe and asks its interpreter (which the layer joins) what was imported when.
"""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpuav.instrument.api import instrument_slotted
from gpuav.layer import shader_modules
from gpuav.layer.native import entry, lazy_hooks, prototypes
from tests.layer.conftest import APP_TIMEOUT, app_environment


def test_every_entry_point_names_a_function_of_its_hook_module() -> None:
    assert set(prototypes.entered_from_c()) <= set(entry.IMPLEMENTATIONS)
    assert not set(prototypes.NATIVE_ONLY) & set(entry.IMPLEMENTATIONS)
    for name, hook in entry.IMPLEMENTATIONS.items():
        assert hook.module.startswith("gpuav.layer.native.hooks_"), name
        assert callable(hook.resolve()), name


def test_a_command_layer_c_calls_down_is_called_down_once_and_recorded_on_the_right_side() -> None:
    wrappers = prototypes.c_wrappers()
    for name in prototypes.RECORDED_AROUND_GOING_DOWN:
        assert f".{name}(" not in inspect.getsource(entry.IMPLEMENTATIONS[name].resolve()), name
        start = wrappers.index(f" gpuav_{name}(")
        wrapper = wrappers[start : wrappers.index("\n}", start)]
        assert wrapper.count("next(a0") == 1 and wrapper.count(prototypes.python_name(name)) == 1
        recorded_first = wrapper.index(prototypes.python_name(name)) < wrapper.index("next(a0")
        assert recorded_first == (name in prototypes.RECORDED_BEFORE_GOING_DOWN), name


def test_an_output_block_left_to_the_wrapper_is_bound_just_before_the_command_goes_down() -> None:
    wrappers = prototypes.c_wrappers()
    for name in prototypes.OUTPUT_BOUND_BY_WRAPPER:
        start = wrappers.index(f" gpuav_{name}(")
        wrapper = wrappers[start : wrappers.index("\n}", start)]
        hook = wrapper.index(prototypes.python_name(name))
        bind = wrapper.index("gpuav_bind_output_before(a0);")
        assert hook < bind < wrapper.index("\n", hook), name  # only where Python recorded
        if name in prototypes.RECORDED_BEFORE_GOING_DOWN:
            assert bind < wrapper.index("next(a0"), name
    # A hook whose command the wrapper does not follow with the bind makes it itself.
    for name, hook in entry.IMPLEMENTATIONS.items():
        if name not in prototypes.OUTPUT_BOUND_BY_WRAPPER and name in prototypes.HOOKED:
            assert "bound_later=True" not in inspect.getsource(hook.resolve()), name


def test_the_first_call_binds_the_entry_point_to_the_real_function() -> None:
    bound: list[object] = []
    hook = lazy_hooks.LazyHooks("os.path").join
    hook.bind = bound.append
    assert hook("a", "b") == importlib.import_module("os.path").join("a", "b")
    assert bound == [importlib.import_module("os.path").join]


def test_the_pass_options_are_those_of_gpuavs_pass() -> None:
    # The layer answers which options the pass takes without importing it.
    parameters = inspect.signature(instrument_slotted).parameters
    keywords = {name for name, p in parameters.items() if p.kind is p.KEYWORD_ONLY}
    assert keywords == shader_modules.PASS_OPTIONS


PROGRAM = """
import json, sys
import vulkan as vk

def gpuav_modules():
    return sorted(name for name in sys.modules if name.startswith("gpuav."))

app = vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=app), None)
after_instance = gpuav_modules()
physical = vk.vkEnumeratePhysicalDevices(instance)[0]
queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0])
device = vk.vkCreateDevice(
    physical, vk.VkDeviceCreateInfo(queueCreateInfoCount=1, pQueueCreateInfos=[queue]), None
)
code = open(sys.argv[1], "rb").read()
info = vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code)
module = vk.vkCreateShaderModule(device, info, None)
after_module = gpuav_modules()
vk.vkDestroyShaderModule(device, module, None)
vk.vkDestroyDevice(device, None)
vk.vkDestroyInstance(instance, None)
print(json.dumps({"instance": after_instance, "module": after_module}))
"""


@pytest.mark.vulkan
def test_instance_creation_imports_no_pass_and_a_cached_module_none_either(
    layer_folder: Path, spirv: object, tmp_path: Path
) -> None:
    shader = spirv("region.comp")  # type: ignore[operator]
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(PROGRAM))
    cache = {"GPUAV_SHADER_CACHE_PATH": str(tmp_path / "cache")}
    environment = app_environment(layer_folder, instrumenter=None, extra=cache)
    runs = []
    for _ in range(2):  # the second run finds the module in the cache
        done = subprocess.run(
            [sys.executable, str(script), str(shader)], env=environment, cwd=tmp_path,
            capture_output=True, text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    first, second = runs
    assert "gpuav.layer.native.hooks_instance" in first["instance"]
    for later in ("gpuav.layer.native.hooks_shader_modules", "gpuav.instrument.api"):
        assert later not in first["instance"], later
    assert "gpuav.instrument.api" in first["module"]  # the module was instrumented...
    assert "gpuav.instrument.api" not in second["module"]  # ...and then found in the cache
    assert "gpuav.layer.native.hooks_shader_modules" in second["module"]
    # A module found in the cache needs neither the intake nor the pipeline code.
    for unneeded in ("gpuav.layer.module_intake", "gpuav.layer.pipelines"):
        assert unneeded not in second["module"], unneeded
