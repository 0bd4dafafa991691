"""What the intake and the pass made of a module, kept by content (issue 17 target 2).

Creating the same module again, in this process or the next, should cost a hash, not a
validation and an instrumentation. An outcome is kept under a key made of the module's words,
the options of the pass, the device's validation environment, gpuav's set index and a
fingerprint of gpuav's own source, in memory and in files under
``$XDG_CACHE_HOME/gpuav/modules`` (``settings.shader_cache_path`` relocates them,
``shader_cache = off`` turns both off).

Records carry the layer's per-device shader id, which the pass bakes into the words as one
32-bit ``OpConstant``. A kept result is instrumented with a placeholder id instead (a value the
app's words do not hold), and the positions of that constant's value are kept beside the words:
each creation writes its own id there, so a cache hit gives the very words a fresh
instrumentation with that id would give.

An outcome also carries static validation's diagnostics for the same words on the device, so
that a module created again in a later process is served by reading one file.

Files are written to a temporary name and renamed, so concurrent processes never see half an
entry; each file holds a CRC-32 of the rest and its full key, and one that does not match
(truncated, corrupt, another key) is read as a miss and written anew. Once a day the least
recently used files go until the folder fits in 256 MiB (every change to gpuav's sources makes
new keys). Nothing here raises ``OSError``: a cache that cannot be read or written only makes
the layer do the work itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import time
import zlib
from array import array
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Any

from gpuav import __version__
from gpuav.instrument.host_terms import STAGE_BITS, EntryVerdicts, from_rows, to_rows
from gpuav.layer.settings import Settings
from gpuav.validate.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from gpuav.instrument.shader_id_slot import SlottedWords
    from gpuav.layer.shader_validation import ShaderEnvironment

FORMAT = b"GPUAVMC3"  # changes with the layout of an entry
CHECKSUM_BYTES = 4  # CRC-32: finds a torn or damaged file; the key is compared whole
KEY_BYTES = 32
MEMORY_WORD_BUDGET = 16 << 20  # words kept in memory across all entries (64 MiB)
DISK_BUDGET_BYTES = 256 << 20  # what pruning leaves on disk
PRUNE_INTERVAL_SECONDS = 24 * 3600
PRUNE_MARK = ".pruned"  # its modification time: the last pruning
USE_MARK_SECONDS = 3600  # a hit marks its file as used when the last mark is this old
SOURCE_SUFFIXES = (".py", ".json", ".spv", ".comp")  # the files that can change what gpuav makes


class Kind(Enum):
    """What became of a module."""

    INSTRUMENTED = "instrumented"
    UNCHANGED = "unchanged"  # nothing to check
    REFUSED = "refused"  # the intake would not let it in (``reason``)
    DECLINED = "declined"  # the pass cannot instrument it (``reason``)


@dataclass(frozen=True)
class Outcome:
    """An intake-and-pass result that holds for every module with the same key.

    ``words`` are the instrumented words with ``placeholder`` as the shader id at each of
    ``shader_id_positions``. ``diagnostics`` are static validation's for the same words in
    the key's environment (None: not validated, or not known when the outcome was made)."""

    kind: Kind
    reason: str = ""
    words: bytes = b""
    placeholder: int = 0
    shader_id_positions: tuple[int, ...] = ()
    diagnostics: tuple[Diagnostic, ...] | None = None
    # entry functions with an unchecked copy: (name, stage bit, terms) (``host_terms``)
    verdicts: EntryVerdicts = ()

    def words_for(self, shader_id: int) -> list[int]:
        """The instrumented words with ``shader_id`` in the records they write."""
        words = array("I")
        words.frombytes(self.words)
        for position in self.shader_id_positions:
            words[position] = shader_id & 0xFFFF_FFFF
        return words.tolist()

    def to_bytes(self) -> bytes:
        """``_HEADER``, the shader id positions, the reason (UTF-8), the diagnostics (JSON
        rows; nothing for None), the verdicts (JSON rows; nothing for none), the words: fixed
        fields that read without a parser."""
        import json  # written where a module is new: not with the device

        reason = self.reason.encode()
        rows = b"" if self.diagnostics is None else json.dumps(rows_of(self.diagnostics)).encode()
        verdicts = (
            json.dumps([[n, bit, to_rows(terms)] for n, bit, terms in self.verdicts]).encode()
            if self.verdicts
            else b""
        )
        positions = self.shader_id_positions
        return b"".join(
            (
                _HEADER.pack(
                    _KINDS.index(self.kind),
                    self.placeholder,
                    len(positions),
                    len(reason),
                    len(rows),
                    len(verdicts),
                ),
                struct.pack(f"<{len(positions)}I", *positions),
                reason,
                rows,
                verdicts,
                self.words,
            )
        )

    @classmethod
    def from_bytes(cls, data: bytes | memoryview) -> Outcome:
        """Raises ``ValueError``, ``IndexError``, ``TypeError`` or ``struct.error`` for
        anything malformed."""
        view = memoryview(data)
        kind, placeholder, count, reason_size, rows_size, verdicts_size = _HEADER.unpack_from(view)
        start = _HEADER.size + 4 * count
        positions = struct.unpack_from(f"<{count}I", view, _HEADER.size)
        rows_start = start + reason_size
        verdicts_start = rows_start + rows_size
        words_start = verdicts_start + verdicts_size
        words = bytes(view[words_start:])
        if len(view) < words_start or len(words) % 4:
            raise ValueError("an outcome shorter than its header, or words not whole")
        if positions and max(positions) >= len(words) // 4:
            raise ValueError("shader id positions outside the words")
        diagnostics = None
        if rows_size:
            diagnostics = diagnostics_of(_json_rows(bytes(view[rows_start:verdicts_start])))
        verdicts: EntryVerdicts = ()
        if verdicts_size:
            verdicts = _verdicts_of(_json_rows(bytes(view[verdicts_start:words_start])))
        return cls(
            _KINDS[kind],
            str(view[start:rows_start], "utf-8"),
            words,
            placeholder,
            positions,
            diagnostics,
            verdicts,
        )


