"""The one way onboarding writes into a repository: every file at once, or none.

`init`, `cluster add`, `tenant add` (through `Plan.write`) and `import` write here. A command
that writes a dozen files and fails at the ninth leaves a folder that blocks its own retry
("exists already"). So every file is first written aside, in a folder inside the repository's
root (the same filesystem, so moving it in is a rename), and then moved in: a folder the
repository does not have yet moves in whole, by one rename; a file in a folder it has replaces
its old self by one rename too; a folder given whole (a cluster's schemas) replaces the old one
by two; a file to remove is moved aside. If a move fails, the ones made before it are undone,
and the repository is as it was. Only a crash between two renames can leave part of a change
in place, and then every part is whole.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import typing as t
from pathlib import Path

from auditor.errors import AuditorError, ConfigError

STAGING_PREFIX = ".kueue-gitops-staging-"  # a dot folder: never read as a cluster or tenant

Fill = t.Callable[[Path], object]  # makes a folder's whole content in the folder it is given


def write_all(
    root: Path,
    files: t.Mapping[str, str],
    new: t.Collection[str] = (),
    *,
    removed: t.Collection[str] = (),
    folders: t.Mapping[str, Fill] | None = None,
) -> list[str]:
    """Write `files` (POSIX path below `root` -> text) into `root` together, each of `new` a
    file that must not exist yet (else nothing is written); remove `removed`; replace each of
    `folders` whole by what its function makes. The paths written, in the order given."""
    root = root.resolve()
    folders = folders or {}
    for path in [*files, *removed, *folders]:
        if Path(path).is_absolute() or ".." in Path(path).parts:
            raise ValueError(f"{path}: not a path inside the repository")  # a bug: ours
    taken = sorted(p for p in new if (root / p).exists() or (root / p).is_symlink())
    if taken:
        raise ConfigError(f"{', '.join(taken)} exists already: nothing was written")
    if not (files or removed or folders):
        return []
    root.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=root))
    try:
        for path, text in files.items():
            _write(aside / "new" / path, text)
        for folder, fill in folders.items():
            (aside / "new" / folder).mkdir(parents=True)
            fill(aside / "new" / folder)
        _move_in(root, aside, list(files), list(removed), list(folders))
    except OSError as exc:
        raise AuditorError(f"could not write into {root}: {exc}; nothing was written") from exc
    finally:
        shutil.rmtree(aside, ignore_errors=True)
    return list(files)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())


def _move_in(
    root: Path, aside: Path, paths: list[str], removed: list[str], folders: list[str]
) -> None:
    """Move each staged folder, file (or the new folder above it) into place, and the removed
    files out; undo on failure."""
    undo: list[t.Callable[[], None]] = []
    # Judged before any move: a file inside a new folder goes in with the folder.
    tops = list(dict.fromkeys(_first_missing(root, path) for path in paths))
    try:
        for n, folder in enumerate(folders):
            target = root / folder
            if target.exists():
                kept = aside / "old-folders" / str(n)
                kept.parent.mkdir(parents=True, exist_ok=True)
                os.rename(target, kept)
                undo.append(functools.partial(_put_back, kept, target))
            else:
                undo.append(functools.partial(_remove, target))
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(aside / "new" / folder, target)
        for top in tops:
            source, target = aside / "new" / top, root / top
            if target.exists():  # an existing file, replaced: keep the old one to restore
                kept = aside / "old" / top
                kept.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(target, kept)
                os.replace(source, target)
                undo.append(functools.partial(os.replace, kept, target))
            else:  # a new file, or a new folder with the files below it
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
                undo.append(functools.partial(_remove, target))
        for n, path in enumerate(removed):
            target = root / path
            if target.exists():
                gone = aside / "gone" / str(n)
                gone.parent.mkdir(parents=True, exist_ok=True)
                os.replace(target, gone)
                undo.append(functools.partial(os.replace, gone, target))
    except OSError:
        for step in reversed(undo):
            step()
        raise


def _first_missing(root: Path, path: str) -> str:
    """The outermost folder of `path` the repository lacks (moved in whole), else `path`."""
    parts = Path(path).parts
    for i in range(1, len(parts)):
        head = Path(*parts[:i])
        if not (root / head).exists():
            return head.as_posix()
    return path


def _put_back(kept: Path, target: Path) -> None:
    _remove(target)
    os.rename(kept, target)


def _remove(target: Path) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
