"""Which `testenv/` the sandbox builds from: the repository's own, else the one in the package.

A wheel carries this project's `testenv/` as `auditor/testenv/` (setup.py maps it in), so the
sandbox works in a platform team's repository that has no Go modules of its own. In a source
checkout (an editable install) the package's pins are the checkout's `testenv/` itself. The
files are the same bytes either way, so both find the same builds in the cache (build.py keys
them by the pins' content).
"""

from __future__ import annotations

from pathlib import Path

from auditor.errors import ConfigError, SandboxError
from auditor.repo.root import find_root

_PACKAGE = Path(__file__).resolve().parents[1]
# In a wheel: auditor/testenv/. In a source checkout: testenv/ beside auditor/.
_SHIPPED = (_PACKAGE / "testenv", _PACKAGE.parent / "testenv")


def shipped() -> Path:
    """The pins that came with this installation of kueue-gitops."""
    for folder in _SHIPPED:
        if (folder / "go.mod").is_file():
            return folder
    raise SandboxError(
        f"this installation of kueue-gitops has no pinned Go modules (looked in "
        f"{' and '.join(str(f) for f in _SHIPPED)}): reinstall it from a wheel or sdist"
    )


def testenv(start: Path) -> Path:
    """The pins for a repository at or above `start`: its own testenv/ when it has one (this
    project's checkout does), else those shipped with the package."""
    try:
        own = find_root(start) / "testenv"
    except ConfigError:  # not in a repository: the sandbox still runs on the shipped pins
        return shipped()
    return own if (own / "go.mod").is_file() else shipped()