# Kind (its index in ``_KINDS``), placeholder, shader id positions, reason, diagnostics and
# verdicts bytes.
_HEADER = struct.Struct("<BIIIII")
_KINDS = tuple(Kind)


def _json_rows(data: bytes) -> Any:
    """Rows from JSON. The empty list (a module static validation found nothing in) reads
    without importing ``json``, which cost the lent H100's first module 2.6 ms."""
    if data == b"[]":
        return []
    import json

    return json.loads(data)


def rows_of(diagnostics: tuple[Diagnostic, ...]) -> list[list[object]]:
    """Diagnostics as JSON rows."""
    return [[d.rule, d.message, d.instruction_index, d.severity.value] for d in diagnostics]


def _verdicts_of(rows: object) -> EntryVerdicts:
    """Verdicts from JSON rows; raises ``ValueError`` or ``TypeError`` for other rows."""
    if not isinstance(rows, list):
        raise TypeError("verdicts")
    found = []
    for name, bit, terms in rows:
        if not isinstance(name, str) or bit not in STAGE_BITS.values():
            raise ValueError("a verdict's entry point or stage bit")
        found.append((name, bit, from_rows(terms)))
    return tuple(found)


def diagnostics_of(rows: list[list[object]]) -> tuple[Diagnostic, ...]:
    """Diagnostics from JSON rows; raises ``ValueError`` or ``TypeError`` for other rows."""
    found = []
    for rule, message, index, severity in rows:
        if index is not None and not isinstance(index, int):
            raise TypeError("instruction index")
        found.append(Diagnostic(str(rule), str(message), index, Severity(severity)))
    return tuple(found)


def instrumented(slotted: SlottedWords) -> Outcome:
    """The outcome for instrumented words with a slot for the shader id."""
    return Outcome(
        Kind.INSTRUMENTED,
        words=array("I", slotted.words).tobytes(),
        placeholder=slotted.placeholder,
        shader_id_positions=slotted.slots,
        verdicts=slotted.verdicts,
    )


