"""Vulkan API version numbers the layer reasons with (VK_MAKE_API_VERSION, variant 0)."""


def api_version_number(major: int, minor: int, patch: int = 0) -> int:
    return (major << 22) | (minor << 12) | patch


API_VERSION_1_0 = api_version_number(1, 0)
API_VERSION_1_1 = api_version_number(1, 1)
API_VERSION_1_2 = api_version_number(1, 2)
