"""Issue 17 target 2: what the intake and the pass make of a module is kept by content, in
memory and on disk, and a kept result changes nothing: the same words for every shader id as
a fresh instrumentation, the same reports (with the same source line) from a second process
that reads it from disk, whole entries under concurrent writers, and a corrupt or truncated
entry read as a miss and written anew.

The engine's own entry point (``shader_modules.instrument_words``) runs in this process on an
enabled device as device_setup leaves it; the end-to-end tests run a C program knowing
nothing of gpuav under the real layer and the real pass on lavapipe.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpuav.instrument import host_terms
from gpuav.instrument.api import instrument_shader
from gpuav.layer import module_cache, shader_modules, shader_validation
from gpuav.layer.calls import PhysicalDeviceFacts
from gpuav.layer.module_cache import DiskCache, Kind, Outcome
from gpuav.layer.settings import Settings, resolve_settings
from gpuav.layer.state import DeviceState, InstanceState
from tests.apps_common.build import compile_c_program
from tests.layer.collecting_reporter import CollectingReporter
from tests.layer.conftest import APP_TIMEOUT, APPS, REPOSITORY, app_environment, parse_c_output
from tests.shaders.glsl import CorpusShader, compile_glsl, corpus_shaders, spirv_val

SET_INDEX = 7
VULKAN_1_3 = (1 << 22) | (3 << 12)
KEY = bytes(range(32))
SHADERS = [shader for shader in corpus_shaders() if shader.stage in ("comp", "frag")][:8]
# A planted bug: index 4 of a uint[4], with debug information for the source line.
BUGGY_SHADER = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Out { uint o[16]; } o;
layout(push_constant) uniform P { int index; } p;
void main() {
    uint weights[4] = uint[](10u, 20u, 30u, 40u);
    o.o[0] = weights[p.index] + data.v[0];
}
"""
EXPECTED_REPORT = (
    "Index 4 (one past the end) out of bounds of local array `weights` (uint[4], Function "
    "storage). At weights.comp line 8."
)


def _device(settings: Settings) -> DeviceState:
    facts = PhysicalDeviceFacts(VULKAN_1_3, 8, 16, 1 << 27, (0,), True, True)
    instance = InstanceState(1, settings, VULKAN_1_3, CollectingReporter())
    return DeviceState(0xCAC4E, instance, None, facts, enabled=True, set_index=SET_INDEX)  # type: ignore[arg-type]


def _fresh(words: list[int], shader_id: int) -> list[int] | None:
    """What the pass gives for ``shader_id`` with no cache involved."""
    out = instrument_shader(
        list(words), shader_id=shader_id, descriptor_set=SET_INDEX, descriptor_state=True
    )
    return None if out == words else out


@pytest.mark.parametrize("shader", [pytest.param(s, id=s.name) for s in SHADERS])
def test_a_kept_result_gives_each_shader_id_the_words_of_a_fresh_instrumentation(
    shader: CorpusShader, tmp_path: Path
) -> None:
    words = shader.compile("g")
    cached = _device(Settings(enabled=True, shader_cache_path=str(tmp_path)))
    first = shader_modules.instrument_words(cached, words, 5)  # made and kept
    again = shader_modules.instrument_words(cached, words, 9)  # from memory, another id
    from_disk = _device(Settings(enabled=True, shader_cache_path=str(tmp_path)))
    module_cache.cache_for.cache_clear()  # as a new process would: nothing in memory
    module_cache._cache_in.cache_clear()
    third = shader_modules.instrument_words(from_disk, words, 9)
    off = _device(Settings(enabled=True, shader_cache=False))
    assert first == _fresh(words, 5) == shader_modules.instrument_words(off, words, 5)
    assert again == third == _fresh(words, 9)
    assert any(tmp_path.rglob("*")), "nothing was written to the cache folder"
    if first is not None and again is not None:
        assert first != again  # the id is in the words: its slot was filled per creation
        if "g" not in shader.spirv_val_fails:
            spirv_val(again, shader.target_env)


def test_static_validation_reads_its_diagnostics_from_disk_in_a_later_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the features it asks for, the module has diagnostics to keep.
    words = next(s for s in corpus_shaders() if s.name == "float_atomics.comp").compile("g")
    environment = shader_validation.ShaderEnvironment("vulkan1.3", frozenset(), frozenset())
    cache = module_cache.ModuleCache(DiskCache(str(tmp_path)))
    shader_validation.post_call_record_create_device(0xD1A6, environment, cache)
    try:
        monkeypatch.setattr(shader_validation, "_RESULTS", {})
        found = shader_validation.pre_call_validate_create_shader_module(
            0xD1A6, words, CollectingReporter()
        )
        assert found and any(tmp_path.rglob("*"))
        decodes = []
        monkeypatch.setattr(shader_validation, "_RESULTS", {})  # as a new process would
        monkeypatch.setattr(shader_validation, "_validate", lambda *a: decodes.append(a))
        again = shader_validation.pre_call_validate_create_shader_module(
            0xD1A6, words, CollectingReporter()
        )
        assert again == found and decodes == []
    finally:
        shader_validation.pre_call_record_destroy_device(0xD1A6)


