"""Reading and copying Vulkan structures at raw addresses, through the ``vulkan`` package's ffi.

Entry points receive every pointer as an int; this module turns them into typed cdata of the
``vulkan`` package (whose C declarations cover every Vulkan type) and builds the modified
copies the layer passes down. The app's memory is never written: a changed structure in a
pNext chain is replaced by a copy, together with copies of the structures that precede it.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Any

from vulkan._vulkan import ffi as vkffi

CData = Any

# Loader structures (vk_layer.h), which the vulkan package does not declare. The device one
# precedes app structures in a VkDeviceCreateInfo chain, so it may have to be copied.
STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO = 47
STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO = 48
_LOADER_DEVICE_CREATE_INFO_SIZE = 32  # sType, pNext, function, one-pointer union


def address(cdata: CData) -> int:
    return int(vkffi.cast("uintptr_t", cdata))


def at(address_value: int, type_name: str) -> CData:
    """The structure of type ``type_name`` at an address."""
    return vkffi.cast(f"{type_name} *", address_value)


def words_at(address_value: int, count: int) -> list[int]:
    return list(vkffi.unpack(vkffi.cast("uint32_t *", address_value), count))


_HANDLES = vkffi.typeof("uintptr_t *")


def handles_at(address_value: int, count: int) -> list[int]:
    """Draws bind one vertex buffer at a time: one element is read without unpacking."""
    if not address_value or not count:
        return []
    pointer = vkffi.cast(_HANDLES, address_value)
    if count == 1:
        return [pointer[0]]
    return list(vkffi.unpack(pointer, count))


def string_at(address_value: int) -> str:
    if not address_value:
        return ""
    return str(vkffi.string(vkffi.cast("char *", address_value)).decode("utf-8", "replace"))


def bytes_at(address_value: int, size: int) -> bytes:
    """``size`` bytes from ``address_value``, copied once; none read where ``size`` is 0 (the
    address may then be null)."""
    return bytes(vkffi.buffer(vkffi.cast("char *", address_value), size)) if size else b""


def chain(first: int) -> Iterator[tuple[int, int]]:
    """(sType, address) of each structure of a pNext chain starting at ``first``."""
    node = first
    while node:
        header = vkffi.cast("VkBaseInStructure *", node)
        yield int(header.sType), node
        node = address(header.pNext)


def find(first: int, structure_type: int) -> int:
    """Address of the first structure of that type in the chain, or 0."""
    for found_type, node in chain(first):
        if found_type == structure_type:
            return node
    return 0


@cache
def _structure_names() -> dict[int, str]:
    """sType value -> structure name, from the package's constructors, whose first parameter
    is ``sType`` with the structure's own type as its default (a scan of the module's names:
    reading and searching its source cost 18 ms on the lent H100)."""
    import vulkan._vulkan as package

    names: dict[int, str] = {}
    for name, value in vars(package).items():
        if not name.startswith("Vk"):
            continue
        defaults = getattr(value, "__defaults__", None)
        if defaults and type(defaults[0]) is int and value.__code__.co_varnames[:1] == ("sType",):
            names.setdefault(defaults[0], name)
    return names


def structure_size(structure_type: int) -> int | None:
    """Bytes of a chained structure, from its sType (None when unknown)."""
    if structure_type == STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO:
        return _LOADER_DEVICE_CREATE_INFO_SIZE
    name = _structure_names().get(structure_type)
    return int(vkffi.sizeof(name)) if name else None


def copy_bytes(source: int, size: int, keep: list[CData]) -> int:
    """A heap copy of ``size`` bytes at ``source``; ``keep`` holds it alive."""
    buffer = vkffi.new("char[]", size)
    vkffi.memmove(buffer, vkffi.cast("char *", source), size)
    keep.append(buffer)
    return address(buffer)


def replace_in_chain(first: int, target: int, replacement: int, keep: list[CData]) -> int | None:
    """A new chain head where ``target`` is replaced by ``replacement``.

    The structures before the target are copied (their pNext must change); those after are
    shared with the app. None when a preceding structure is of a type we cannot size.
    """
    before: list[tuple[int, int]] = []
    for structure_type, node in chain(first):
        if node == target:
            break
        before.append((structure_type, node))
    else:
        return None
    following = replacement
    for structure_type, node in reversed(before):
        size = structure_size(structure_type)
        if size is None:
            return None
        copy = copy_bytes(node, size, keep)
        vkffi.cast("VkBaseOutStructure *", copy).pNext = vkffi.cast(
            "VkBaseOutStructure *", following
        )
        following = copy
    return following


def copy_struct(source: int, type_name: str, keep: list[CData]) -> CData:
    """A typed heap copy of one structure."""
    copy = vkffi.new(f"{type_name} *")
    vkffi.memmove(copy, vkffi.cast(f"{type_name} *", source), vkffi.sizeof(type_name))
    keep.append(copy)
    return copy
