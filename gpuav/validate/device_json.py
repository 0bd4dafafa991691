"""Read a device description from `vulkaninfo --json` so shaders can be validated against it.

Today's vulkaninfo writes a Vulkan Profiles document (``capabilities.device.features``,
``.properties``, ``.extensions``); older versions wrote the structures at the top level
(``VkPhysicalDeviceFeatures``, ``ArrayOfVkExtensionProperties``). Both are read.

Features are the names of every boolean that is true in any ``VkPhysicalDevice*Features*``
structure. The subgroup operations a device supports (``VkPhysicalDeviceSubgroupProperties``)
join them under their flag names (``VK_SUBGROUP_FEATURE_BALLOT_BIT``), the names the
capability table of the Vulkan environment appendix uses for the ``GroupNonUniform*``
capabilities. Likewise the float-controls properties the table names as features
(``shaderDenormPreserveFloat32``, from ``VkPhysicalDeviceFloatControlsProperties``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuav.errors import GpuavError
from gpuav.validate.target_envs import TARGET_ENVS

# Property structures whose integer members are limits the validator reads.
_LIMIT_STRUCTS = ("VkPhysicalDeviceTransformFeedbackPropertiesEXT",)
_SUBGROUP_STRUCTS = ("VkPhysicalDeviceSubgroupProperties", "VkPhysicalDeviceVulkan11Properties")
_SUBGROUP_KEYS = ("supportedOperations", "subgroupSupportedOperations")
_FLOAT_CONTROLS_STRUCTS = (
    "VkPhysicalDeviceFloatControlsProperties",
    "VkPhysicalDeviceVulkan12Properties",
)


class DeviceJsonError(GpuavError):
    """The file is not a vulkaninfo JSON document describing a device."""


@dataclass(frozen=True)
class DeviceDescription:
    """What a device offers: features, device extensions, limits and its Vulkan version
    as a target environment (``vulkan1.3``)."""

    features: frozenset[str] = frozenset()
    extensions: frozenset[str] = frozenset()
    limits: dict[str, int] = field(default_factory=dict)
    target_env: str = "vulkan1.0"


def load_device_json(path: str | Path) -> DeviceDescription:
    """Read the file `vulkaninfo --json` wrote; DeviceJsonError when it cannot be used."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DeviceJsonError(f"cannot read {path}: {error}") from error
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise DeviceJsonError(f"{path} is not JSON: {error}") from error
    return parse_device_json(document)


def parse_device_json(document: object) -> DeviceDescription:
    """The description in an already parsed vulkaninfo document."""
    device = _device_section(document)
    features_section = _mapping(device.get("features"))
    properties_section = _mapping(device.get("properties"))
    if not features_section and not properties_section:
        raise DeviceJsonError("no device features or properties in the document")
    properties = _mapping(properties_section.get("VkPhysicalDeviceProperties"))
    return DeviceDescription(
        features=frozenset(_enabled_features(features_section, properties_section)),
        extensions=frozenset(_extension_names(device.get("extensions"))),
        limits=_limits(properties, properties_section),
        target_env=_target_env(properties.get("apiVersion")),
    )


def _device_section(document: object) -> Mapping[str, Any]:
    root = _mapping(document)
    if not root:
        raise DeviceJsonError("the document is not a JSON object")
    device = _mapping(_mapping(root.get("capabilities")).get("device"))
    if device:
        return device
    # Older vulkaninfo: structures at the top level, extensions as an array of properties.
    features = {key: value for key, value in root.items() if "Features" in key}
    properties = {key: value for key, value in root.items() if "Properties" in key}
    return {
        "features": features,
        "properties": properties,
        "extensions": root.get("ArrayOfVkExtensionProperties"),
    }


def _enabled_features(
    features_section: Mapping[str, Any], properties_section: Mapping[str, Any]
) -> Iterator[str]:
    for structure in features_section.values():
        for name, value in _mapping(structure).items():
            if value is True:
                yield name
    for struct_name in _SUBGROUP_STRUCTS:
        structure = _mapping(properties_section.get(struct_name))
        for key in _SUBGROUP_KEYS:
            operations = structure.get(key)
            if isinstance(operations, list):
                yield from (flag for flag in operations if isinstance(flag, str))
    for struct_name in _FLOAT_CONTROLS_STRUCTS:
        for name, value in _mapping(properties_section.get(struct_name)).items():
            if value is True and name.startswith("shader"):
                yield name


def _extension_names(extensions: object) -> Iterator[str]:
    if isinstance(extensions, Mapping):
        yield from (name for name in extensions if isinstance(name, str))
    elif isinstance(extensions, list):
        for entry in extensions:
            name = _mapping(entry).get("extensionName")
            if isinstance(name, str):
                yield name


def _limits(properties: Mapping[str, Any], properties_section: Mapping[str, Any]) -> dict[str, int]:
    limits: dict[str, int] = {}
    sources = [_mapping(properties.get("limits"))]
    sources += [_mapping(properties_section.get(name)) for name in _LIMIT_STRUCTS]
    for source in sources:
        for name, value in source.items():
            # bool is an int: VkBool32 properties become 0 or 1; arrays and floats are left out.
            if isinstance(value, int):
                limits[name] = int(value)
    return limits


def _target_env(api_version: object) -> str:
    """``vulkanX.Y`` of the device's API version, capped at the newest environment we know."""
    if isinstance(api_version, bool) or api_version is None:
        raise DeviceJsonError("the device has no apiVersion")
    if isinstance(api_version, int):
        major, minor = (api_version >> 22) & 0x7F, (api_version >> 12) & 0x3FF
    elif isinstance(api_version, str):
        parts = api_version.split(".")
        try:
            major, minor = int(parts[0]), int(parts[1])
        except (IndexError, ValueError) as error:
            raise DeviceJsonError(f"unreadable apiVersion {api_version!r}") from error
    else:
        raise DeviceJsonError(f"unreadable apiVersion {api_version!r}")
    if major != 1:
        raise DeviceJsonError(f"unsupported Vulkan major version {major}")
    environment = f"vulkan1.{minor}"
    return environment if environment in TARGET_ENVS else TARGET_ENVS[-1]


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