@cache
def source_fingerprint() -> str:
    """gpuav's version and the size and modification time of each of its source files, as
    Python's own bytecode cache tells a changed source (a change means other words). One
    ``scandir`` per folder and one hash of all the figures: it runs at the first module."""
    files: list[tuple[str, int, int]] = []
    folders = [os.path.dirname(os.path.dirname(os.path.realpath(__file__)))]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                elif entry.name.endswith(SOURCE_SUFFIXES):
                    status = entry.stat()
                    files.append((entry.path, status.st_size, status.st_mtime_ns))
    files.sort()
    return hashlib.blake2b(f"{__version__}{files}".encode(), digest_size=16).hexdigest()


Key = tuple[bytes, bytes]
"""An outcome's key: the digest of what the outcome depends on besides the words (the same
for every module of a device, made once), and the digest of the words. Memory finds an
outcome by the pair, so a hit hashes nothing more; a file is named by the pair's hash."""


def key_for(
    code_digest: bytes,
    options: Mapping[str, object],
    environment: ShaderEnvironment | None,
    driver_features: frozenset[str],
) -> Key:
    """The key of an outcome: everything the intake and the pass read besides the words.
    ``environment`` is the device's validation environment (None when not validated); the
    options' values have stable reprs (booleans, numbers, frozen dataclasses)."""
    context = _outcome_context(tuple(sorted(options.items())), environment, driver_features)
    return context, code_digest


def file_key(key: Key) -> bytes:
    """The name of an outcome's file: one hash of its key's two digests."""
    return hashlib.sha256(key[0] + key[1]).digest()


def validation_key(code_digest: bytes, environment: ShaderEnvironment) -> bytes:
    """The key of static validation's diagnostics for the words in an environment."""
    return hashlib.sha256(_validation_context(environment) + code_digest).digest()


@cache
def _outcome_context(
    options: tuple[tuple[str, object], ...],
    environment: ShaderEnvironment | None,
    driver_features: frozenset[str],
) -> bytes:
    """The digest of an outcome key's parts besides the words: the same for every module of a
    device, so made once."""
    material = "\0".join(
        (
            source_fingerprint(),
            repr(options),
            _environment_text(environment),
            ",".join(sorted(driver_features)),
        )
    )
    return hashlib.sha256(material.encode()).digest()


@cache
def _validation_context(environment: ShaderEnvironment) -> bytes:
    material = "\0".join(("validation", source_fingerprint(), _environment_text(environment)))
    return hashlib.sha256(material.encode()).digest()


@cache
def _environment_text(environment: ShaderEnvironment | None) -> str:
    """A device's environment, with its sets in a stable order (set reprs are not)."""
    if environment is None:
        return "unvalidated"
    return repr(
        (
            environment.target_env,
            sorted(environment.features),
            sorted(environment.extensions),
            environment.limits,
        )
    )


