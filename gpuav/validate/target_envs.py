"""The Vulkan environments the validator knows, oldest first: apart from the validation
context, so that naming a device's environment reads no SPIR-V code (start-up cost)."""

TARGET_ENVS = ("vulkan1.0", "vulkan1.1", "vulkan1.2", "vulkan1.3", "vulkan1.4")
