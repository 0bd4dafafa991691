"""Compile GLSL to SPIR-V words for tests, and enumerate the project's shader corpus.

`compile_glsl` runs `glslangValidator -V` on a source string or a file and returns the module's
words. Results are cached on disk by content hash (source text, stage, target environment, debug
mode, defines, source name, glslang version), so a second test run spawns no compiler at all.
The cache lives in `$GPUAV_TEST_CACHE` if set (`off` disables it), else
`$XDG_CACHE_HOME/gpuav-tests` or `~/.cache/gpuav-tests`.

Failures are test failures, never skips: a missing tool, a compile error or a module that
`spirv-val` rejects raises an `AssertionError` subclass that carries the tool's output.

Corpus files (`tests/shaders/corpus/*.<stage>`) open with a one-line `//` comment saying what
they exercise, optionally followed by `// gpuav: key=value` lines:

- `target-env=vulkan1.2`: the environment to compile and validate for (default `vulkan1.1`);
- `spirv-val-fails=gV`: debug modes whose module spirv-val is known to reject because of a tool
  bug (say which on the next comment line); the corpus test expects the failure, so a fixed
  tool shows up as a test failure and the marker can go.

`tests/shaders/invalid/` holds shaders that glslang compiles but that break a Vulkan rule;
their header names the rule with `expect-error=<VUID or spirv-val message fragment>`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DebugMode = Literal["none", "g", "gV"]
TargetEnv = Literal["vulkan1.0", "vulkan1.1", "vulkan1.2", "vulkan1.3"]

DEBUG_MODES: tuple[DebugMode, ...] = ("none", "g", "gV")
TARGET_ENVS: tuple[TargetEnv, ...] = ("vulkan1.0", "vulkan1.1", "vulkan1.2", "vulkan1.3")
STAGES: tuple[str, ...] = ("vert", "tesc", "tese", "geom", "frag", "comp")
# Stages of extensions (ray tracing, mesh shading); they need --target-env vulkan1.2 or later.
EXTENSION_STAGES: tuple[str, ...] = (
    "rgen", "rint", "rahit", "rchit", "rmiss", "rcall", "task", "mesh",
)  # fmt: skip
DEFAULT_TARGET_ENV: TargetEnv = "vulkan1.1"

CORPUS_DIR = Path(__file__).resolve().parent / "corpus"
INVALID_DIR = Path(__file__).resolve().parent / "invalid"

_DEBUG_FLAGS: dict[str, tuple[str, ...]] = {"none": (), "g": ("-g",), "gV": ("-gV",)}
_SPIRV_MAGIC = 0x07230203
_HEADER_RE = re.compile(r"^//\s*gpuav:\s*(?P<key>[\w-]+)\s*=\s*(?P<value>\S+)\s*$")


class ToolMissing(AssertionError):
    """A command-line tool the tests need (glslangValidator, spirv-val, spirv-dis) is absent."""


class GlslCompileError(AssertionError):
    """glslangValidator rejected a shader; the message holds its output and the source."""


class SpirvValidationError(AssertionError):
    """spirv-val rejected a module; the message holds its output and the disassembly."""


def tool(name: str) -> str:
    """Path of a tool; `$GLSLANG_VALIDATOR`, `$SPIRV_VAL`, `$SPIRV_DIS` override the name."""
    override = os.environ.get(name.upper().replace("-", "_"))
    found = shutil.which(override or name)
    if found is None:
        raise ToolMissing(
            f"{override or name} not found on PATH; install glslang-tools and spirv-tools "
            "(these tests fail rather than skip without them)"
        )
    return found


@functools.cache
def _glslang_version(executable: str) -> str:
    result = subprocess.run([executable, "--version"], capture_output=True, text=True, check=False)
    return result.stdout.strip()


def _cache_dir() -> Path | None:
    configured = os.environ.get("GPUAV_TEST_CACHE")
    if configured == "off":
        return None
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gpuav-tests"


def _words_from_bytes(data: bytes) -> list[int] | None:
    if len(data) < 20 or len(data) % 4:
        return None
    words = list(memoryview(data).cast("I"))
    if words[0] != _SPIRV_MAGIC:
        return None
    return words


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
    os.replace(temporary, path)


def _numbered(source: str) -> str:
    return "\n".join(f"{number:4}| {line}" for number, line in enumerate(source.splitlines(), 1))


def _read_input(source_or_path: str | os.PathLike[str], stage: str | None) -> tuple[str, str, str]:
    """(source text, stage, default source name)."""
    path: Path | None = None
    if isinstance(source_or_path, os.PathLike):
        path = Path(source_or_path)
    elif "\n" not in source_or_path:
        path = Path(source_or_path)
        if not path.is_file():
            if path.suffix.removeprefix(".") in STAGES:
                raise FileNotFoundError(f"no shader file {path}")
            path = None
    if path is not None:
        if stage is None:
            stage = path.suffix.removeprefix(".")
        if stage not in STAGES + EXTENSION_STAGES:
            raise ValueError(f"{path}: cannot tell the stage from the suffix; pass stage=")
        return path.read_text(), stage, path.name
    if stage not in STAGES + EXTENSION_STAGES:
        raise ValueError(f"stage must be one of {STAGES} for a source string, not {stage!r}")
    return str(source_or_path), stage, f"shader.{stage}"


def compile_glsl(
    source_or_path: str | os.PathLike[str],
    stage: str | None = None,
    *,
    target_env: TargetEnv = DEFAULT_TARGET_ENV,
    debug: DebugMode = "none",
    defines: Mapping[str, str | int | None] | None = None,
    source_name: str | None = None,
) -> list[int]:
    """Compile GLSL with `glslangValidator -V` and return the SPIR-V words.

    `source_or_path` is a `Path`, a file name, or GLSL text (anything with a newline). The stage
    comes from the file suffix unless given. `debug` adds `-g` (OpLine/OpSource) or `-gV`
    (NonSemantic.Shader.DebugInfo.100). `defines` become `-D` options (`None` means no value).
    The file name recorded in the module's OpString/OpSource is `source_name`, by default the
    file's base name or `shader.<stage>`, so modules do not depend on where the test runs.
    Sources are compiled from a copy in a temporary directory, so `#include` is not supported
    (the cache key covers only the one source text).
    """
    if target_env not in TARGET_ENVS:
        raise ValueError(f"target_env must be one of {TARGET_ENVS}, not {target_env!r}")
    if debug not in _DEBUG_FLAGS:
        raise ValueError(f"debug must be one of {DEBUG_MODES}, not {debug!r}")
    source, stage, default_name = _read_input(source_or_path, stage)
    name = source_name or default_name
    define_flags = [
        f"-D{key}" if value is None else f"-D{key}={value}"
        for key, value in sorted((defines or {}).items())
    ]
    executable = tool("glslangValidator")
    options = [
        "-V",
        "--target-env",
        target_env,
        "-S",
        stage,
        *_DEBUG_FLAGS[debug],
        *define_flags,
    ]

    key = hashlib.sha256(
        "\0".join([_glslang_version(executable), *options, name, source]).encode()
    ).hexdigest()
    cache = _cache_dir()
    cached_path = cache / key[:2] / f"{key}.spv" if cache else None
    if cached_path is not None and cached_path.is_file():
        words = _words_from_bytes(cached_path.read_bytes())
        if words is not None:
            return words

    with tempfile.TemporaryDirectory(prefix="gpuav-glsl-") as work:
        (Path(work) / name).parent.mkdir(parents=True, exist_ok=True)
        (Path(work) / name).write_text(source)
        command = [executable, *options, "-o", "out.spv", name]
        result = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
        output = Path(work) / "out.spv"
        data = output.read_bytes() if result.returncode == 0 and output.is_file() else b""
    words = _words_from_bytes(data)
    if words is None:
        raise GlslCompileError(
            f"glslangValidator failed (exit {result.returncode}) on {name}\n"
            f"$ {' '.join(command)}\n{result.stdout}{result.stderr}\n"
            f"--- source ---\n{_numbered(source)}"
        )
    if cached_path is not None:
        _write_atomically(cached_path, data)
    return words


def words_to_bytes(words: list[int]) -> bytes:
    return b"".join(word.to_bytes(4, sys.byteorder) for word in words)


def optimize(words: list[int], target_env: str = "vulkan1.2") -> list[int]:
    """``spirv-opt -O``: the shapes an optimizer emits (phis, merged blocks, hoisted loads)."""
    with tempfile.TemporaryDirectory(prefix="gpuav-opt-") as work:
        source, output = Path(work) / "in.spv", Path(work) / "out.spv"
        source.write_bytes(words_to_bytes(words))
        subprocess.run(
            [tool("spirv-opt"), "-O", f"--target-env={target_env}", str(source), "-o", str(output)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        data = output.read_bytes()
    words_out = _words_from_bytes(data)
    assert words_out is not None
    return words_out


def disassemble(words: list[int]) -> str:
    """spirv-dis text of a module (raw ids, so ids match what spirv-val reports)."""
    with tempfile.TemporaryDirectory(prefix="gpuav-dis-") as work:
        module = Path(work) / "module.spv"
        module.write_bytes(words_to_bytes(words))
        result = subprocess.run(
            [tool("spirv-dis"), "--raw-id", str(module)],
            capture_output=True,
            text=True,
            check=False,
        )
    return result.stdout if result.returncode == 0 else f"(spirv-dis failed)\n{result.stderr}"


def spirv_val(words: list[int], target_env: TargetEnv = DEFAULT_TARGET_ENV) -> None:
    """Run `spirv-val --target-env <env>`; on failure raise with its output and the disassembly."""
    with tempfile.TemporaryDirectory(prefix="gpuav-val-") as work:
        module = Path(work) / "module.spv"
        module.write_bytes(words_to_bytes(words))
        result = subprocess.run(
            [tool("spirv-val"), "--target-env", target_env, str(module)],
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        raise SpirvValidationError(
            f"spirv-val --target-env {target_env} failed (exit {result.returncode})\n"
            f"{result.stdout}{result.stderr}\n--- disassembly ---\n{disassemble(words)}"
        )


@dataclass(frozen=True)
class CorpusShader:
    """One file of `tests/shaders/corpus`."""

    path: Path
    stage: str
    target_env: TargetEnv
    description: str
    spirv_val_fails: frozenset[DebugMode]

    @property
    def name(self) -> str:
        return self.path.name

    def compile(self, debug: DebugMode = "none") -> list[int]:
        return compile_glsl(self.path, self.stage, target_env=self.target_env, debug=debug)


@dataclass(frozen=True)
class InvalidShader(CorpusShader):
    """One file of `tests/shaders/invalid`: compiles, but spirv-val must reject it."""

    expected_error: str


def _header(path: Path, allowed: set[str]) -> tuple[str, dict[str, str]]:
    lines = path.read_text().splitlines()
    if not lines or not lines[0].startswith("//") or not lines[0].strip("/ \t"):
        raise ValueError(f"{path}: the first line must be a // comment saying what it exercises")
    settings: dict[str, str] = {}
    for line in lines[1:]:
        match = _HEADER_RE.match(line.strip())
        if match is None:
            break
        settings[match["key"]] = match["value"]
    unknown = set(settings) - allowed
    if unknown:
        raise ValueError(f"{path}: unknown gpuav header keys {sorted(unknown)}")
    return lines[0].lstrip("/").strip(), settings


def _target_env(path: Path, settings: dict[str, str]) -> TargetEnv:
    value = settings.get("target-env", DEFAULT_TARGET_ENV)
    for env in TARGET_ENVS:
        if env == value:
            return env
    raise ValueError(f"{path}: target-env must be one of {TARGET_ENVS}, not {value!r}")


def _debug_modes(path: Path, value: str) -> frozenset[DebugMode]:
    modes = [mode for mode in DEBUG_MODES if mode in value.split(",")]
    if len(modes) != len(value.split(",")):
        raise ValueError(f"{path}: spirv-val-fails takes debug modes from {DEBUG_MODES}")
    return frozenset(modes)


def _shader_files(directory: Path) -> list[Path]:
    return [path for path in sorted(directory.iterdir()) if path.suffix[1:] in STAGES]


def corpus_shaders() -> list[CorpusShader]:
    """Every corpus shader, sorted by file name."""
    shaders = []
    for path in _shader_files(CORPUS_DIR):
        description, settings = _header(path, {"target-env", "spirv-val-fails"})
        shaders.append(
            CorpusShader(
                path,
                path.suffix[1:],
                _target_env(path, settings),
                description,
                _debug_modes(path, settings["spirv-val-fails"])
                if "spirv-val-fails" in settings
                else frozenset(),
            )
        )
    return shaders


def invalid_shaders() -> list[InvalidShader]:
    """Shaders that glslang accepts but that break a Vulkan rule spirv-val checks."""
    shaders = []
    for path in _shader_files(INVALID_DIR):
        description, settings = _header(path, {"target-env", "expect-error"})
        if "expect-error" not in settings:
            raise ValueError(f"{path}: invalid shaders need an expect-error= header")
        shaders.append(
            InvalidShader(
                path,
                path.suffix[1:],
                _target_env(path, settings),
                description,
                frozenset(),
                settings["expect-error"],
            )
        )
    return shaders
