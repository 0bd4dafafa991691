"""The layer's name, as its manifest, the loader and VK_EXT_layer_settings know it: a module of
its own so that instance creation reads it without importing ``build`` (start-up cost)."""

LAYER_NAME = "VK_LAYER_GPUAV_gpu_assisted"
