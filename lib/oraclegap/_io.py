"""Writing files so that nothing is lost (ground floor; imports only the standard library).

Every file the library writes goes through :func:`atomic_write`: the bytes go to a uniquely
named hidden temporary file beside the target, are flushed to disk, and the temporary file is
renamed over the target (an atomic step on POSIX file systems), then the directory entry is
flushed too. A reader therefore sees the old file or the new one, never a torn mix, and two
writers never share a temporary file. New files get the user's umask, like ``open()``.

Outputs that must not exist yet (an export, a new audit folder) are built in a temporary folder
from :func:`make_temp_dir` and moved into place by :func:`place_new`, which never replaces
anything: of two runs racing to one target, one wins and the other gets ``FileExistsError``.
Each such temporary folder holds a marker file (:data:`TMP_MARK`) naming the run that made it
(process id, host, a random token repeated in the folder's name, the target); a later run
removes a folder beside its own target only when that marker names a process of this host that
no longer runs (:func:`clean_dead_temps`). A folder without the marker -- whatever its name and
content -- is never touched.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
import socket
from pathlib import Path

__all__ = ["fsync_file", "fsync_dir", "atomic_write", "temp_path", "TMP_MARK", "make_temp_dir", "clean_dead_temps",
           "place_new", "pid_alive"]

#: The marker file inside every temporary folder :func:`make_temp_dir` creates.
TMP_MARK = ".oraclegap-tmp"
_MARK_FORMAT = "oraclegap.tmp"
_MARK_MAX_BYTES = 4096


def fsync_file(path) -> None:
    """Flush a file's content to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path) -> None:
    """Flush a directory's entries (renames into it) to disk, where the platform allows it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


def temp_path(path) -> Path:
    """A unique hidden temporary name beside ``path`` (same directory, so a rename is atomic)."""
    path = Path(path)
    return path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")


def _umask_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path, data: bytes | str, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` (bytes, or text in ``encoding``) to ``path`` atomically (see the module
    docstring); creates the parent directory. Returns ``path``."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode(encoding)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes or str, got {type(data).__name__}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _umask_mode())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return path


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` may still run on this host: False only when it is known to be gone.

    True for a running process (one of another user counts), for this process, and on Windows,
    where ``os.kill(pid, 0)`` would send the process a signal instead of asking about it (so what
    a process of unknown state left behind is kept)."""
    if pid == os.getpid() or os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _temp_dir_pattern(target: Path) -> re.Pattern:
    return re.compile(rf"^\.{re.escape(target.name)}\.tmp-(\d+)-([0-9a-f]{{16}})$")


def make_temp_dir(target, verb: str) -> Path:
    """Create the temporary folder ``.NAME.tmp-<pid>-<token>`` beside ``target`` (exclusively: a
    new folder, never an existing one) holding the marker :data:`TMP_MARK` that names this run
    (``verb``, process id, host, token, target). The parent folder must exist."""
    target = Path(target)
    for _ in range(16):
        token = secrets.token_hex(8)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{token}")
        try:
            tmp.mkdir()
        except FileExistsError:
            continue
        break
    else:  # pragma: no cover - 16 collisions of 64 random bits
        raise FileExistsError(errno.EEXIST, "no free temporary name", str(target))
    mark = {"format": _MARK_FORMAT, "version": 1, "verb": verb, "pid": os.getpid(), "host": socket.gethostname(),
            "token": token, "target": target.name}
    try:
        fd = os.open(tmp / TMP_MARK, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _umask_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(mark))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def _dead_run(entry: Path, target: Path) -> bool:
    """True when ``entry`` is a temporary folder of ``target`` whose marker names a run of this
    host that no longer runs; False for anything else (no marker, another name, a live run)."""
    m = _temp_dir_pattern(target).match(entry.name)
    if not m or entry.is_symlink() or not entry.is_dir():
        return False
    mark = entry / TMP_MARK
    try:
        if mark.is_symlink() or not mark.is_file() or mark.stat().st_size > _MARK_MAX_BYTES:
            return False
        info = json.loads(mark.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    if not isinstance(info, dict) or info.get("format") != _MARK_FORMAT:
        return False
    pid = info.get("pid")
    if (type(pid) is not int or str(pid) != m.group(1) or info.get("token") != m.group(2)
            or info.get("target") != target.name or info.get("host") != socket.gethostname()):
        return False
    return not pid_alive(pid)


def clean_dead_temps(target) -> list:
    """Remove the temporary folders :func:`make_temp_dir` made for ``target`` in runs that were
    killed: only folders named ``.NAME.tmp-<pid>-<token>`` beside ``target`` whose marker names
    this very folder, this target and a process of this host that no longer runs. Returns the
    removed paths."""
    target = Path(target)
    parent = target.parent
    try:
        entries = list(parent.iterdir())
    except OSError:
        return []
    removed = []
    for entry in entries:
        if _dead_run(entry, target):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _renameat2_noreplace(src: Path, dst: Path) -> bool:
    """``rename(src, dst)`` failing with ``FileExistsError`` when ``dst`` exists (Linux
    ``renameat2(RENAME_NOREPLACE)``); False where the platform or file system lacks it."""
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    at_fdcwd, noreplace = -100, 1
    if fn(at_fdcwd, os.fsencode(src), at_fdcwd, os.fsencode(dst), noreplace) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(src), None, str(dst))


def place_new(src, dst) -> Path:
    """Move ``src`` (a file or a folder) to ``dst`` in one step, only if nothing is at ``dst``
    (no file, folder or link, dangling or not): else ``FileExistsError`` and ``src`` stays. Of
    two calls racing to one ``dst``, exactly one succeeds."""
    src, dst = Path(src), Path(dst)
    if not _renameat2_noreplace(src, dst):
        if src.is_dir() and not src.is_symlink():
            os.mkdir(dst)  # the claim: FileExistsError for the loser; rename may replace only this empty folder
            try:
                os.rename(src, dst)
            except BaseException:
                os.rmdir(dst)
                raise
        else:
            try:
                os.link(src, dst, follow_symlinks=False)  # FileExistsError for the loser
            except FileExistsError:
                raise
            except OSError:  # no hard links here: claim the name with an empty file, then rename over it
                os.close(os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _umask_mode()))
                os.replace(src, dst)
            else:
                os.unlink(src)
    fsync_dir(dst.parent)
    return dst

