"""gpuav test suite."""
