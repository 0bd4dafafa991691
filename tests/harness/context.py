"""One Vulkan instance, device, queue and command pool shared by a test session.

The context prefers lavapipe (the project's test device), enables every feature the tests of
the instrumentation may need (see ``features.py``), and, when asked, loads the Khronos
validation layer with a debug messenger that collects messages, so a test can assert that the
harness's own Vulkan usage is clean. It owns every object made through it and destroys what is
left in ``close()``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import vulkan as vkapi

from gpuav.errors import SetupError
from tests.harness import features as feature_chain
from tests.harness.buffers import Buffer, BytesLike
from tests.harness.debug_buffer import DEFAULT_SET, DebugOutputBuffer
from tests.harness.graphics import run_graphics
from tests.harness.images import Image, Sampler
from tests.harness.pipeline import RunResult, run_compute

ffi = vkapi.ffi

VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"
DEBUG_UTILS_EXTENSION = "VK_EXT_debug_utils"
API_VERSION = vkapi.VK_MAKE_VERSION(1, 3, 0)
DEVICE_ENV = "GPUAV_TEST_DEVICE"  # substring of the device name to pick instead of lavapipe
FENCE_TIMEOUT_NS = 60 * 1_000_000_000

_SEVERITY_NAMES = {
    vkapi.VK_DEBUG_UTILS_MESSAGE_SEVERITY_VERBOSE_BIT_EXT: "verbose",
    vkapi.VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT: "info",
    vkapi.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT: "warning",
    vkapi.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT: "error",
}


@dataclass(frozen=True)
class ValidationMessage:
    """One message from the validation layer (or the loader) through the debug messenger."""

    severity: str
    message_id: str
    text: str

    def __str__(self) -> str:
        return f"[{self.severity}] {self.message_id}: {self.text}"


def _c_string(pointer: Any) -> str:
    if pointer == ffi.NULL:
        return ""
    return str(ffi.string(pointer).decode("utf-8", "replace"))


class VulkanContext:
    """Instance, device, queue and command pool; plus factories for the harness's objects."""

    def __init__(self, validation: bool = False, device_name: str | None = None) -> None:
        self.messages: list[ValidationMessage] = []
        # Objects with destroy() by id, with their creation number; released newest first.
        self._owned: dict[int, tuple[int, Any]] = {}
        self._sequence = 0
        self._closed = False
        self.instance: Any = None
        self.device: Any = None
        self._messenger: Any = None
        self._destroy_messenger: Callable[..., None] | None = None
        self.validation_requested = validation
        self.validation = validation and VALIDATION_LAYER in _instance_layers()
        self._create_instance()
        self.physical_device, self.device_name = _pick_device(
            self.instance, device_name or os.environ.get(DEVICE_ENV)
        )
        self.properties = vkapi.vkGetPhysicalDeviceProperties(self.physical_device)
        self.limits = self.properties.limits
        self.memory_properties = vkapi.vkGetPhysicalDeviceMemoryProperties(self.physical_device)
        self._create_device()

    # -- set-up ---------------------------------------------------------------------------------

    def _create_instance(self) -> None:
        layers = [VALIDATION_LAYER] if self.validation else []
        available = {e.extensionName for e in vkapi.vkEnumerateInstanceExtensionProperties(None)}
        use_messenger = self.validation and DEBUG_UTILS_EXTENSION in available
        extensions = [DEBUG_UTILS_EXTENSION] if use_messenger else []
        messenger_info = self._messenger_create_info() if use_messenger else None
        app = vkapi.VkApplicationInfo(
            pApplicationName="gpuav-tests", pEngineName="gpuav-harness", apiVersion=API_VERSION
        )
        # The messenger info in pNext also reports problems in vkCreate/DestroyInstance.
        info = vkapi.VkInstanceCreateInfo(
            pNext=messenger_info,
            pApplicationInfo=app,
            ppEnabledLayerNames=layers or None,
            ppEnabledExtensionNames=extensions or None,
        )
        self.instance = vkapi.vkCreateInstance(info, None)
        if messenger_info is not None:
            create = vkapi.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
            self._destroy_messenger = vkapi.vkGetInstanceProcAddr(
                self.instance, "vkDestroyDebugUtilsMessengerEXT"
            )
            self._messenger = create(self.instance, messenger_info, None)

    def _messenger_create_info(self) -> Any:
        # Built by hand with our own ffi.callback: the package's constructor stores the Python
        # callback in one module-global slot, which any later messenger would overwrite.
        def on_message(severity: int, _types: int, data: Any, _user: Any) -> int:
            self.messages.append(
                ValidationMessage(
                    _SEVERITY_NAMES.get(severity, str(severity)),
                    _c_string(data.pMessageIdName),
                    _c_string(data.pMessage),
                )
            )
            return int(vkapi.VK_FALSE)

        self._callback = ffi.callback("PFN_vkDebugUtilsMessengerCallbackEXT", on_message)
        info = ffi.new("VkDebugUtilsMessengerCreateInfoEXT*")
        info.sType = vkapi.VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT
        info.messageSeverity = (
            vkapi.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
            | vkapi.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT
        )
        info.messageType = (
            vkapi.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
            | vkapi.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
            | vkapi.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT
        )
        info.pfnUserCallback = self._callback
        self._messenger_info = info
        return info[0]

    def _create_device(self) -> None:
        families = list(vkapi.vkGetPhysicalDeviceQueueFamilyProperties(self.physical_device))
        wanted = vkapi.VK_QUEUE_GRAPHICS_BIT | vkapi.VK_QUEUE_COMPUTE_BIT
        family = next((i for i, f in enumerate(families) if f.queueFlags & wanted == wanted), None)
        if family is None:
            raise SetupError(f"{self.device_name}: no queue family with graphics and compute")
        self.queue_family = family
        self.device_extensions = sorted(
            e.extensionName
            for e in vkapi.vkEnumerateDeviceExtensionProperties(self.physical_device, None)
        )
        with_xfb = feature_chain.TRANSFORM_FEEDBACK_EXTENSION in self.device_extensions
        self.supported_features = feature_chain.query_features(self.physical_device, with_xfb)
        chain = feature_chain.enable_chain(self.supported_features, with_xfb)
        self.enabled_features = frozenset(name for name, on in chain.as_dict().items() if on)
        queue_info = vkapi.VkDeviceQueueCreateInfo(
            queueFamilyIndex=family, queueCount=1, pQueuePriorities=[1.0]
        )
        extensions = [feature_chain.TRANSFORM_FEEDBACK_EXTENSION] if with_xfb else []
        info = vkapi.VkDeviceCreateInfo(
            pNext=chain.head[0],
            pQueueCreateInfos=[queue_info],
            ppEnabledExtensionNames=extensions or None,
        )
        self.enabled_extensions = tuple(extensions)
        self.device = vkapi.vkCreateDevice(self.physical_device, info, None)
        self.queue = vkapi.vkGetDeviceQueue(self.device, family, 0)
        pool_info = vkapi.VkCommandPoolCreateInfo(
            flags=vkapi.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, queueFamilyIndex=family
        )
        self.command_pool = vkapi.vkCreateCommandPool(self.device, pool_info, None)

    # -- features and messages ------------------------------------------------------------------

    def has_feature(self, name: str) -> bool:
        return name in self.enabled_features

    def require(self, *names: str) -> None:
        """Raise SetupError naming every listed feature the device did not give us."""
        missing = [name for name in names if name not in self.enabled_features]
        if missing:
            raise SetupError(f"{self.device_name} lacks features: {', '.join(missing)}")

    @property
    def validation_errors(self) -> list[ValidationMessage]:
        return [m for m in self.messages if m.severity == "error"]

    def clear_messages(self) -> None:
        self.messages.clear()

    # -- memory and submission ------------------------------------------------------------------

    def memory_type(self, type_bits: int, required: int, preferred: int = 0) -> int:
        """Index of a memory type allowed by ``type_bits`` with ``required`` (and, if any has
        them, ``preferred``) property flags."""
        props = self.memory_properties
        candidates = [
            i
            for i in range(props.memoryTypeCount)
            if type_bits & (1 << i) and props.memoryTypes[i].propertyFlags & required == required
        ]
        if not candidates:
            raise SetupError(f"no memory type with flags {required:#x} in bits {type_bits:#x}")
        best = [
            i for i in candidates if props.memoryTypes[i].propertyFlags & preferred == preferred
        ]
        return (best or candidates)[0]

    def submit(self, record: Callable[[Any], None]) -> None:
        """Record one command buffer with ``record(command_buffer)``, submit it, and wait."""
        alloc = vkapi.VkCommandBufferAllocateInfo(
            commandPool=self.command_pool,
            level=vkapi.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            commandBufferCount=1,
        )
        command_buffer = vkapi.vkAllocateCommandBuffers(self.device, alloc)[0]
        fence = vkapi.vkCreateFence(self.device, vkapi.VkFenceCreateInfo(), None)
        try:
            begin = vkapi.VkCommandBufferBeginInfo(
                flags=vkapi.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT
            )
            vkapi.vkBeginCommandBuffer(command_buffer, begin)
            record(command_buffer)
            vkapi.vkEndCommandBuffer(command_buffer)
            command_buffers = [command_buffer]
            submit = vkapi.VkSubmitInfo(pCommandBuffers=command_buffers)
            vkapi.vkQueueSubmit(self.queue, 1, [submit], fence)
            vkapi.vkWaitForFences(self.device, 1, [fence], vkapi.VK_TRUE, FENCE_TIMEOUT_NS)
        finally:
            vkapi.vkDestroyFence(self.device, fence, None)
            vkapi.vkFreeCommandBuffers(self.device, self.command_pool, 1, [command_buffer])

    # -- factories and runs ---------------------------------------------------------------------

    def buffer(self, size: int | None = None, data: BytesLike | None = None) -> Buffer:
        """A zero-filled mapped buffer of ``size`` bytes (default: the size of ``data``)."""
        if size is None:
            if data is None:
                raise ValueError("buffer() needs a size or data")
            size = len(data.tobytes() if hasattr(data, "tobytes") else bytes(data))
        return Buffer(self, size, data)

    def image(
        self,
        width: int,
        height: int,
        fmt: str | int = "R8G8B8A8_UNORM",
        layers: int = 1,
        mip_levels: int = 1,
    ) -> Image:
        return Image(self, width, height, fmt, layers, mip_levels)

    def sampler(self, linear: bool = False, repeat: bool = False) -> Sampler:
        return Sampler(self, linear, repeat)

    def debug_buffer(
        self, capacity_words: int = 1024, set_index: int = DEFAULT_SET
    ) -> DebugOutputBuffer:
        return DebugOutputBuffer(self, capacity_words, set_index)

    def run_compute(self, spirv_words: Any, sets: Any = None, **options: Any) -> RunResult:
        """See ``tests.harness.pipeline.run_compute``."""
        return run_compute(self, spirv_words, sets, **options)

    def run_graphics(
        self, vertex_words: Any, fragment_words: Any, sets: Any = None, **options: Any
    ) -> RunResult:
        """See ``tests.harness.graphics.run_graphics``."""
        return run_graphics(self, vertex_words, fragment_words, sets, **options)

    # -- ownership ------------------------------------------------------------------------------

    def own(self, obj: Any) -> None:
        self._owned[id(obj)] = (self._sequence, obj)
        self._sequence += 1

    def disown(self, obj: Any) -> None:
        self._owned.pop(id(obj), None)

    def mark(self) -> int:
        """A point to release back to: objects made after it go in ``release_since``."""
        return self._sequence

    def release_since(self, mark: int) -> None:
        """Destroy, newest first, every object made since ``mark`` that is still alive."""
        vkapi.vkDeviceWaitIdle(self.device)
        for sequence, obj in sorted(self._owned.values(), key=lambda item: -item[0]):
            if sequence >= mark:
                obj.destroy()

    def close(self) -> None:
        """Destroy everything still owned, then the device and the instance."""
        if self._closed:
            return
        self._closed = True
        if self.device is not None:
            self.release_since(0)
            vkapi.vkDestroyCommandPool(self.device, self.command_pool, None)
            vkapi.vkDestroyDevice(self.device, None)
        if self._messenger is not None and self._destroy_messenger is not None:
            self._destroy_messenger(self.instance, self._messenger, None)
        if self.instance is not None:
            vkapi.vkDestroyInstance(self.instance, None)

    def __enter__(self) -> VulkanContext:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _instance_layers() -> set[str]:
    return {layer.layerName for layer in vkapi.vkEnumerateInstanceLayerProperties()}


def _pick_device(instance: Any, name_contains: str | None) -> tuple[Any, str]:
    """lavapipe unless ``name_contains`` names another device; SetupError when there is none."""
    try:
        devices: Sequence[Any] = list(vkapi.vkEnumeratePhysicalDevices(instance))
    except vkapi.VkError as error:
        raise SetupError(f"enumerating Vulkan devices failed: {error!r}") from error
    if not devices:
        raise SetupError(
            "no Vulkan device found: install Mesa's lavapipe (mesa-vulkan-drivers) and the loader"
        )
    named = [(d, vkapi.vkGetPhysicalDeviceProperties(d).deviceName) for d in devices]
    wanted = (name_contains or "llvmpipe").lower()
    for device, name in named:
        if wanted in name.lower():
            return device, name
    if name_contains:
        found = ", ".join(name for _, name in named)
        raise SetupError(f"no Vulkan device named like {name_contains!r}; found: {found}")
    return named[0]
