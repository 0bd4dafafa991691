"""load_device_json reads the file the real `vulkaninfo --json` writes for lavapipe."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from gpuav.errors import GpuavError
from gpuav.validate.device_json import DeviceJsonError, load_device_json, parse_device_json


@functools.cache
def _vulkaninfo_document() -> str:
    """The text of the profile vulkaninfo writes (into its working directory)."""
    executable = shutil.which("vulkaninfo")
    assert executable is not None, "vulkaninfo is not on PATH: install vulkan-tools"
    with tempfile.TemporaryDirectory(prefix="gpuav-vulkaninfo-") as work:
        subprocess.run(
            [executable, "--json"], cwd=work, capture_output=True, check=True, timeout=120
        )
        written = sorted(Path(work).glob("*.json"))
        assert len(written) == 1, f"vulkaninfo wrote {written}"
        return written[0].read_text()


@pytest.fixture
def lavapipe_json(tmp_path: Path) -> Path:
    path = tmp_path / "device.json"
    path.write_text(_vulkaninfo_document())
    return path


def test_lavapipe_features_extensions_limits_and_version(lavapipe_json: Path) -> None:
    device = load_device_json(lavapipe_json)
    document = json.loads(lavapipe_json.read_text())["capabilities"]["device"]
    core = document["features"]["VkPhysicalDeviceFeatures"]
    # Every true VkPhysicalDeviceFeatures member is a feature, every false one is not.
    assert core["shaderFloat64"] is True
    for name, value in core.items():
        assert (name in device.features) == value, name
    # Features from the Vulkan 1.1/1.2 structures and the subgroup operations.
    assert {"shaderDrawParameters", "runtimeDescriptorArray", "vulkanMemoryModel"} <= (
        device.features
    )
    assert "VK_SUBGROUP_FEATURE_BALLOT_BIT" in device.features
    float_controls = document["properties"]["VkPhysicalDeviceFloatControlsProperties"]
    assert ("shaderDenormPreserveFloat32" in device.features) == float_controls[
        "shaderDenormPreserveFloat32"
    ]
    assert "bufferDeviceAddressCaptureReplay" not in device.features  # false on lavapipe
    assert "VK_KHR_8bit_storage" in device.extensions
    assert device.extensions == frozenset(document["extensions"])
    limits = document["properties"]["VkPhysicalDeviceProperties"]["limits"]
    assert device.limits["maxBoundDescriptorSets"] == limits["maxBoundDescriptorSets"]
    assert device.limits["maxVertexOutputComponents"] == limits["maxVertexOutputComponents"]
    assert "maxComputeWorkGroupSize" not in device.limits  # arrays are not integer limits
    xfb = document["properties"]["VkPhysicalDeviceTransformFeedbackPropertiesEXT"]
    assert device.limits["maxTransformFeedbackBuffers"] == xfb["maxTransformFeedbackBuffers"]
    api = document["properties"]["VkPhysicalDeviceProperties"]["apiVersion"]
    assert device.target_env == f"vulkan1.{(api >> 12) & 0x3FF}"


def test_older_vulkaninfo_layout() -> None:
    document = {
        "VkPhysicalDeviceProperties": {
            "apiVersion": "1.1.97",
            "limits": {"maxBoundDescriptorSets": 4, "pointSizeRange": [1.0, 64.0]},
        },
        "VkPhysicalDeviceFeatures": {"shaderInt64": True, "shaderFloat64": False},
        "ArrayOfVkExtensionProperties": [{"extensionName": "VK_KHR_8bit_storage"}],
    }
    device = parse_device_json(document)
    assert device.features == {"shaderInt64"}
    assert device.extensions == {"VK_KHR_8bit_storage"}
    assert device.limits == {"maxBoundDescriptorSets": 4}
    assert device.target_env == "vulkan1.1"


def test_newer_api_version_is_capped_at_the_newest_environment() -> None:
    document = {"VkPhysicalDeviceProperties": {"apiVersion": (1 << 22) | (9 << 12)}}
    assert parse_device_json(document).target_env == "vulkan1.4"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[]",
        "{}",
        '{"capabilities": {"device": {"features": {}}}}',
        '{"VkPhysicalDeviceProperties": {"apiVersion": "one.two"}}',
        '{"VkPhysicalDeviceProperties": {"apiVersion": true}}',
        '{"VkPhysicalDeviceProperties": {"apiVersion": "2.0.0"}}',
        '{"VkPhysicalDeviceProperties": {}}',
    ],
)
def test_unusable_documents_raise_the_project_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "device.json"
    path.write_text(text)
    with pytest.raises(DeviceJsonError) as raised:
        load_device_json(path)
    assert isinstance(raised.value, GpuavError)


def test_missing_file_raises_the_project_error(tmp_path: Path) -> None:
    with pytest.raises(DeviceJsonError, match="cannot read"):
        load_device_json(tmp_path / "absent.json")


def test_corpus_against_lavapipe_flags_only_what_lavapipe_lacks(lavapipe_json: Path) -> None:
    from gpuav.validate import rules_capabilities
    from gpuav.validate.api import validate
    from tests.shaders.glsl import corpus_shaders

    device = load_device_json(lavapipe_json)
    flagged = {
        shader.name
        for shader in corpus_shaders()
        if validate(
            shader.compile(),
            target_env=shader.target_env,
            features=device.features,
            extensions=device.extensions,
            families=[rules_capabilities.check],
        )
    }
    # Vendor extensions Mesa's CPU driver does not offer are reported...
    assert {"amd_gather_lod_fragment_mask.frag", "texture_footprint_nv.frag"} <= flagged
    # ...and most of the corpus, which the layer tests run on lavapipe, is not.
    assert len(flagged) <= 8
    assert "nonuniform_bindless_compute.comp" not in flagged
    assert "subgroup_arithmetic_ballot.comp" not in flagged
