"""Reading the members of a dump (a directory, or a tar, gzip/xz tar or zip archive) within bounds.

Nothing is extracted: archives are read as a stream, and only the members the caller wants (by
path, decided before reading) are read at all. Member names are never used as file system paths;
a name that is absolute or holds `..` is ignored, as are symlinks, hard links, device files and
FIFOs (in archives and in directories, which are walked without following links). Bounds: at most
`MAX_MEMBERS` entries; a member is read only up to `MAX_MEMBER_BYTES` (the parser's own limit: a
larger one is refused by its recorded size, and a read stops at the first byte past it); at most
`MAX_SCANNED_BYTES` decompressed while looking (a compression bomb stops there); tar extended
headers (GNU long names, pax) of at most `MAX_TAR_HEADER_BYTES` (tarfile would read a larger one
into memory whole); zip entries whose data overlap are refused. A tar must end with its
end-of-archive block. Anything broken, truncated or over a bound is a one-line `SnapshotError`.
"""

from __future__ import annotations

import io
import lzma
import os
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cvo_py.runtime import safeload
from cvo_py.runtime.gotext.durations import SECOND
from cvo_py.runtime.gotext.quoting import escape
from cvo_py.runtime.gotext.times import MAX_TIME, ZERO_TIME
from status.updatestatus.client.snapshot import SnapshotError

MIB = 1024 * 1024
MAX_MEMBERS = 1_000_000  # archive entries (or directory entries) looked at
MAX_MEMBER_BYTES = safeload.DEFAULT_LIMITS.max_bytes  # one member: what the parser would refuse is not read
MAX_SCANNED_BYTES = 4 * 1024 * MIB  # decompressed while looking, read or skipped
MAX_TAR_HEADER_BYTES = MIB  # a GNU long name or a pax header (tarfile reads it whole)
_CHUNK = MIB

# What a member at these path parts is, or None when it is not read (the caller's choice).
Wanted = Callable[[tuple[str, ...]], "str | None"]
Found = tuple[tuple[str, ...], str, bytes, "int | None"]  # (path, what it is, content, mtime)


def _safe_parts(name: str) -> tuple[str, ...] | None:
    """A member name as path parts, or None when it is absolute or climbs out (`..`)."""
    if name.startswith(("/", "\\")) or "\\" in name or "\x00" in name:
        return None
    parts = tuple(x for x in name.split("/") if x not in ("", "."))
    if not parts or ".." in parts:
        return None
    return parts


class _Budget:
    def __init__(self, source: str) -> None:
        self.source = source
        self.members = 0

    def count(self) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise SnapshotError(f"{self.source}: more than {MAX_MEMBERS} entries: not read")

    def check(self, name: str, size: int) -> None:
        """Refuses a member whose recorded size is past what the parser reads."""
        if size > MAX_MEMBER_BYTES:
            raise self.too_large(name)

    def too_large(self, name: str) -> SnapshotError:
        return SnapshotError(f"{self.source}: {escape(name)} is larger than {MAX_MEMBER_BYTES // MIB} MiB: not read")


def _read_bounded(f: Any, size: int, name: str, budget: _Budget) -> bytes:
    """`size` bytes of `f` (a member whose recorded size is `size`), read in chunks: never a byte
    past MAX_MEMBER_BYTES, and a member that holds more or less than recorded is refused."""
    budget.check(name, size)
    chunks: list[bytes] = []
    got = 0
    while got <= size:  # one byte past the recorded size tells a member that holds more
        asked = min(_CHUNK, size + 1 - got)
        chunk = f.read(asked)
        got += len(chunk)
        if got > MAX_MEMBER_BYTES:
            raise budget.too_large(name)
        chunks.append(chunk)
        if len(chunk) < asked:  # these readers return less than asked only at the end
            break
    if got != size:
        raise SnapshotError(f"{budget.source}: {escape(name)} is truncated or does not have its recorded size")
    return b"".join(chunks)


