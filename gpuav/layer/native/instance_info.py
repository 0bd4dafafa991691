"""What an app's VkInstanceCreateInfo asks of gpuav: its API version, its validation features
and our layer's VK_EXT_layer_settings; and the copy of it that asks for another API version.

vkCreateInstance starts the layer's Python side. Reading its create info through the ``vulkan``
package would import that package's cffi tables, the largest import of the layer, before anything
needs them (start-up cost), so it is read through the layer's own ffi. ``declarations``
writes, at build time, the few structures read here from the package's own declarations, with
every pointer widened to ``uintptr_t`` and every enum to ``int32_t`` as ``prototypes`` does for
commands: the layout stays the package's.
"""

from __future__ import annotations

from gpuav.layer.native.dispatch import Native
from gpuav.layer.native.layer_name import LAYER_NAME
from gpuav.layer.settings import Settings, resolve_settings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

STRUCTURES = (
    "VkApplicationInfo",
    "VkInstanceCreateInfo",
    "VkValidationFeaturesEXT",
    "VkLayerSettingEXT",
    "VkLayerSettingsCreateInfoEXT",
)
# VkStructureType values (the Vulkan specification's; a test compares them with the package's).
STRUCTURE_TYPE_APPLICATION_INFO = 0
STRUCTURE_TYPE_VALIDATION_FEATURES = 1000247000
STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO = 1000496000

# VkLayerSettingTypeEXT -> the C type of the values and how one is written as settings text.
SETTING_VALUE_TYPES: dict[int, tuple[str, Callable[[Any], str]]] = {
    0: ("uint32_t", lambda value: "1" if value else "0"),  # BOOL32
    1: ("int32_t", str),  # INT32
    2: ("int64_t", str),  # INT64
    3: ("uint32_t", str),  # UINT32
    4: ("uint64_t", str),  # UINT64
    5: ("float", str),  # FLOAT32
    6: ("double", str),  # FLOAT64
    7: ("char *", lambda value: Native.ffi.string(value).decode("utf-8", "replace")),  # STRING
}


def struct_name(vulkan_name: str) -> str:
    """The layer's declaration of a structure of ``STRUCTURES``."""
    return f"struct gpuav_{vulkan_name}"


def _field_type(ctype: Any) -> str:
    if ctype.kind == "pointer":
        return "uintptr_t"
    if ctype.kind == "enum":
        return "int32_t"
    if ctype.kind == "primitive":
        return str(ctype.cname)
    raise ValueError(f"unsupported field kind {ctype.kind} ({ctype.cname})")


def declarations() -> str:
    """C declarations of ``STRUCTURES`` for both the layer's C source and its cdef (build time)."""
    from vulkan._vulkan import ffi as vkffi

    lines = []
    for name in STRUCTURES:
        fields = " ".join(
            f"{_field_type(field.type)} {field_name};"
            for field_name, field in vkffi.typeof(name).fields
        )
        lines.append(f"{struct_name(name)} {{ {fields} }};")
    return "\n".join(lines) + "\n"


def _at(address: int, vulkan_name: str) -> Any:
    return Native.ffi.cast(f"{struct_name(vulkan_name)} *", address)


def _address(cdata: Any) -> int:
    return int(Native.ffi.cast("uintptr_t", cdata))


def _find(first: int, structure_type: int) -> int:
    """Address of the first structure of that type in the pNext chain, or 0."""
    ffi = Native.ffi
    node = ffi.cast("struct gpuav_base_structure *", first)
    while node != ffi.NULL:
        if node.sType == structure_type:
            return _address(node)
        node = node.pNext
    return 0


def _string(address: int) -> str:
    return str(Native.ffi.string(Native.ffi.cast("char *", address)).decode("utf-8", "replace"))


def instance_settings(create_info: int) -> tuple[Settings, int]:
    """The settings an instance asks for, and the apiVersion of its VkApplicationInfo (0: none)."""
    info = _at(create_info, "VkInstanceCreateInfo")
    api_version = 0
    if info.pApplicationInfo:
        api_version = int(_at(info.pApplicationInfo, "VkApplicationInfo").apiVersion)
    enables: list[int] = []
    found = _find(info.pNext, STRUCTURE_TYPE_VALIDATION_FEATURES)
    if found:
        features = _at(found, "VkValidationFeaturesEXT")
        values = Native.ffi.cast("int32_t *", features.pEnabledValidationFeatures)
        enables = [int(values[index]) for index in range(features.enabledValidationFeatureCount)]
    return resolve_settings(enables, layer_settings=_layer_settings(info)), api_version


def _layer_settings(info: Any) -> dict[str, str]:
    """Our layer's VK_EXT_layer_settings values as settings-file text (lists comma-joined)."""
    found = _find(info.pNext, STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO)
    if not found:
        return {}
    chained = _at(found, "VkLayerSettingsCreateInfoEXT")
    settings = Native.ffi.cast(f"{struct_name('VkLayerSettingEXT')} *", chained.pSettings)
    values: dict[str, str] = {}
    for index in range(chained.settingCount):
        setting = settings[index]
        if not setting.pLayerName or not setting.pSettingName or not setting.pValues:
            continue
        if _string(setting.pLayerName) != LAYER_NAME:
            continue
        value_type = SETTING_VALUE_TYPES.get(int(setting.type))
        if value_type is None:
            continue
        c_type, write = value_type
        array = Native.ffi.cast(f"{c_type} *", setting.pValues)
        items = [write(array[item]) for item in range(setting.valueCount)]
        values[_string(setting.pSettingName)] = ",".join(items)
    return values


def with_api_version(create_info: int, api_version: int, keep: list[Any]) -> int:
    """A copy of the VkInstanceCreateInfo asking for ``api_version`` (the app's own
    VkApplicationInfo copied, or a new one when it gave none); ``keep`` holds the copies."""
    ffi = Native.ffi
    copy = ffi.new(f"{struct_name('VkInstanceCreateInfo')} *")
    ffi.memmove(copy, _at(create_info, "VkInstanceCreateInfo"), ffi.sizeof(copy[0]))
    application = ffi.new(f"{struct_name('VkApplicationInfo')} *")
    keep += [copy, application]
    if copy.pApplicationInfo:
        source = _at(copy.pApplicationInfo, "VkApplicationInfo")
        ffi.memmove(application, source, ffi.sizeof(application[0]))
    else:
        application.sType = STRUCTURE_TYPE_APPLICATION_INFO
    application.apiVersion = api_version
    copy.pApplicationInfo = _address(application)
    return _address(copy)
