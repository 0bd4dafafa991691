"""Next-layer function tables and the maps from dispatchable handles to our records.

Every dispatchable handle starts with the loader's dispatch table pointer; objects of one
instance (its physical devices) or of one device (its queues and command buffers) share it,
so that pointer keys our per-instance and per-device records.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from gpuav.layer.native import prototypes
from gpuav.layer.state import DeviceState, InstanceState


class Native:
    """The embedded module's ``ffi`` and ``lib``, set once by ``entry.attach``."""

    ffi: Any = None
    lib: Any = None


def dispatch_key(handle: int) -> int:
    return int(Native.lib.gpuav_dispatch_key(handle)) if handle else 0


def register_table(
    handle: int, get_proc_addr: Any, is_device: bool, enabled: bool, reserve: bool = False
) -> None:
    """Give layer.c the next layer of an instance or device: its C wrappers fall back to it
    when Python is not usable, and its GetProcAddr hands out our wrappers only if enabled."""
    lib = Native.lib
    flags = (lib.GPUAV_TABLE_ENABLED if enabled else 0) | (
        lib.GPUAV_TABLE_RESERVE_BINDING_SLOT if reserve else 0
    )
    address = int(Native.ffi.cast("uintptr_t", get_proc_addr))
    lib.gpuav_register_table(handle, address, int(is_device), flags)


class NextFunctions:
    """The next layer's entry points, each callable with ints (None when not available)."""

    def __init__(self, get_proc_addr: Any, handle: int, names: tuple[str, ...]) -> None:
        self.addresses: dict[str, int] = {}
        for name in names:
            self._resolve(get_proc_addr, handle, name)
        for alias, canonical in prototypes.ALIASES.items():
            # Only aliases of this table's own commands: asking vkGetDeviceProcAddr for an
            # instance-level name is an error (Khronos: WARNING-vkGetDeviceProcAddr-device).
            if canonical in names and not self.addresses.get(canonical):
                self._resolve(get_proc_addr, handle, alias, canonical)

    def _resolve(self, get_proc_addr: Any, handle: int, name: str, slot: str | None = None) -> None:
        slot = slot or name
        found = int(get_proc_addr(handle, name.encode()))
        self.addresses[slot] = found
        function = Native.ffi.cast(prototypes.typedef_name(slot), found) if found else None
        setattr(self, slot, function)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names not resolved at all: treat as unavailable.
        if name.startswith("vk"):
            return None
        raise AttributeError(name)


INSTANCE_COMMANDS: tuple[str, ...] = (
    "vkDestroyInstance",
    "vkCreateDevice",
    "vkGetPhysicalDeviceProperties",
    "vkGetPhysicalDeviceProperties2",
    "vkGetPhysicalDeviceFeatures",
    "vkGetPhysicalDeviceFeatures2",
    "vkGetPhysicalDeviceMemoryProperties",
    "vkEnumerateDeviceExtensionProperties",
    "vkCreateDebugUtilsMessengerEXT",
    "vkDestroyDebugUtilsMessengerEXT",
    "vkCreateDebugReportCallbackEXT",
    "vkDestroyDebugReportCallbackEXT",
)
DEVICE_COMMANDS: tuple[str, ...] = tuple(
    name
    for name in (*prototypes.HOOKED, *prototypes.CALLED)
    if name not in prototypes.INSTANCE_LEVEL and name not in INSTANCE_COMMANDS
)


@dataclass
class InstanceRecord:
    handle: int
    state: InstanceState
    get_proc_addr: Any
    next: NextFunctions
    # Physical device -> its properties' apiVersion etc. are read on demand; nothing cached.


@dataclass
class DeviceRecord:
    handle: int
    instance: InstanceRecord
    get_proc_addr: Any
    next: NextFunctions
    state: DeviceState | None = None


@dataclass
class Registry:
    instances: dict[int, InstanceRecord] = field(default_factory=dict)
    devices: dict[int, DeviceRecord] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def instance_of(self, handle: int) -> InstanceRecord | None:
        return self.instances.get(dispatch_key(handle)) if handle else None

    def device_of(self, handle: int) -> DeviceRecord | None:
        return self.devices.get(dispatch_key(handle)) if handle else None


REGISTRY = Registry()