def test_the_instrumented_words_are_the_same_in_every_process() -> None:
    # Sets of strings iterate in another order with another hash seed; words must not change.
    script = textwrap.dedent(
        """
        import hashlib
        from gpuav.instrument.api import instrument_shader
        from tests.shaders.glsl import corpus_shaders
        digest = hashlib.sha256()
        for shader in corpus_shaders()[:12]:
            words = shader.compile("gV")
            out = instrument_shader(words, shader_id=3, descriptor_set=7, descriptor_state=True)
            digest.update(repr(out).encode())
        print(digest.hexdigest())
        """
    )
    digests = set()
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPOSITORY)}
        done = subprocess.run(
            [sys.executable, "-c", script], env=environment, capture_output=True, text=True,
            check=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        digests.add(done.stdout.strip())
    assert len(digests) == 1


def test_a_corrupt_or_truncated_entry_is_a_miss_and_is_written_anew(tmp_path: Path) -> None:
    disk = DiskCache(str(tmp_path))
    outcome = Outcome(Kind.INSTRUMENTED, words=bytes(range(40)), shader_id_positions=(3,))
    disk.store(KEY, outcome.to_bytes())
    assert disk.load(KEY) == outcome.to_bytes()
    assert Outcome.from_bytes(outcome.to_bytes()) == outcome
    path = Path(disk.path_for(KEY))
    whole = path.read_bytes()
    flipped = bytearray(whole)
    flipped[-3] ^= 0x40
    for bad in (whole[: len(whole) // 2], bytes(flipped), b"", whole[:12], b"\0" * len(whole)):
        path.write_bytes(bad)
        assert disk.load(KEY) is None
    other_key = bytes(31) + b"\1"
    path.write_bytes(whole)
    assert disk.load(other_key) is None  # an entry is read only for its own key
    path.write_bytes(b"garbage")
    disk.store(KEY, outcome.to_bytes())
    assert disk.load(KEY) == outcome.to_bytes()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left behind


def test_an_entry_keeps_the_entry_functions_the_layer_decides() -> None:
    terms = (
        host_terms.Fits(0, 1, 0x40, host_terms.Const(0)),
        host_terms.Within(
            host_terms.Sum(host_terms.Const(4), host_terms.ArrayLength(0, 2, 0, 16, 8)), 0, 2, 0
        ),
    )
    outcome = Outcome(Kind.INSTRUMENTED, words=bytes(8), verdicts=(("main", 0x10, terms),))
    assert Outcome.from_bytes(outcome.to_bytes()) == outcome
    # a tag or a field the rows do not have (same length: the header still fits)
    for old, new in ((b'"fits"', b'"fitz"'), (b'"main", 16', b'"main", -1'), (b"16, 8", b"16, x")):
        with pytest.raises((ValueError, TypeError)):
            Outcome.from_bytes(outcome.to_bytes().replace(old, new))


def test_pruning_removes_the_least_recently_used_entries_once_a_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = DiskCache(str(tmp_path))
    keys = [bytes([n]) * 32 for n in range(4)]
    for age, key in enumerate(keys):
        disk.store(key, bytes(1000))
        os.utime(disk.path_for(key), (1000 + age, 1000 + age))  # keys[3] used last...
    assert disk.load(keys[0]) is not None  # ...until a hit makes keys[0] the last used
    disk.prune(2 * os.stat(disk.path_for(keys[0])).st_size)
    assert [key for key in keys if os.path.exists(disk.path_for(key))] == [keys[0], keys[3]]
    # Due a day after the last pruning (the first write of this cache marked it).
    monkeypatch.setattr(module_cache, "DISK_BUDGET_BYTES", 0)
    marked = (tmp_path / module_cache.PRUNE_MARK).stat().st_mtime
    disk.prune_if_due(now=marked + 60)
    assert disk.load(keys[3]) is not None
    disk.prune_if_due(now=marked + module_cache.PRUNE_INTERVAL_SECONDS + 1)
    assert not any(os.path.exists(disk.path_for(key)) for key in keys)


def test_concurrent_processes_see_whole_entries(tmp_path: Path) -> None:
    # Four processes write entries of different lengths under one key and read it back
    # between writes: each read is nothing yet, or one whole entry, never a mix.
    script = textwrap.dedent(
        f"""
        import sys
        from gpuav.layer.module_cache import DiskCache, Kind, Outcome
        disk = DiskCache({str(tmp_path)!r})
        writer = int(sys.argv[1])
        key = bytes(range(32))
        made = {{Outcome(Kind.DECLINED, str(w) * (1 + 5000 * w)).to_bytes() for w in range(4)}}
        for round in range(150):
            disk.store(key, Outcome(Kind.DECLINED, str(writer) * (1 + 5000 * writer)).to_bytes())
            found = disk.load(key)
            assert found in made, found
        print("ok")
        """
    )
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(writer)],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for writer in range(4)
    ]
    for process in processes:
        stdout, stderr = process.communicate(timeout=APP_TIMEOUT)
        assert process.returncode == 0 and stdout.strip() == "ok", stderr[-2000:]


def test_settings_turn_the_cache_off_and_relocate_it(tmp_path: Path) -> None:
    assert resolve_settings(environ={}, cwd=tmp_path).shader_cache
    assert not resolve_settings(environ={"GPUAV_SHADER_CACHE": "0"}, cwd=tmp_path).shader_cache
    by_layer_settings = resolve_settings(
        environ={}, cwd=tmp_path, layer_settings={"shader_cache": "false"}
    )
    assert not by_layer_settings.shader_cache
    (tmp_path / "vk_layer_settings.txt").write_text(
        "gpuav_gpu_assisted.shader_cache_path = /somewhere/else\n"
    )
    settings = resolve_settings(environ={}, cwd=tmp_path)
    assert settings.shader_cache_path == "/somewhere/else"
    assert module_cache.cache_for(settings.replace(shader_cache=False)) is None
    cache = module_cache.cache_for(settings)
    assert cache is not None
    assert cache.disk.folder == "/somewhere/else"


# -- the real layer on lavapipe ----------------------------------------------------------------


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """buffer_range_app, one dispatch with index 4 pushed, on the buggy shader."""
    folder = tmp_path_factory.mktemp("module_cache")
    app = compile_c_program(folder / "buffer_range_app", [APPS / "buffer_range_app.c"])
    shader = folder / "weights.spv"
    words = compile_glsl(BUGGY_SHADER, "comp", debug="g", source_name="weights.comp")
    shader.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
    return [str(app), str(shader), "storage", "64", "0", "0", "0", "4"]


def _reports(argv: list[str], layer_folder: Path, cwd: Path, **extra: str) -> list[str]:
    """The first line of each of gpuav's local-array messages."""
    environment = app_environment(layer_folder, instrumenter=None, extra=extra)
    done = subprocess.run(
        argv, env=environment, cwd=cwd, capture_output=True, text=True, timeout=APP_TIMEOUT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    messages = parse_c_output(done.stdout)["messages"]
    return [m["text"].split(" Command buffer")[0] for m in messages if "local array" in m["text"]]


def _entry_files(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file() and path.parent != folder]


def _entries(folder: Path) -> dict[str, int]:
    """Each entry file and its inode: a rewrite (by rename) changes it, a read does not."""
    return {path.name: path.stat().st_ino for path in _entry_files(folder)}


@pytest.mark.vulkan
def test_a_second_process_reports_the_same_bug_from_the_disk_cache(
    program: list[str], layer_folder: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "cache"
    cache = {"GPUAV_SHADER_CACHE_PATH": str(folder)}
    first = _reports(program, layer_folder, tmp_path, **cache)
    assert len(first) == 1 and first[0].startswith(EXPECTED_REPORT)
    written = _entries(folder)
    assert written, "the first run kept nothing"
    # Second run: every module's outcome is read, none is made or written again.
    assert _reports(program, layer_folder, tmp_path, **cache) == first
    assert _entries(folder) == written
    # Corrupt entries are misses: the same report, and the entries are whole again.
    for path in _entry_files(folder):
        path.write_bytes(path.read_bytes()[:-7])
    assert _reports(program, layer_folder, tmp_path, **cache) == first
    for path in _entry_files(folder):
        assert module_cache.payload_of(path.read_bytes(), bytes.fromhex(path.name))
    # Off: nothing written, the same report.
    off = tmp_path / "off"
    unkept = _reports(
        program, layer_folder, tmp_path, GPUAV_SHADER_CACHE="0", GPUAV_SHADER_CACHE_PATH=str(off)
    )
    assert unkept == first
    assert not off.exists()
