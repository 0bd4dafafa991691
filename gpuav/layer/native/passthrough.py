# ruff: noqa: F821
# mypy: ignore-errors
# (``ffi`` and ``lib`` are injected by the init code that executes this file.)
"""Last-resort layer body used when gpuav itself cannot be imported in the host process.

Executed by the embedding init code with ``ffi`` and ``lib`` of the native module in its
globals; imports nothing from gpuav or the ``vulkan`` package. It walks the loader's link
chain so instance and device creation still reach the driver, and returns the next layer's
function for everything else: the app runs exactly as without the layer.
"""

LINK_INFO = 0
LOADER_INSTANCE_CREATE_INFO = 47
LOADER_DEVICE_CREATE_INFO = 48
ERROR_INITIALIZATION_FAILED = -3

next_instance_gpa = {}
next_device_gpa = {}
pending_instance_gpa = [0]


def _link(create_info, wanted_type, link_type):
    node = ffi.cast("struct gpuav_base_structure *", create_info).pNext
    while node != ffi.NULL:
        if node.sType == wanted_type:
            head = ffi.cast("struct gpuav_layer_create_info *", node)
            if head.function == LINK_INFO:
                link = ffi.cast(link_type, head.pLayerInfo)
                head.pLayerInfo = link.pNext
                return link
        node = node.pNext
    return None


def _address(function):
    return int(ffi.cast("uintptr_t", function))


@ffi.def_extern(error=ERROR_INITIALIZATION_FAILED)
def gpuav_vkCreateInstance(create_info, allocator, instance_out):
    link = _link(create_info, LOADER_INSTANCE_CREATE_INFO, "struct gpuav_layer_instance_link *")
    if link is None:
        return ERROR_INITIALIZATION_FAILED
    gpa = ffi.cast("gpuav_PFN_GetProcAddr", link.pfnNextGetInstanceProcAddr)
    create = ffi.cast("gpuav_PFN_vkCreateInstance", gpa(0, b"vkCreateInstance"))
    result = create(create_info, allocator, instance_out)
    if result == 0:
        instance = ffi.cast("uintptr_t *", instance_out)[0]
        next_instance_gpa[lib.gpuav_dispatch_key(instance)] = gpa
    return result


@ffi.def_extern(error=ERROR_INITIALIZATION_FAILED)
def gpuav_vkCreateDevice(physical_device, create_info, allocator, device_out):
    link = _link(create_info, LOADER_DEVICE_CREATE_INFO, "struct gpuav_layer_device_link *")
    if link is None:
        return ERROR_INITIALIZATION_FAILED
    instance_gpa = ffi.cast("gpuav_PFN_GetProcAddr", link.pfnNextGetInstanceProcAddr)
    device_gpa = ffi.cast("gpuav_PFN_GetProcAddr", link.pfnNextGetDeviceProcAddr)
    create = ffi.cast("gpuav_PFN_vkCreateDevice", instance_gpa(0, b"vkCreateDevice"))
    result = create(physical_device, create_info, allocator, device_out)
    if result == 0:
        device = ffi.cast("uintptr_t *", device_out)[0]
        next_device_gpa[lib.gpuav_dispatch_key(device)] = device_gpa
    return result


OWN = {
    b"vkCreateInstance": lambda: _address(lib.gpuav_vkCreateInstance),
    b"vkCreateDevice": lambda: _address(lib.gpuav_vkCreateDevice),
    b"vkGetInstanceProcAddr": lambda: _address(ffi.addressof(lib, "vkGetInstanceProcAddr")),
    b"vkGetDeviceProcAddr": lambda: _address(ffi.addressof(lib, "vkGetDeviceProcAddr")),
}


@ffi.def_extern(error=0)
def vkGetInstanceProcAddr(instance, name):
    name = ffi.string(ffi.cast("char *", name))
    own = OWN.get(name)
    if own is not None:
        return own()
    gpa = next_instance_gpa.get(lib.gpuav_dispatch_key(instance)) if instance else None
    return gpa(instance, name) if gpa is not None else 0


@ffi.def_extern(error=0)
def vkGetDeviceProcAddr(device, name):
    name = ffi.string(ffi.cast("char *", name))
    if name == b"vkGetDeviceProcAddr":
        return OWN[name]()
    gpa = next_device_gpa.get(lib.gpuav_dispatch_key(device)) if device else None
    return gpa(device, name) if gpa is not None else 0
