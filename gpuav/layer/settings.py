"""Whether GPU-AV is on for an instance, and with which options.

GPU-AV is off by default (seed 000, "Options"). It is turned on by any of:

- ``VK_EXT_validation_features`` in the instance create info
  (``VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT``, ``..._RESERVE_BINDING_SLOT_EXT``);
- the layer settings file ``vk_layer_settings.txt``, found through ``VK_LAYER_SETTINGS_PATH``
  (a file, or a folder holding it) or else in the working directory, with keys under our
  layer's prefix: ``gpuav_gpu_assisted.gpu_validation = all,reserve_binding_slot``;
- environment variables: ``GPUAV_ENABLE=1``, ``GPUAV_RESERVE_BINDING_SLOT=1``;
- ``VK_EXT_layer_settings`` (``VkLayerSettingsCreateInfoEXT`` for our layer's name): the same
  keys as the settings file, which overrides them, as the environment overrides both.

``robust_buffer_warnings`` (``GPUAV_ROBUST_BUFFER_WARNINGS``, on by default): with
``robustBufferAccess`` or ``robustBufferAccess2`` on, out-of-range buffer accesses are defined
behaviour, reported as warnings; off, they are not reported.

``GPUAV_ENABLE=0`` turns it off whatever else asks for it. ``GPUAV_MESSAGE_LOG`` names a file
that receives every message as a JSON line (what ``gpuav run`` reads).

Shader printf (``debugPrintfEXT``) is on with GPU-AV unless ``GPUAV_PRINTF=0`` (file key
``printf_enable``; ``VK_VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF_EXT`` asks for it too).
``GPUAV_PRINTF_ONLY=1`` (``printf_only``) keeps printf and turns the checks off;
``GPUAV_PRINTF_TO_STDOUT=1`` (``printf_to_stdout``) prints the lines on stdout instead of
sending them to the messengers; ``GPUAV_PRINTF_BUFFER_SIZE`` (``printf_buffer_size``) is the
bytes of printf records each draw or dispatch can hold.

What the intake and the pass made of each module is kept by content (``module_cache``), in
memory and in files under ``$XDG_CACHE_HOME/gpuav/modules``: ``GPUAV_SHADER_CACHE=0``
(``shader_cache``) turns that off, ``GPUAV_SHADER_CACHE_PATH`` (``shader_cache_path``) names
another folder.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

SETTINGS_PREFIX = "gpuav_gpu_assisted"
SETTINGS_FILE_NAME = "vk_layer_settings.txt"

# VkValidationFeatureEnableEXT values (VK_EXT_validation_features).
VALIDATION_FEATURE_ENABLE_GPU_ASSISTED = 0
VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT = 1
VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF = 3
DEFAULT_PRINTF_BUFFER_SIZE = 4096
MAX_PRINTF_BUFFER_SIZE = 1 << 24

_TRUE = {"1", "true", "yes", "on", "all"}
_FALSE = {"0", "false", "no", "off", "none"}


class Settings:
    """An instance's settings, compared by value. Read at every vkCreateInstance, so a plain
    class: a dataclass would import ``dataclasses``, a named tuple ``typing``, before anything
    else needs them (start-up cost)."""

    __slots__ = (
        "checks",
        "enabled",
        "message_log",
        "printf",
        "printf_buffer_size",
        "printf_to_stdout",
        "reserve_binding_slot",
        "robust_buffer_warnings",
        "shader_cache",
        "shader_cache_path",
    )

    def __init__(
        self,
        enabled: bool = False,
        reserve_binding_slot: bool = False,
        message_log: str | None = None,
        printf: bool = True,
        checks: bool = True,  # off with printf only
        printf_to_stdout: bool = False,
        printf_buffer_size: int = DEFAULT_PRINTF_BUFFER_SIZE,  # bytes per action
        robust_buffer_warnings: bool = True,
        shader_cache: bool = True,
        shader_cache_path: str | None = None,  # None: module_cache's default folder
    ) -> None:
        self.enabled = enabled
        self.reserve_binding_slot = reserve_binding_slot
        self.message_log = message_log
        self.printf = printf
        self.checks = checks
        self.printf_to_stdout = printf_to_stdout
        self.printf_buffer_size = printf_buffer_size
        self.robust_buffer_warnings = robust_buffer_warnings
        self.shader_cache = shader_cache
        self.shader_cache_path = shader_cache_path

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Settings) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Settings({fields})"

    def replace(self, **changes: Any) -> Settings:
        """These settings with some changed."""
        return Settings(**{name: getattr(self, name) for name in self.__slots__} | changes)


def find_settings_file(environ: Mapping[str, str], cwd: str | os.PathLike[str]) -> str | None:
    """The settings file the Khronos convention points at, if it exists (``os.path``, since
    ``pathlib`` is a large import at instance creation)."""
    explicit = environ.get("VK_LAYER_SETTINGS_PATH")
    if explicit:
        candidate = (
            os.path.join(explicit, SETTINGS_FILE_NAME) if os.path.isdir(explicit) else explicit
        )
        return candidate if os.path.isfile(candidate) else None
    candidate = os.path.join(cwd, SETTINGS_FILE_NAME)
    return candidate if os.path.isfile(candidate) else None


def parse_settings_text(text: str) -> dict[str, str]:
    """Our layer's ``key = value`` lines, keys without the prefix; other layers' are ignored."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if "=" not in line:
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        prefix, dot, name = key.partition(".")
        if dot and prefix.lower() == SETTINGS_PREFIX:
            values[name.lower()] = value
    return values


