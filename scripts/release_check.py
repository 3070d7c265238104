"""Check a release before it is published: `python scripts/release_check.py vX.Y.Z dist/`.

The release workflow (.github/workflows/release.yml) runs it on the sdist and wheel it built
from the tag; a maintainer can run it locally the same way. It fails (exit 1, saying why)
unless the tag is vX.Y.Z, CHANGELOG.md has a section `## [X.Y.Z] - YYYY-MM-DD` that is not
empty, dist/ holds exactly that version's sdist and wheel, twine finds their metadata sound,
and the wheel carries the pinned Go modules (testenv/) the sandbox builds from. It writes the
section's text to dist/../release-notes.md, the GitHub release's notes.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TAG = re.compile(r"v(?P<version>[0-9]+\.[0-9]+\.[0-9]+)")


def section(changelog: str, version: str) -> str:
    """The text under `## [version] - date`, up to the next release's heading."""
    found = re.search(
        rf"^## \[{re.escape(version)}\] - \d{{4}}-\d{{2}}-\d{{2}}\n(?P<body>.*?)(?=^## \[|\Z)",
        changelog,
        flags=re.M | re.S,
    )
    if found is None:
        raise SystemExit(f"CHANGELOG.md has no section `## [{version}] - YYYY-MM-DD`")
    body = found["body"].strip()
    if not body:
        raise SystemExit(f"CHANGELOG.md's section {version} is empty")
    return body + "\n"


def check(tag: str, dist: Path) -> str:
    match = TAG.fullmatch(tag)
    if match is None:
        raise SystemExit(f"{tag!r} is not a release tag: vX.Y.Z")
    version = match["version"]
    notes = section((ROOT / "CHANGELOG.md").read_text(), version)
    built = sorted(p.name for p in dist.iterdir())
    wanted = [f"kueue_gitops-{version}-py3-none-any.whl", f"kueue_gitops-{version}.tar.gz"]
    if built != wanted:
        raise SystemExit(f"{dist} holds {built}, not {wanted}: was it built from the tag?")
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))],
        capture_output=True,
        text=True,
    )
    if twine.returncode != 0:
        raise SystemExit(f"twine check failed:\n{twine.stdout}{twine.stderr}")
    with zipfile.ZipFile(dist / wanted[0]) as wheel:
        if "auditor/testenv/go.mod" not in wheel.namelist():
            raise SystemExit("the wheel lacks auditor/testenv/: the sandbox could not build")
    return notes


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    dist = Path(sys.argv[2])
    notes = check(sys.argv[1], dist)
    (dist.resolve().parent / "release-notes.md").write_text(notes)
    print(f"{sys.argv[1]}: ready to publish ({', '.join(sorted(p.name for p in dist.iterdir()))})")


if __name__ == "__main__":
    main()
