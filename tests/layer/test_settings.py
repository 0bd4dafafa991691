"""Settings resolution (pure Python): the file format, its location, the environment."""

from __future__ import annotations

from pathlib import Path

from gpuav.layer.device_setup import choose_set_index
from gpuav.layer.settings import (
    SETTINGS_FILE_NAME,
    VALIDATION_FEATURE_ENABLE_GPU_ASSISTED,
    VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT,
    Settings,
    parse_gpu_validation,
    parse_settings_text,
    resolve_settings,
)


def test_settings_text_keeps_only_our_prefix() -> None:
    text = """
    # comment
    khronos_validation.enables = VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT
    gpuav_gpu_assisted.gpu_validation = all, reserve_binding_slot   # trailing comment
    gpuav_gpu_assisted.message_log = /tmp/log.jsonl
    not a setting
    """
    assert parse_settings_text(text) == {
        "gpu_validation": "all, reserve_binding_slot",
        "message_log": "/tmp/log.jsonl",
    }


def test_gpu_validation_values() -> None:
    assert parse_gpu_validation("all") == (True, False)
    assert parse_gpu_validation("all,reserve_binding_slot") == (True, True)
    assert parse_gpu_validation("reserve_binding_slot") == (True, True)
    assert parse_gpu_validation("none") == (False, False)
    assert parse_gpu_validation("") == (False, False)


def test_default_is_off(tmp_path: Path) -> None:
    assert resolve_settings((), environ={}, cwd=tmp_path) == Settings()


def test_validation_features(tmp_path: Path) -> None:
    enables = (VALIDATION_FEATURE_ENABLE_GPU_ASSISTED,)
    assert resolve_settings(enables, environ={}, cwd=tmp_path) == Settings(enabled=True)
    both = (*enables, VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT)
    assert resolve_settings(both, environ={}, cwd=tmp_path).reserve_binding_slot


def test_reserve_alone_does_not_enable_it(tmp_path: Path) -> None:
    enables = (VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT,)
    assert resolve_settings(enables, environ={}, cwd=tmp_path) == Settings()


def test_file_in_working_directory_and_through_settings_path(tmp_path: Path) -> None:
    (tmp_path / "vk_layer_settings.txt").write_text("gpuav_gpu_assisted.gpu_validation = all\n")
    assert resolve_settings((), environ={}, cwd=tmp_path).enabled
    other = tmp_path / "other"
    other.mkdir()
    # VK_LAYER_SETTINGS_PATH wins over the working directory, file or folder.
    assert not resolve_settings(
        (), environ={"VK_LAYER_SETTINGS_PATH": str(other)}, cwd=tmp_path
    ).enabled
    (other / "vk_layer_settings.txt").write_text(
        "gpuav_gpu_assisted.gpu_validation = reserve_binding_slot\n"
    )
    for target in (other, other / "vk_layer_settings.txt"):
        settings = resolve_settings(
            (), environ={"VK_LAYER_SETTINGS_PATH": str(target)}, cwd=tmp_path
        )
        assert settings.enabled and settings.reserve_binding_slot


def test_environment(tmp_path: Path) -> None:
    assert resolve_settings((), environ={"GPUAV_ENABLE": "1"}, cwd=tmp_path).enabled
    environ = {"GPUAV_ENABLE": "0", "GPUAV_RESERVE_BINDING_SLOT": "1"}
    enables = (VALIDATION_FEATURE_ENABLE_GPU_ASSISTED,)
    assert resolve_settings(enables, environ=environ, cwd=tmp_path) == Settings()
    log = resolve_settings(
        (), environ={"GPUAV_ENABLE": "yes", "GPUAV_MESSAGE_LOG": "x"}, cwd=tmp_path
    )
    assert log == Settings(enabled=True, message_log="x")


def test_set_index_is_the_last_slot_capped() -> None:
    assert choose_set_index(4) == 3
    assert choose_set_index(8) == 7
    assert choose_set_index(32) == 31
    assert choose_set_index(2**32 - 1) == 31


def test_layer_settings_extension_values_are_overridden_by_file_and_environment(
    tmp_path: Path,
) -> None:
    given = {"robust_buffer_warnings": "0", "printf_to_stdout": "1"}
    assert not resolve_settings([], {}, tmp_path, layer_settings=given).robust_buffer_warnings
    (tmp_path / SETTINGS_FILE_NAME).write_text("gpuav_gpu_assisted.robust_buffer_warnings = true\n")
    from_file = resolve_settings([], {}, tmp_path, layer_settings=given)
    assert from_file.robust_buffer_warnings and from_file.printf_to_stdout
    environ = {"GPUAV_ROBUST_BUFFER_WARNINGS": "off"}
    assert not resolve_settings([], environ, tmp_path, layer_settings=given).robust_buffer_warnings