def parse_gpu_validation(value: str) -> tuple[bool, bool]:
    """(enabled, reserve binding slot) from ``all``, ``reserve_binding_slot``, ``none``..."""
    words = {word.strip().lower() for word in value.replace(",", " ").split() if word.strip()}
    reserve = "reserve_binding_slot" in words
    enabled = bool(words & _TRUE) or reserve
    if words & _FALSE and not enabled:
        return False, False
    return enabled, reserve


def _flag(value: str | None) -> bool | None:
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    return None


def resolve_settings(
    validation_feature_enables: Iterable[int] = (),
    environ: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    layer_settings: Mapping[str, str] | None = None,
) -> Settings:
    """Combine the programmatic (validation features, ``layer_settings`` from
    VK_EXT_layer_settings), file and environment sources into one answer."""
    environ = os.environ if environ is None else environ
    enables = set(validation_feature_enables)
    enabled = VALIDATION_FEATURE_ENABLE_GPU_ASSISTED in enables
    reserve = VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT in enables

    path = find_settings_file(environ, os.getcwd() if cwd is None else cwd)
    file_values: dict[str, str] = {k.lower(): v for k, v in (layer_settings or {}).items()}
    if path is not None:
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                text = file.read()
            file_values.update(parse_settings_text(text))
        except OSError:
            pass
    if "gpu_validation" in file_values:
        file_enabled, file_reserve = parse_gpu_validation(file_values["gpu_validation"])
        enabled = enabled or file_enabled
        reserve = reserve or file_reserve
    if _flag(file_values.get("reserve_binding_slot")):
        reserve = True

    env_enable = _flag(environ.get("GPUAV_ENABLE"))
    if env_enable is not None:
        enabled = env_enable
    if _flag(environ.get("GPUAV_RESERVE_BINDING_SLOT")):
        reserve = True
    message_log = environ.get("GPUAV_MESSAGE_LOG") or file_values.get("message_log") or None
    printf_only = _setting(environ, file_values, "printf_only") is True
    printf = _setting(environ, file_values, "printf_enable", "GPUAV_PRINTF") is not False
    if VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF in enables or printf_only:
        printf = True
    return Settings(
        enabled=enabled,
        reserve_binding_slot=enabled and reserve,
        message_log=message_log,
        printf=printf,
        checks=not printf_only,
        printf_to_stdout=_setting(environ, file_values, "printf_to_stdout") is True,
        printf_buffer_size=_buffer_size(
            environ.get("GPUAV_PRINTF_BUFFER_SIZE") or file_values.get("printf_buffer_size")
        ),
        robust_buffer_warnings=_setting(environ, file_values, "robust_buffer_warnings")
        is not False,
        shader_cache=_setting(environ, file_values, "shader_cache") is not False,
        shader_cache_path=environ.get("GPUAV_SHADER_CACHE_PATH")
        or file_values.get("shader_cache_path")
        or None,
    )


def _setting(
    environ: Mapping[str, str], file_values: Mapping[str, str], key: str, variable: str = ""
) -> bool | None:
    """A flag from ``GPUAV_<KEY>`` (or ``variable``), else the settings file, else None."""
    from_environment = _flag(environ.get(variable or f"GPUAV_{key.upper()}"))
    return from_environment if from_environment is not None else _flag(file_values.get(key))


def _buffer_size(value: str | None) -> int:
    """Bytes, whole words, at least one record's worth; the default when unreadable."""
    try:
        size = int(value, 0) if value else DEFAULT_PRINTF_BUFFER_SIZE
    except ValueError:
        return DEFAULT_PRINTF_BUFFER_SIZE
    return min(max(size, 64), MAX_PRINTF_BUFFER_SIZE) // 4 * 4
