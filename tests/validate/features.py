"""Every Vulkan feature and device extension name: "a device that enabled everything".

Names come from the ``vulkan`` package's declarations (VkBool32 members of the
VkPhysicalDevice*Features* and float-controls property structures, the subgroup-operation
flags, extension name constants) and from the capability table (names newer than the
package).
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import vulkan

from gpuav.validate.rules_capabilities import TABLE_PATH


@functools.cache
def table_names() -> tuple[frozenset[str], frozenset[str]]:
    """(features, extensions) the capability table names."""
    table = json.loads(TABLE_PATH.read_text())
    alternatives = [
        alternative
        for section in ("capabilities", "extensions")
        for choices in table[section].values()
        for alternative in choices
    ]
    return (
        frozenset(a["feature"] for a in alternatives if "feature" in a),
        frozenset(a["extension"] for a in alternatives if "extension" in a),
    )


@functools.cache
def package_names() -> tuple[frozenset[str], frozenset[str]]:
    """(features, extensions) the vulkan package declares."""
    package = Path(vulkan.__file__).parent
    cdef = (package / "vulkan.cdef.h").read_text()
    features: set[str] = set()
    pattern = (
        r"typedef struct VkPhysicalDevice\w*(?:Features|FloatControlsProperties)\w*\s*\{(.*?)\}"
    )
    for body in re.findall(pattern, cdef, re.S):
        features |= set(re.findall(r"VkBool32\s+(\w+);", body))
    features |= set(re.findall(r"VK_SUBGROUP_FEATURE_\w+_BIT\w*", cdef))
    extensions = set(re.findall(r'_EXTENSION_NAME = "(\w+)"', (package / "_vulkan.py").read_text()))
    return frozenset(features), frozenset(extensions)


def every_feature() -> frozenset[str]:
    return table_names()[0] | package_names()[0]


def every_extension() -> frozenset[str]:
    return table_names()[1] | package_names()[1]
