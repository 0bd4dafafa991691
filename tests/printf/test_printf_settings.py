"""Where the printf settings come from: environment, settings file, validation features."""

from __future__ import annotations

from pathlib import Path

from gpuav.layer.settings import (
    DEFAULT_PRINTF_BUFFER_SIZE,
    VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF,
    resolve_settings,
)


def test_printf_is_on_with_the_checks_by_default(tmp_path: Path) -> None:
    settings = resolve_settings(environ={"GPUAV_ENABLE": "1"}, cwd=tmp_path)
    assert settings.printf and settings.checks and not settings.printf_to_stdout
    assert settings.printf_buffer_size == DEFAULT_PRINTF_BUFFER_SIZE


def test_environment_variables(tmp_path: Path) -> None:
    settings = resolve_settings(
        environ={
            "GPUAV_PRINTF_ONLY": "1",
            "GPUAV_PRINTF_TO_STDOUT": "yes",
            "GPUAV_PRINTF_BUFFER_SIZE": "0x2000",
        },
        cwd=tmp_path,
    )
    assert settings.printf and not settings.checks and settings.printf_to_stdout
    assert settings.printf_buffer_size == 0x2000
    assert not resolve_settings(environ={"GPUAV_PRINTF": "0"}, cwd=tmp_path).printf


def test_settings_file_and_validation_features(tmp_path: Path) -> None:
    (tmp_path / "vk_layer_settings.txt").write_text(
        "gpuav_gpu_assisted.printf_enable = false\n"
        "gpuav_gpu_assisted.printf_buffer_size = 1002\n"
        "khronos_validation.printf_buffer_size = 7\n"
    )
    settings = resolve_settings(environ={}, cwd=tmp_path)
    assert not settings.printf
    assert settings.printf_buffer_size == 1000  # whole words
    # The environment wins over the file; VK_VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF_EXT too.
    assert resolve_settings(environ={"GPUAV_PRINTF": "1"}, cwd=tmp_path).printf
    enables = [VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF]
    assert resolve_settings(enables, environ={}, cwd=tmp_path).printf


def test_unreadable_or_tiny_buffer_sizes(tmp_path: Path) -> None:
    huge = str(1 << 40)
    for value, expected in (("lots", DEFAULT_PRINTF_BUFFER_SIZE), ("3", 64), (huge, 1 << 24)):
        environ = {"GPUAV_PRINTF_BUFFER_SIZE": value}
        assert resolve_settings(environ=environ, cwd=tmp_path).printf_buffer_size == expected
