"""A pass-through FUSE filesystem that remembers what is not durable yet, and can forget it.

Every write goes to the backing directory at once (so reads need no cache of
their own), but the first change to each 4 KiB block of a file since its last
``fsync`` saves the block's durable bytes, and the file's durable size. A
*drop* puts those bytes back and cuts the file to its durable size: what a
power cut leaves of a disk whose cache was lost. ``fsync``/``fdatasync`` of a
file forget its saved blocks (it is durable now).

Names are durable only once their directory is: a create, rename or unlink is
logged, and ``fsync`` of the directory (as SQLite and PostgreSQL do after
creating or renaming a file) commits the entries of that directory. A drop
undoes the uncommitted ones, newest first. An unlinked or replaced file waits
in a hidden folder of the backing directory until then. Directories themselves
(mkdir, rmdir) are durable at once: neither database makes them under load.

Faults on top: ``torn`` keeps the first half (whole 512-byte sectors) of each
file's last unsynced write through a drop; ``fsync_delay_s`` makes every file
and directory sync that slow; ``limit_bytes`` makes the disk that small (writes
past it fail with ENOSPC, ``statfs`` shows it).
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mfusepy

BLOCK = 4096
SECTOR = 512
TRASH = ".faultfs-trash"  # in the backing directory: files unlinked or replaced, until their directory syncs


@dataclass
class Dirty:
    """A file's changes since its last fsync: the durable bytes of each block changed, its
    durable size, and its last write (what a torn write keeps part of)."""

    fd: int  # a descriptor of our own, so the file is restored wherever it has been renamed to
    size: int
    blocks: dict[int, bytes] = field(default_factory=dict)
    last: tuple[int, bytes] | None = None


@dataclass(frozen=True)
class NameChange:
    """One change of a directory entry not yet made durable, with what undoes it."""

    kind: str  # "create", "rename" or "unlink"
    path: str  # create/unlink: the name; rename: the old name
    new: str = ""  # rename: the new name
    trash: str = ""  # unlink, or rename onto an existing file: where the old file waits
    ino: int = 0  # create: the file's inode in the backing directory

    def directories(self) -> set[str]:
        return {os.path.dirname(p) for p in (self.path, self.new) if p}


class FaultFS(mfusepy.Operations):  # type: ignore[misc]
    """The operations of the filesystem; every one under one lock, so a drop sees no half-change."""

    use_ns = True

    def __init__(self, backing: str) -> None:
        self.root = os.path.realpath(backing)
        self.trash = os.path.join(self.root, TRASH)
        os.makedirs(self.trash, exist_ok=True)
        self._guard = threading.RLock()
        self.dirty: dict[int, Dirty] = {}  # backing inode -> its unsynced changes
        self.names: list[NameChange] = []  # oldest first
        self.torn = False
        self.fsync_delay_s = 0.0
        self.limit_bytes = 0  # 0: no limit
        self.used_bytes = self._measure()
        self._trash_count = 0
        self.on_mounted: Any = None

    # -- commands ---------------------------------------------------------------------------

    def drop(self) -> int:
        """Lose every unsynced byte and name; returns how many blocks were put back."""
        with self._guard:
            restored = 0
            for dirty in self.dirty.values():
                restored += self._restore(dirty)
            self.dirty.clear()
            for change in reversed(self.names):
                with contextlib.suppress(OSError):
                    self._undo(change)
            self.names.clear()
            self.used_bytes = self._measure()
            return restored

    def sync(self) -> None:
        """Make everything durable, as a clean shutdown would (``sync(1)``)."""
        with self._guard:
            for ino in list(self.dirty):
                self._forget(ino)
            for change in self.names:
                self._commit(change)
            self.names.clear()

    def leave(self, headroom: int) -> int:
        """Make the disk as small as what it holds now and ``headroom`` bytes more; its new size."""
        with self._guard:
            self.limit_bytes = self.used_bytes + headroom
            return self.limit_bytes

    def pending(self) -> tuple[int, int]:
        """How many blocks and names are not durable now."""
        with self._guard:
            return sum(len(d.blocks) for d in self.dirty.values()), len(self.names)

    # -- durability -------------------------------------------------------------------------

    def _restore(self, dirty: Dirty) -> int:
        for index, content in dirty.blocks.items():
            os.pwrite(dirty.fd, content, index * BLOCK)
        size = dirty.size
        if self.torn and dirty.last is not None:
            offset, data = dirty.last
            kept = data[: len(data) // 2 // SECTOR * SECTOR]
            if kept:
                os.pwrite(dirty.fd, kept, offset)
                size = max(size, offset + len(kept))
        os.ftruncate(dirty.fd, size)
        os.close(dirty.fd)
        return len(dirty.blocks)

    def _undo(self, change: NameChange) -> None:
        if change.kind == "create":
            real = self._real(change.path)
            if os.lstat(real).st_ino == change.ino:
                self._discard(change.ino)
                os.unlink(real)
        elif change.kind == "rename":
            os.rename(self._real(change.new), self._real(change.path))
            if change.trash:
                os.rename(change.trash, self._real(change.new))
        elif change.kind == "unlink":
            os.rename(change.trash, self._real(change.path))

    def _commit(self, change: NameChange) -> None:
        if change.trash:
            with contextlib.suppress(OSError):
                st = os.lstat(change.trash)
                self._discard(st.st_ino)
                os.unlink(change.trash)
                self.used_bytes -= st.st_size

    def _discard(self, ino: int) -> None:
        dirty = self.dirty.pop(ino, None)
        if dirty is not None:
            os.close(dirty.fd)

    def _forget(self, ino: int) -> None:
        self._discard(ino)

    def _track(self, ino: int, real: str) -> Dirty:
        dirty = self.dirty.get(ino)
        if dirty is None:
            fd = os.open(real, os.O_RDWR)
            dirty = self.dirty[ino] = Dirty(fd, os.fstat(fd).st_size)
        return dirty

    def _save(self, dirty: Dirty, start: int, end: int) -> None:
        """Keep the durable bytes of the blocks in [start, end) not saved yet."""
        for index in range(start // BLOCK, (end + BLOCK - 1) // BLOCK):
            if index not in dirty.blocks:
                dirty.blocks[index] = os.pread(dirty.fd, BLOCK, index * BLOCK)

    def _slow_sync(self) -> None:
        if self.fsync_delay_s:
            time.sleep(self.fsync_delay_s)

    def _room(self, grow: int) -> None:
        if self.limit_bytes and grow > 0 and self.used_bytes + grow > self.limit_bytes:
            raise mfusepy.FuseOSError(errno.ENOSPC)
        self.used_bytes += grow

    def _measure(self) -> int:
        total = 0
        for folder, _dirs, files in os.walk(self.root):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(folder, name)).st_size
        return total

    def _to_trash(self, real: str) -> str:
        self._trash_count += 1
        target = os.path.join(self.trash, f"{self._trash_count}-{os.path.basename(real)}")
        os.rename(real, target)
        return target

    # -- paths and owners -------------------------------------------------------------------

    def _real(self, path: str) -> str:
        if path == "/" + TRASH or path.startswith("/" + TRASH + "/"):
            raise mfusepy.FuseOSError(errno.ENOENT)
        return self.root + path

    def _own(self, real: str) -> None:
        """Files belong to whoever made them (PostgreSQL checks its data directory's owner)."""
        uid, gid, _pid = mfusepy.fuse_get_context()
        if uid != os.geteuid() or gid != os.getegid():
            os.lchown(real, uid, gid)

    # -- operations -------------------------------------------------------------------------

    def init(self, path: str) -> None:
        if self.on_mounted is not None:
            self.on_mounted()

    def getattr(self, path: str, fh: int | None = None) -> dict[str, Any]:
        st = os.fstat(fh) if fh is not None else os.lstat(self._real(path))
        attrs = {key: getattr(st, key) for key in ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size")}
        attrs.update(st_atime=st.st_atime_ns, st_mtime=st.st_mtime_ns, st_ctime=st.st_ctime_ns)
        attrs.update(st_blocks=st.st_blocks, st_blksize=st.st_blksize)
        return attrs

    def access(self, path: str, amode: int) -> int:
        if not os.access(self._real(path), amode):
            raise mfusepy.FuseOSError(errno.EACCES)
        return 0

    def readdir(self, path: str, fh: int) -> list[str]:
        names = [n for n in os.listdir(self._real(path)) if not (path == "/" and n == TRASH)]
        return [".", "..", *names]

    def readlink(self, path: str) -> str:
        return os.readlink(self._real(path))

    def statfs(self, path: str) -> dict[str, int]:
        st = os.statvfs(self.root)
        fields = ("f_bsize", "f_frsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_namemax")
        stats = {key: getattr(st, key) for key in fields}
        if self.limit_bytes:
            stats["f_blocks"] = self.limit_bytes // st.f_frsize
            stats["f_bfree"] = stats["f_bavail"] = max(0, self.limit_bytes - self.used_bytes) // st.f_frsize
        return stats

    def chmod(self, path: str, mode: int) -> int:
        os.chmod(self._real(path), mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        os.lchown(self._real(path), uid, gid)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        os.utime(self._real(path), ns=times, follow_symlinks=False) if times else os.utime(self._real(path))
        return 0

    def mkdir(self, path: str, mode: int) -> int:
        with self._guard:
            os.mkdir(self._real(path), mode)
            self._own(self._real(path))
        return 0

    def rmdir(self, path: str) -> int:
        with self._guard:
            os.rmdir(self._real(path))
        return 0

    def symlink(self, target: str, source: str) -> int:
        with self._guard:
            os.symlink(source, self._real(target))
            self._own(self._real(target))
        return 0

    def create(self, path: str, mode: int, fi: int | None = None) -> int:
        real = self._real(path)
        with self._guard:
            existed = os.path.lexists(real)
            fd = os.open(real, (fi or os.O_WRONLY) | os.O_CREAT, mode)
            if not existed:
                self._own(real)
                self.names.append(NameChange("create", path, ino=os.fstat(fd).st_ino))
        return fd

    def open(self, path: str, flags: int) -> int:
        real = self._real(path)
        with self._guard:
            fd = os.open(real, flags & ~os.O_TRUNC)
            if flags & os.O_TRUNC:
                self._truncate(real, os.fstat(fd), 0)
                os.ftruncate(fd, 0)
        return fd

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        with self._guard:
            st = os.fstat(fh)
            self._room(max(0, offset + len(data) - st.st_size))  # an overwrite inside the file takes no room
            dirty = self._track(st.st_ino, f"/proc/self/fd/{fh}")
            self._save(dirty, offset, offset + len(data))
            dirty.last = (offset, bytes(data))
            return os.pwrite(fh, data, offset)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        with self._guard:
            real = f"/proc/self/fd/{fh}" if fh is not None else self._real(path)
            self._truncate(real, os.stat(real), length)
            os.truncate(real, length)
        return 0

    def _truncate(self, real: str, st: os.stat_result, length: int) -> None:
        if length == st.st_size:
            return
        self._room(length - st.st_size)
        dirty = self._track(st.st_ino, real)
        if length < st.st_size:
            self._save(dirty, length, st.st_size)
        else:
            self._save(dirty, st.st_size, st.st_size + 1)  # the partial block that gains zeros

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        self._slow_sync()
        with self._guard:
            self._forget(os.fstat(fh).st_ino)
        return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        self._slow_sync()
        with self._guard:
            keep = []
            for change in self.names:
                if path in change.directories():
                    self._commit(change)
                else:
                    keep.append(change)
            self.names = keep
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    def release(self, path: str, fh: int) -> int:
        os.close(fh)
        return 0

    def unlink(self, path: str) -> int:
        with self._guard:
            trash = self._to_trash(self._real(path))
            self.names.append(NameChange("unlink", path, trash=trash))
        return 0

    def rename(self, old: str, new: str) -> int:
        with self._guard:
            target = self._real(new)
            trash = self._to_trash(target) if os.path.lexists(target) and not os.path.isdir(target) else ""
            os.rename(self._real(old), target)
            self.names.append(NameChange("rename", old, new=new, trash=trash))
        return 0


def mount(backing: str, mountpoint: str, fs: FaultFS) -> None:
    """Serve ``fs`` on ``mountpoint`` until it is unmounted (blocking, one thread).

    Other users may use it (PostgreSQL does not run as root); the kernel checks
    permissions, and caches no attributes or entries, so a fresh open after a
    drop sees what was kept.
    """
    Path(mountpoint).mkdir(parents=True, exist_ok=True)
    mfusepy.FUSE(
        fs,
        mountpoint,
        foreground=True,
        nothreads=True,
        allow_other=True,
        default_permissions=True,
        attr_timeout=0,
        entry_timeout=0,
        negative_timeout=0,
        fsname=f"faultfs:{backing}",
    )
