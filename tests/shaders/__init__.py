"""Shader sources for tests and the helper that compiles them (tests.shaders.glsl)."""
