"""Next-layer function tables and the maps from dispatchable handles to our records.

Every dispatchable handle starts with the loader's dispatch table pointer; objects of one
instance (its physical devices) or of one device (its queues and command buffers) share it,
so that pointer keys our per-instance and per-device records.

The first vkCreateInstance imports this module: its records are plain classes and the engine's
state is named for the type checker only (start-up cost).
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock, without importing threading

from gpuav.layer.native import prototypes

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

    from gpuav.layer.instance_state import InstanceState
    from gpuav.layer.state import CommandBufferState, DeviceState

LAYER_LINK_INFO = 0  # VkLayerFunction's VK_LAYER_LINK_INFO


class Native:
    """The embedded module's ``ffi`` and ``lib``, set once by ``entry.attach``."""

    ffi: Any = None
    lib: Any = None


def dispatch_key(handle: int) -> int:
    return int(Native.lib.gpuav_dispatch_key(handle)) if handle else 0


def take_link(create_info: int, structure_type: int, link_type: str) -> Any:
    """Find our VK_LAYER_LINK_INFO element of the loader's create info in the chain and
    advance it for the next layer; None when there is none."""
    ffi = Native.ffi
    node = ffi.cast("struct gpuav_base_structure *", create_info).pNext
    while node != ffi.NULL:
        if node.sType == structure_type:
            head = ffi.cast("struct gpuav_layer_create_info *", node)
            if head.function == LAYER_LINK_INFO and head.pLayerInfo != ffi.NULL:
                link = ffi.cast(link_type, head.pLayerInfo)
                head.pLayerInfo = link.pNext
                return link
        node = node.pNext
    return None


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


class InstanceRecord:
    """An instance with GPU-AV on. Its physical devices' properties are read on demand."""

    __slots__ = ("get_proc_addr", "handle", "next", "state")

    def __init__(
        self, handle: int, state: InstanceState, get_proc_addr: Any, next: NextFunctions
    ) -> None:
        self.handle = handle
        self.state = state
        self.get_proc_addr = get_proc_addr
        self.next = next


class DeviceRecord:
    """A device of one of our instances; ``state`` is the engine's (None until made)."""

    __slots__ = ("get_proc_addr", "handle", "instance", "next", "state")

    def __init__(
        self,
        handle: int,
        instance: InstanceRecord,
        get_proc_addr: Any,
        next: NextFunctions,
        state: DeviceState | None = None,
    ) -> None:
        self.handle = handle
        self.instance = instance
        self.get_proc_addr = get_proc_addr
        self.next = next
        self.state = state


def enabled_state(record: DeviceRecord | None) -> DeviceState | None:
    """The engine's state of a device gpuav checks; None where it passes the device through."""
    if record is None or record.state is None or not record.state.enabled:
        return None
    return record.state


class Registry:
    """Our records by dispatch key."""

    def __init__(self) -> None:
        self.instances: dict[int, InstanceRecord] = {}
        self.devices: dict[int, DeviceRecord] = {}
        self.lock = allocate_lock()

    def instance_of(self, handle: int) -> InstanceRecord | None:
        return self.instances.get(dispatch_key(handle)) if handle else None

    def device_of(self, handle: int) -> DeviceRecord | None:
        return self.devices.get(dispatch_key(handle)) if handle else None


REGISTRY = Registry()


# Command buffer handle -> its state, for the hooks a renderer calls per draw. A hit counts only
# while its device's map still holds that very state (a freed command buffer, or one of a
# destroyed device, is looked up again), and spares the call into C that finds the device.
RECORDING: dict[int, CommandBufferState] = {}
_KEPT_RECORDING = 4096


def recording_state(command_buffer: int) -> CommandBufferState | None:
    """The state of a command buffer gpuav tracks, found through its device and kept in
    ``RECORDING``; None where gpuav tracks none."""
    record = REGISTRY.devices.get(dispatch_key(command_buffer))
    device = None if record is None else record.state
    state = None if device is None else device.command_buffers.get(command_buffer)
    if state is not None:
        if len(RECORDING) >= _KEPT_RECORDING:
            RECORDING.clear()
        RECORDING[command_buffer] = state
    return state


def tracked_command_buffer(command_buffer: int) -> CommandBufferState | None:
    """``RECORDING``'s state for the handle where its device still holds it, else
    ``recording_state``'s. The draw hooks write this out."""
    state = RECORDING.get(command_buffer)
    if state is None or state.device.command_buffers.get(command_buffer) is not state:
        return recording_state(command_buffer)
    return state


def forget_recording(device: DeviceState) -> None:
    """Drop a destroyed device's command buffers from ``RECORDING`` (their handles may come
    back as another device's)."""
    for handle, state in list(RECORDING.items()):
        if state.device is device:
            del RECORDING[handle]
