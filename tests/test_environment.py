"""The machine has what the suite needs. In CI a missing driver or tool must fail the run:
these tests say exactly what is missing instead of letting others skip or fail obscurely."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

TOOLS = ["glslangValidator", "spirv-val", "spirv-dis", "spirv-as", "spirv-opt", "vulkaninfo", "cc"]


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_is_installed(tool: str) -> None:
    assert shutil.which(tool), f"{tool} is missing: run ./run tests, which installs it"


def _vulkaninfo_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("vulkaninfo")
    subprocess.run(
        ["vulkaninfo", "--json"], cwd=folder, check=True, capture_output=True, timeout=120
    )
    (report,) = folder.glob("*.json")
    return dict(json.loads(report.read_text()))


def test_lavapipe_with_vulkan_1_3_is_present(tmp_path_factory: pytest.TempPathFactory) -> None:
    summary = subprocess.run(
        ["vulkaninfo", "--summary"], capture_output=True, text=True, timeout=120
    ).stdout
    assert "llvmpipe" in summary, f"lavapipe (mesa-vulkan-drivers) not found:\n{summary}"
    report = _vulkaninfo_json(tmp_path_factory)
    capabilities = report["capabilities"]
    assert isinstance(capabilities, dict)
    properties = capabilities["device"]["properties"]["VkPhysicalDeviceProperties"]
    api = properties["apiVersion"]
    major, minor = (api >> 22) & 0x7F, (api >> 12) & 0x3FF
    assert (major, minor) >= (1, 3), "Mesa >= 24 from bookworm-backports is needed"


def test_khronos_validation_layer_is_installed() -> None:
    summary = subprocess.run(
        ["vulkaninfo", "--summary"], capture_output=True, text=True, timeout=120
    ).stdout
    assert "VK_LAYER_KHRONOS_validation" in summary