def read_directory(root: Path, wanted: Wanted) -> Iterator[Found]:
    """Regular files under `root` that are wanted; symlinks and special files are skipped."""
    budget = _Budget(escape(str(root)))
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            raise SnapshotError(f"{escape(str(directory))}: cannot read: {exc.strerror or exc}") from None
        for entry in entries:
            budget.count()
            parts = (*prefix, entry.name)
            if entry.is_dir(follow_symlinks=False):
                if len(parts) < 12:
                    stack.append((Path(entry.path), parts))
                continue
            what = wanted(parts) if entry.is_file(follow_symlinks=False) else None
            if what is None:
                continue
            try:
                fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
                with os.fdopen(fd, "rb") as f:
                    st = os.fstat(f.fileno())
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    data = _read_bounded(f, st.st_size, entry.path, budget)
            except OSError as exc:
                raise SnapshotError(f"{escape(entry.path)}: cannot read: {exc.strerror or exc}") from None
            yield parts, what, data, st.st_mtime_ns


class _CountingReader(io.RawIOBase):
    """A decompressed stream that stops after MAX_SCANNED_BYTES (compression bombs)."""

    def __init__(self, inner: Any, source: str) -> None:
        self._inner = inner
        self._source = source
        self.total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._inner.read(len(buffer))
        self.total += len(data)
        if self.total > MAX_SCANNED_BYTES:
            raise SnapshotError(
                f"{self._source}: decompresses to more than {MAX_SCANNED_BYTES // (1024**3)} GiB: not read"
            )
        buffer[: len(data)] = data
        return len(data)


def read_archive(path: Path, shown: str, wanted: Wanted) -> Iterator[Found]:
    try:
        with open(path, "rb") as f:
            head = f.read(6)
            if head[:4] == b"PK\x03\x04" or head[:4] == b"PK\x05\x06":
                yield from _read_zip(f, shown, wanted)
                return
            f.seek(0)
            if head[:2] == b"\x1f\x8b":
                import gzip

                raw: Any = gzip.GzipFile(fileobj=f, mode="rb")
            elif head == b"\xfd7zXZ\x00":
                # .xz only: zeros after a stream are padding (as xz reads them), not an LZMA stream cut short
                raw = lzma.LZMAFile(f, mode="rb", format=lzma.FORMAT_XZ)
            else:
                raw = f
            stream = io.BufferedReader(_CountingReader(raw, shown), buffer_size=_CHUNK)
            yield from _read_tar(stream, shown, wanted)
    except SnapshotError:
        raise
    except (
        _CorruptTar,
        tarfile.TarError,
        EOFError,
        zlib.error,
        lzma.LZMAError,
        zipfile.BadZipFile,
        OSError,
        NotImplementedError,
        RuntimeError,
    ) as exc:  # zip: an unsupported compression method, encryption
        raise SnapshotError(f"{shown}: not a readable archive (truncated or corrupt?): {escape(str(exc))}") from None


class _CorruptTar(Exception):
    """A tar block that should be a header and is not (tarfile would take it as the archive's end)."""


# tarfile's header errors (not in its public interface): no block left, part of one, a bad checksum
_CUT_HEADER = (tarfile.EmptyHeaderError, tarfile.TruncatedHeaderError)  # type: ignore[attr-defined]
_INVALID_HEADER = tarfile.InvalidHeaderError  # type: ignore[attr-defined]
_END_BLOCK = tarfile.EOFHeaderError  # type: ignore[attr-defined]


class _BoundedTarInfo(tarfile.TarInfo):
    """Refuses extended headers (GNU long names and links, pax) larger than MAX_TAR_HEADER_BYTES:
    tarfile reads them into memory whole, before any member budget applies. And tells a corrupt or
    missing header from the end-of-archive block: tarfile ends the archive quietly at either."""

    @classmethod
    def fromtarfile(cls, tarfile_: tarfile.TarFile) -> _BoundedTarInfo:
        try:
            return super().fromtarfile(tarfile_)
        except _END_BLOCK:
            raise  # a block of zeros: the end-of-archive marker
        except _CUT_HEADER:
            raise _CorruptTar("the archive ends without its end-of-archive block (cut short?)") from None
        except _INVALID_HEADER as exc:
            where = getattr(tarfile_, "offset", 0)
            raise _CorruptTar(f"a corrupt header at byte {where}: {exc}") from None

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        extended = (
            tarfile.GNUTYPE_LONGNAME,
            tarfile.GNUTYPE_LONGLINK,
            tarfile.XHDTYPE,
            tarfile.XGLTYPE,
            tarfile.SOLARIS_XHDTYPE,
        )
        if self.type in extended and self.size > MAX_TAR_HEADER_BYTES:
            raise tarfile.HeaderError(f"an extended header of {self.size} bytes (at most {MAX_TAR_HEADER_BYTES})")
        return super()._proc_member(tarfile_)  # type: ignore[misc,no-any-return]


