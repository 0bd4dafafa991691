"""A small Vulkan app with real descriptor-indexing bugs, to show gpuav catching them."""
