"""The lose-unsynced-writes filesystem does what a disk with a volatile cache does at a power cut."""

from __future__ import annotations

import errno
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faultfs.mount import Mount, mounted

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def module_mount(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mount]:
    root = tmp_path_factory.mktemp("faultfs")
    with mounted(root / "backing", root / "mount") as mount:
        yield mount


@pytest.fixture
def fs(module_mount: Mount) -> Mount:
    """The module's mount with nothing pending and no faults set."""
    module_mount.sync()
    module_mount.torn(False)
    module_mount.limit(0)
    return module_mount


def write(path: Path, data: bytes, offset: int = 0, sync: bool = False) -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, data, offset)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def durable_file(fs: Mount, name: str, data: bytes) -> Path:
    path = fs.path / name
    write(path, data, sync=True)
    sync_dir(fs.path)
    assert fs.pending() == (0, 0)
    return path


def test_writes_read_back_and_reach_the_backing_directory(fs: Mount) -> None:
    path = fs.path / "plain"
    write(path, b"hello world")
    assert path.read_bytes() == b"hello world"
    assert (fs.backing / "plain").read_bytes() == b"hello world"
    assert fs.pending() == (1, 1)  # one block, one name: neither durable yet


def test_a_drop_loses_unsynced_data_and_fsync_makes_it_durable(fs: Mount) -> None:
    path = durable_file(fs, "kept", b"A" * 5000)
    write(path, b"B" * 3000, offset=4000)  # changes two blocks and makes the file longer
    assert path.read_bytes() == b"A" * 4000 + b"B" * 3000
    assert fs.drop() == 2
    assert path.read_bytes() == b"A" * 5000
    write(path, b"C" * 10, offset=0, sync=True)
    fs.drop()
    assert path.read_bytes() == b"C" * 10 + b"A" * 4990


def test_a_created_file_needs_its_directory_synced(fs: Mount) -> None:
    lost = fs.path / "lost"
    write(lost, b"data", sync=True)  # the file's data is durable, its name is not
    fs.drop()
    assert not lost.exists()
    kept = fs.path / "kept-name"
    write(kept, b"data", sync=True)
    sync_dir(fs.path)
    fs.drop()
    assert kept.read_bytes() == b"data"


def test_a_rename_is_undone_unless_its_directory_is_synced(fs: Mount) -> None:
    old = durable_file(fs, "old", b"old")
    target = durable_file(fs, "target", b"replaced")
    os.rename(old, target)
    assert target.read_bytes() == b"old" and not old.exists()
    fs.drop()
    assert old.read_bytes() == b"old" and target.read_bytes() == b"replaced"
    os.rename(old, target)
    sync_dir(fs.path)
    fs.drop()
    assert target.read_bytes() == b"old" and not old.exists()


def test_an_unlink_is_undone_unless_its_directory_is_synced(fs: Mount) -> None:
    path = durable_file(fs, "doomed", b"still here")
    path.unlink()
    assert not path.exists()
    assert ".faultfs-trash" not in os.listdir(fs.path)
    fs.drop()
    assert path.read_bytes() == b"still here"
    path.unlink()
    sync_dir(fs.path)
    fs.drop()
    assert not path.exists()


def test_a_truncate_is_undone_unless_synced(fs: Mount) -> None:
    path = durable_file(fs, "long", bytes(range(256)) * 40)
    os.truncate(path, 100)
    assert path.stat().st_size == 100
    fs.drop()
    assert path.read_bytes() == bytes(range(256)) * 40
    fd = os.open(path, os.O_RDWR)
    try:
        os.ftruncate(fd, 100)
        os.fsync(fd)
    finally:
        os.close(fd)
    fs.drop()
    assert path.read_bytes() == (bytes(range(256)) * 40)[:100]


def test_a_torn_write_keeps_the_first_half_of_the_last_write(fs: Mount) -> None:
    path = durable_file(fs, "torn", b"a" * 8192)
    fs.torn(True)
    write(path, b"b" * 8192)
    fs.drop()
    assert path.read_bytes() == b"b" * 4096 + b"a" * 4096


def test_a_full_disk_refuses_writes_with_enospc(fs: Mount) -> None:
    path = durable_file(fs, "big", b"x" * 4096)
    used = sum(p.stat().st_size for p in fs.backing.rglob("*") if p.is_file())
    fs.limit(used + 10_000)
    assert os.statvfs(fs.path).f_bavail * os.statvfs(fs.path).f_frsize <= 10_000
    with pytest.raises(OSError) as refused:
        write(path, b"y" * 20_000, offset=4096)
    assert refused.value.errno == errno.ENOSPC
    write(path, b"y" * 4096, offset=4096)  # what fits still goes
    for _ in range(3):  # an overwrite takes no room, and gives none back
        write(path, b"z" * 4096, offset=0)
    with pytest.raises(OSError):
        write(path, b"y" * 20_000, offset=os.stat(path).st_size)
    fs.limit(0)
    write(path, b"y" * 20_000, offset=4096)


def test_sigusr1_drops_and_sigterm_unmounts(tmp_path: Path) -> None:
    with mounted(tmp_path / "backing", tmp_path / "mount") as mount:
        path = mount.path / "file"
        write(path, b"durable", sync=True)
        sync_dir(mount.path)
        write(path, b"DURABLE")
        mount.proc.send_signal(signal.SIGUSR1)
        assert mount.line(10) == "dropped"
        assert path.read_bytes() == b"durable"
        mount.proc.send_signal(signal.SIGTERM)
        assert mount.proc.wait(timeout=10) == 0
        assert not os.path.ismount(mount.path)
    assert (tmp_path / "backing" / "file").read_bytes() == b"durable"
