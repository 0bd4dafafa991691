"""Native front end: the shared library the Vulkan loader loads, with its logic in Python
(cffi embedding). See ``build`` (compiling it and its manifest) and ``entry`` (GetProcAddr
and the binding of every C entry point)."""
