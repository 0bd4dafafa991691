"""Shared pytest configuration."""

from tests.harness.fixtures import vk, vk_session  # noqa: F401  (the Vulkan harness fixtures)
