"""Shared pytest configuration."""

import os

from hypothesis import HealthCheck, settings

from tests.harness.fixtures import vk, vk_session  # noqa: F401  (the Vulkan harness fixtures)

# Property tests run thousands of cases in CI by default; GPUAV_HYPOTHESIS_PROFILE=dev is quick.
# The CI profile is derandomized: every run tries the same cases, so a run that passed here
# passes in CI, and a case that breaks the code is found by a developer, not by chance in CI.
# GPUAV_HYPOTHESIS_PROFILE=explore keeps hunting with fresh random cases.
settings.register_profile(
    "ci",
    max_examples=1500,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("GPUAV_HYPOTHESIS_PROFILE", "ci"))