class DiskCache:
    """Entries in files under ``folder``: ``<key hex[:2]>/<key hex>``, each file the format
    tag, a checksum of the rest, the key, then the payload.

    A file's modification time is when it was last written or read. Every change to gpuav's
    sources makes new keys, so once a day (the first write of a process after a day) the
    least recently used entries go until the rest fit in ``DISK_BUDGET_BYTES``."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._prune_checked = False

    def path_for(self, key: bytes) -> str:
        name = key.hex()
        return f"{self.folder}/{name[:2]}/{name}"

    def load(self, key: bytes) -> memoryview | None:
        """The payload kept under ``key``, or None (absent, unreadable, not whole). One open
        and one read; a hit marks the file as used at most once an hour (for pruning)."""
        try:
            handle = os.open(self.path_for(key), os.O_RDONLY)
        except OSError:
            return None
        try:
            status = os.fstat(handle)
            data = os.read(handle, status.st_size + 1)  # one byte more: a file grown meanwhile
            if len(data) != status.st_size:
                return None
            payload = payload_of(data, key)
            if payload is not None and time.time() - status.st_mtime > USE_MARK_SECONDS:
                with contextlib.suppress(OSError):
                    os.utime(handle)  # used now: pruned last
            return payload
        except OSError:
            return None
        finally:
            os.close(handle)

    def store(self, key: bytes, payload: bytes) -> None:
        body = key + payload
        data = FORMAT + zlib.crc32(body).to_bytes(CHECKSUM_BYTES, "little") + body
        path = self.path_for(key)
        folder = os.path.dirname(path)
        try:
            os.makedirs(folder, exist_ok=True)
            import tempfile  # with shutil and the compressors: not at start-up

            handle, temporary = tempfile.mkstemp(dir=folder, prefix=".writing-")
        except OSError:
            return
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.replace(temporary, path)  # atomic: readers see the old file or the whole new one
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        if not self._prune_checked:
            self._prune_checked = True
            self.prune_if_due()

    def prune_if_due(self, now: float | None = None) -> None:
        """Prune when the folder's mark says the last pruning is a day old or more."""
        mark = os.path.join(self.folder, PRUNE_MARK)
        now = time.time() if now is None else now
        try:
            if now - os.stat(mark).st_mtime < PRUNE_INTERVAL_SECONDS:
                return
        except FileNotFoundError:
            pass
        except OSError:
            return
        with contextlib.suppress(OSError), open(mark, "a"):
            os.utime(mark)
        self.prune(DISK_BUDGET_BYTES)

    def prune(self, budget: int) -> None:
        """Remove the least recently used files (temporaries a killed writer left too) until
        the rest fit in ``budget`` bytes. Entries another process removes meanwhile are
        skipped; one removed under a reader is a miss."""
        files: list[tuple[float, int, str]] = []
        try:
            with os.scandir(self.folder) as folders:
                for folder in folders:
                    if not folder.is_dir(follow_symlinks=False):
                        continue
                    with os.scandir(folder.path) as entries:
                        for entry in entries:
                            with contextlib.suppress(OSError):
                                status = entry.stat(follow_symlinks=False)
                                files.append((status.st_mtime, status.st_size, entry.path))
        except OSError:
            return
        total = sum(size for _, size, _ in files)
        for _, size, path in sorted(files):
            if total <= budget:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
            total -= size


def payload_of(data: bytes, key: bytes) -> memoryview | None:
    """The payload of a file's ``data`` (a view, not a copy), or None when it is not a whole,
    intact entry for ``key``."""
    start = len(FORMAT) + CHECKSUM_BYTES
    if not data.startswith(FORMAT) or len(data) < start + KEY_BYTES:
        return None
    body = memoryview(data)[start:]
    if zlib.crc32(body).to_bytes(CHECKSUM_BYTES, "little") != data[len(FORMAT) : start]:
        return None
    if body[:KEY_BYTES] != key:
        return None
    return body[KEY_BYTES:]


class ModuleCache:
    """Outcomes in memory (the most recent, within a word budget), backed by ``disk`` (which
    static validation's results share, under keys of their own)."""

    def __init__(self, disk: DiskCache) -> None:
        self.disk = disk
        self._memory: OrderedDict[Key, Outcome] = OrderedDict()
        self._words = 0

    def lookup(self, key: Key) -> Outcome | None:
        outcome = self._memory.get(key)
        if outcome is not None:
            self._memory.move_to_end(key)
            return outcome
        payload = self.disk.load(file_key(key))
        if payload is None:
            return None
        try:
            outcome = Outcome.from_bytes(payload)
        except (ValueError, IndexError, TypeError, struct.error):
            return None
        self._keep(key, outcome)
        return outcome

    def remember(self, key: Key, outcome: Outcome) -> None:
        self._keep(key, outcome)
        self.disk.store(file_key(key), outcome.to_bytes())

    def _keep(self, key: Key, outcome: Outcome) -> None:
        if key in self._memory:
            return
        self._memory[key] = outcome
        self._words += len(outcome.words) // 4
        while self._words > MEMORY_WORD_BUDGET and len(self._memory) > 1:
            _, dropped = self._memory.popitem(last=False)
            self._words -= len(dropped.words) // 4


def default_folder(environ: Mapping[str, str]) -> str:
    """``$XDG_CACHE_HOME/gpuav/modules``, else ``~/.cache/gpuav/modules``."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpuav", "modules")


@cache
def cache_for(settings: Settings) -> ModuleCache | None:
    """The cache the settings ask for (one per folder in a process), or None when off."""
    if not settings.shader_cache:
        return None
    folder = settings.shader_cache_path or default_folder(os.environ)
    return _cache_in(folder)


@cache
def _cache_in(folder: str) -> ModuleCache:
    return ModuleCache(DiskCache(folder))
