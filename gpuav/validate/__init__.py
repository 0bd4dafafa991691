"""Static validation of SPIR-V for Vulkan: environment rules (seed 004) and interfaces (seed 001).

Validators return ``Diagnostic`` lists and never raise on a bad module.
"""
