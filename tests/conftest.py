"""Shared pytest configuration."""

import os

from hypothesis import HealthCheck, settings

from tests.harness.fixtures import vk, vk_session  # noqa: F401  (the Vulkan harness fixtures)

# Property tests run thousands of cases in CI by default; GPUAV_HYPOTHESIS_PROFILE=dev is quick.
settings.register_profile(
    "ci", max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("GPUAV_HYPOTHESIS_PROFILE", "ci"))
