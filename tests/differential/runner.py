"""Run every differential case once per index under whatever layers the environment loads.

``python -m tests.differential.runner SPV_FOLDER [--unchecked] [CASE...]`` reads
``<case>.spv`` (and ``vertex.spv``) from the folder, runs each case on lavapipe through the
harness, and prints one JSON object, ``{"<case>/<index>": [{"id": ..., "text": ...}, ...]}``,
with the error messages of each action.
Layers come from the loader's environment (``VK_INSTANCE_LAYERS``), so the same program runs
under the Khronos layer and under gpuav; the debug messenger is always on. ``--unchecked``
leaves out the actions known to crash lavapipe when nothing guards them.
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path
from typing import Any

import numpy as np
import vulkan as vkapi

from tests.differential.cases import CASES, OUT_BINDING, PARTIAL, VARIABLE, BindingSpec, Case
from tests.harness import PARTIALLY_BOUND, VARIABLE_COUNT, Binding, DescriptorSetSpec
from tests.harness.context import API_VERSION, DEBUG_UTILS_EXTENSION, VulkanContext


class MessengerContext(VulkanContext):
    """The harness's context with its messenger on and no layer named by the app."""

    def _create_instance(self) -> None:
        self.validation = True  # what the harness's messenger callback is kept for
        info = self._messenger_create_info()
        self._messenger_info.messageSeverity |= vkapi.VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT
        app = vkapi.VkApplicationInfo(
            pApplicationName="gpuav-differential", pEngineName="gpuav", apiVersion=API_VERSION
        )
        self.instance = vkapi.vkCreateInstance(
            vkapi.VkInstanceCreateInfo(
                pNext=info, pApplicationInfo=app, ppEnabledExtensionNames=[DEBUG_UTILS_EXTENSION]
            ),
            None,
        )
        create = vkapi.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
        self._destroy_messenger = vkapi.vkGetInstanceProcAddr(
            self.instance, "vkDestroyDebugUtilsMessengerEXT"
        )
        self._messenger = create(self.instance, info, None)


def _resource(vk: VulkanContext, kind: str, element: int, fmt: str) -> Any:
    value = np.array([[[element + 1.0, 0.5, 0.25, 1.0]]], np.float32)
    if fmt == "R32_UINT":
        value = np.array([[[element + 1]]], np.uint32)
    if kind in ("combined_image_sampler", "sampled_image", "storage_image"):
        image = vk.image(1, 1, fmt)
        image.upload(value)
        view = image.view()
        return (view, vk.sampler()) if kind == "combined_image_sampler" else view
    if kind == "sampler":
        return vk.sampler()
    buffer = vk.buffer(data=np.resize(value.reshape(-1), 64))  # room for any offset used
    if kind.endswith("texel_buffer"):
        return buffer.view(fmt)
    return buffer


def _binding(vk: VulkanContext, spec: BindingSpec) -> Binding:
    allocated = spec.length
    resources = [
        _resource(vk, spec.type, k, spec.format) if spec.is_written(k) else None
        for k in range(allocated)
    ]
    flags = 0
    if PARTIAL in spec.flags or VARIABLE in spec.flags:
        flags |= PARTIALLY_BOUND
    if VARIABLE in spec.flags:
        flags |= VARIABLE_COUNT
    return Binding(
        spec.binding,
        spec.type,
        resources,
        count=spec.count,
        flags=flags,
        variable_count=spec.variable_count,
    )


def run_case(
    vk: VulkanContext, case: Case, folder: Path, unchecked: bool
) -> dict[str, list[dict[str, str]]]:
    words = _words(folder / f"{case.name}.spv")
    found: dict[str, list[dict[str, str]]] = {}
    for index in case.indices:
        if unchecked and index in case.crashes_unchecked:
            continue
        mark = vk.mark()
        out = vk.buffer(64)
        bindings = [_binding(vk, spec) for spec in case.bindings]
        dynamic = sum(spec.length for spec in case.bindings if spec.type.endswith("_dynamic"))
        sets = {
            0: DescriptorSetSpec(
                [*bindings, Binding(OUT_BINDING, "storage_buffer", [out])], [0] * dynamic
            )
        }
        vk.clear_messages()
        if case.stage == "comp":
            data = vk.buffer(64)
            push = struct.pack("<IIQ", index, 0, data.device_address)
            vk.run_compute(words, sets, push_constants=push)
        else:
            vertex = _words(folder / "vertex.spv")
            push = struct.pack("<I", index)
            vk.run_graphics(vertex, words, sets, width=2, height=2, push_constants=push)
        found[f"{case.name}/{index}"] = [
            {"id": m.message_id, "text": m.text} for m in vk.messages if m.severity == "error"
        ]
        vk.release_since(mark)
    return found


def _words(path: Path) -> list[int]:
    data = path.read_bytes()
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def main(argv: list[str]) -> int:
    folder = Path(argv[0])
    unchecked = "--unchecked" in argv
    names = {name for name in argv[1:] if name != "--unchecked"}
    results: dict[str, list[dict[str, str]]] = {}
    with MessengerContext() as vk:
        for case in CASES:
            if not names or case.name in names:
                results.update(run_case(vk, case, folder, unchecked))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
