"""gpuav: GPU-assisted validation for Vulkan."""

__version__ = "0.1.0"
