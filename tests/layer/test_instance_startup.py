"""Issue 17 target 3: the first vkCreateInstance starts the layer's Python side, so what it
imports is what every app pays before its instance exists. It reads the create info through
the layer's own declarations of a few structures (``instance_info``), generated from the
``vulkan`` package's, and imports neither that package nor ``dataclasses``, ``typing`` or
``pathlib`` nor the device-level engine.

The start-up test is a Python program that calls the Vulkan loader through ctypes (so nothing
of the ``vulkan`` package is loaded by the app) under the real layer on lavapipe, and asks its
interpreter, which the layer joins, what instance creation imported and what it recorded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import cffi
import pytest
import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer.api_versions import API_VERSION_1_0, API_VERSION_1_1
from gpuav.layer.native import instance_info
from tests.layer.conftest import APP_TIMEOUT, app_environment


def test_the_layers_declarations_have_the_vulkan_packages_layout() -> None:
    ours = cffi.FFI()
    ours.cdef(instance_info.declarations())
    for name in instance_info.STRUCTURES:
        declared = instance_info.struct_name(name)
        assert ours.sizeof(declared) == vkffi.sizeof(name), name
        assert ours.alignof(declared) == vkffi.alignof(name), name
        fields = [field for field, _ in vkffi.typeof(name).fields]
        assert [field for field, _ in ours.typeof(declared).fields] == fields
        for field in fields:
            assert ours.offsetof(declared, field) == vkffi.offsetof(name, field), (name, field)


def test_the_constants_are_the_vulkan_packages() -> None:
    assert instance_info.STRUCTURE_TYPE_APPLICATION_INFO == vk.VK_STRUCTURE_TYPE_APPLICATION_INFO
    assert (
        instance_info.STRUCTURE_TYPE_VALIDATION_FEATURES
        == vk.VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT
    )
    assert (
        instance_info.STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO
        == vk.VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT
    )
    value_types = {
        vk.VK_LAYER_SETTING_TYPE_BOOL32_EXT: "uint32_t",
        vk.VK_LAYER_SETTING_TYPE_INT32_EXT: "int32_t",
        vk.VK_LAYER_SETTING_TYPE_INT64_EXT: "int64_t",
        vk.VK_LAYER_SETTING_TYPE_UINT32_EXT: "uint32_t",
        vk.VK_LAYER_SETTING_TYPE_UINT64_EXT: "uint64_t",
        vk.VK_LAYER_SETTING_TYPE_FLOAT32_EXT: "float",
        vk.VK_LAYER_SETTING_TYPE_FLOAT64_EXT: "double",
        vk.VK_LAYER_SETTING_TYPE_STRING_EXT: "char *",
    }
    assert {key: c_type for key, (c_type, _) in instance_info.SETTING_VALUE_TYPES.items()} == (
        value_types
    )


PROGRAM = """
import ctypes, json, sys

before = set(sys.modules)
loader = ctypes.CDLL("libvulkan.so.1")


class ApplicationInfo(ctypes.Structure):
    _fields_ = [
        ("sType", ctypes.c_int32), ("pNext", ctypes.c_void_p),
        ("pApplicationName", ctypes.c_char_p), ("applicationVersion", ctypes.c_uint32),
        ("pEngineName", ctypes.c_char_p), ("engineVersion", ctypes.c_uint32),
        ("apiVersion", ctypes.c_uint32),
    ]


class LayerSetting(ctypes.Structure):
    _fields_ = [
        ("pLayerName", ctypes.c_char_p), ("pSettingName", ctypes.c_char_p),
        ("type", ctypes.c_int32), ("valueCount", ctypes.c_uint32), ("pValues", ctypes.c_void_p),
    ]


class LayerSettingsCreateInfo(ctypes.Structure):
    _fields_ = [
        ("sType", ctypes.c_int32), ("pNext", ctypes.c_void_p),
        ("settingCount", ctypes.c_uint32), ("pSettings", ctypes.POINTER(LayerSetting)),
    ]


class InstanceCreateInfo(ctypes.Structure):
    _fields_ = [
        ("sType", ctypes.c_int32), ("pNext", ctypes.c_void_p), ("flags", ctypes.c_uint32),
        ("pApplicationInfo", ctypes.POINTER(ApplicationInfo)),
        ("enabledLayerCount", ctypes.c_uint32), ("ppEnabledLayerNames", ctypes.c_void_p),
        ("enabledExtensionCount", ctypes.c_uint32), ("ppEnabledExtensionNames", ctypes.c_void_p),
    ]


# GPU-AV turned on by VK_EXT_layer_settings only (a string setting), for a Vulkan 1.0 app.
value = ctypes.c_char_p(b"all")
setting = LayerSetting(
    b"VK_LAYER_GPUAV_gpu_assisted", b"gpu_validation", 7, 1,
    ctypes.cast(ctypes.pointer(value), ctypes.c_void_p),
)
settings = LayerSettingsCreateInfo(1000496000, None, 1, ctypes.pointer(setting))
application = ApplicationInfo(0, None, b"startup", 0, None, 0, 1 << 22)
info = InstanceCreateInfo(
    1, ctypes.cast(ctypes.pointer(settings), ctypes.c_void_p), 0, ctypes.pointer(application),
    0, None, 0, None,
)
instance = ctypes.c_void_p()
result = loader.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(instance))
imported = sorted(set(sys.modules) - before)
records = list(sys.modules["gpuav.layer.native.dispatch"].REGISTRY.instances.values())
loader.vkDestroyInstance(instance, None)
print(json.dumps({
    "result": result,
    "imported": imported,
    "versions": [[record.state.api_version, record.state.asked_api_version] for record in records],
}))
"""
# Imported with the first device or later, never by instance creation: the vulkan package, the
# standard modules an interpreter started by a C host has not loaded yet, the device engine.
NOT_AT_INSTANCE_CREATION = (
    "vulkan",
    "vulkan._vulkan",
    "dataclasses",
    "typing",
    "pathlib",
    "functools",
    "threading",
    "json",
    "gpuav.layer.state",
    "gpuav.layer.calls",
    "gpuav.layer.device_setup",
    "gpuav.layer.native.hooks_device",
    "gpuav.layer.native.build",
    "gpuav.layer.native.vk",
)


@pytest.mark.vulkan
def test_instance_creation_reads_its_create_info_without_the_vulkan_package(
    layer_folder: Path, tmp_path: Path
) -> None:
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(PROGRAM))
    environment = app_environment(layer_folder, enable=False, instrumenter=None)
    done = subprocess.run(
        [sys.executable, str(script)], env=environment, cwd=tmp_path,
        capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["result"] == 0
    assert "gpuav.layer.native.hooks_instance" in report["imported"]
    for heavy in NOT_AT_INSTANCE_CREATION:
        assert heavy not in report["imported"], heavy
    # On through the layer setting, raised to Vulkan 1.1 and remembering the app's 1.0.
    assert report["versions"] == [[API_VERSION_1_1, API_VERSION_1_0]]