def _read_tar(stream: Any, shown: str, wanted: Wanted) -> Iterator[Found]:
    budget = _Budget(shown)
    with tarfile.open(fileobj=stream, mode="r|", tarinfo=_BoundedTarInfo) as tar:
        while True:
            member = tar.next()
            if member is None:
                _check_tar_end(tar)
                break
            tar.members = []  # type: ignore[attr-defined]  # streaming: keep no list of every entry
            budget.count()
            if not member.isreg():  # symlinks, hard links, devices, FIFOs, directories
                continue
            parts = _safe_parts(member.name)
            what = wanted(parts) if parts is not None else None
            if parts is None or what is None:
                continue
            f = tar.extractfile(member)
            if f is None:
                continue
            data = _read_bounded(f, member.size, member.name, budget)
            yield parts, what, data, _tar_mtime(member)


def _check_tar_end(tar: tarfile.TarFile) -> None:
    """What follows the zero block tarfile took for the archive's end. GNU tar ends an archive at
    two zero blocks; at one followed by anything but a zero block it warns ("A lone zero block")
    and stops: the members after it, which neither reads, would be missing from a view that looked
    whole, so such an archive is refused. One zero block and then nothing ends the archive (GNU tar
    warns, but nothing is left unread). Then the rest of the stream is read to its end, where a
    compressed archive's checksum (gzip's CRC, xz's check) is verified."""
    zero_block = tar.offset
    following = tar.fileobj.read(tarfile.BLOCKSIZE)
    if following.strip(b"\0"):
        raise _CorruptTar(
            f"a lone zero block at block {zero_block // tarfile.BLOCKSIZE}, followed by more: what follows it "
            "would not be read"
        )
    while tar.fileobj.read(_CHUNK):
        pass


def _tar_mtime(member: tarfile.TarInfo) -> int | None:
    """A member's time stamp in ns, when it is a time Go can print (years 1 to 9999)."""
    try:
        ns = int(member.mtime) * SECOND
    except (TypeError, ValueError, OverflowError):
        return None
    return ns if ZERO_TIME <= ns <= MAX_TIME else None


def _read_zip(f: Any, shown: str, wanted: Wanted) -> Iterator[Found]:
    budget = _Budget(shown)
    with zipfile.ZipFile(f) as z:
        infos = z.infolist()
        if len(infos) > MAX_MEMBERS:
            raise SnapshotError(f"{shown}: more than {MAX_MEMBERS} entries: not read")
        _refuse_overlaps(infos, shown)
        scanned = 0
        for info in infos:
            budget.count()
            mode = (info.external_attr >> 16) & 0o170000
            if info.is_dir() or (mode and not stat.S_ISREG(mode)):  # symlinks and special files
                continue
            parts = _safe_parts(info.filename)
            what = wanted(parts) if parts is not None else None
            if parts is None or what is None:
                continue
            budget.check(info.filename, info.file_size)
            scanned += info.file_size
            if scanned > MAX_SCANNED_BYTES:
                raise SnapshotError(f"{shown}: decompresses to more than {MAX_SCANNED_BYTES // (1024**3)} GiB")
            with z.open(info) as member:
                data = _read_bounded(member, info.file_size, info.filename, budget)
            yield parts, what, data, None


_ZIP_LOCAL_HEADER = 30  # bytes before a local entry's name


def _refuse_overlaps(infos: list[zipfile.ZipInfo], shown: str) -> None:
    """Entries whose data overlap (several names for the same compressed bytes, as zip bombs are
    built) are no archive a tool writes: refused before any is read."""
    spans = sorted(infos, key=lambda i: i.header_offset)
    for first, second in zip(spans, spans[1:], strict=False):
        end = first.header_offset + _ZIP_LOCAL_HEADER + first.compress_size
        start = second.header_offset
        if start < end:
            raise SnapshotError(
                f"{shown}: not a readable archive: entries {escape(first.filename)} and {escape(second.filename)} "
                "overlap (a zip bomb?)"
            )
