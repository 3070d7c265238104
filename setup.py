"""What pyproject.toml cannot say: `testenv/` ships inside the package, as `auditor/testenv/`.

The Go modules the sandbox builds from (the control plane, each pinned Kueue release, the peer
tools, and any module or program added under testenv/ later) stay at the repository's root,
where Go, CI and the other tools expect them; setuptools maps that folder into the package, so a
wheel or sdist carries the same files byte for byte (docs/design.md, "The pins"). Its
files are package data (`auditor.testenv` in pyproject.toml); its folders are listed as
packages only so that setuptools takes them as part of the package rather than stray data.
"""

from setuptools import find_namespace_packages, setup

PINS = "testenv"

setup(
    packages=[
        *find_namespace_packages(include=["auditor", "auditor.*"]),
        "auditor.testenv",
        *(f"auditor.testenv.{p}" for p in find_namespace_packages(where=PINS)),
    ],
    package_dir={"auditor.testenv": PINS},
)
