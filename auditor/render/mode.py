"""Which renderer releases may render: `--renderers exact|any`, else $KUEUE_GITOPS_RENDERERS,
else the cluster profile's `argocd.renderers`. Apart from auditor/render/tools.py so that
declaring the option loads nothing of the renderers."""

from __future__ import annotations

import os

EXACT_ENV = "KUEUE_GITOPS_RENDERERS"  # "exact": only the release Argo CD runs renders; "any"
MODES = ("exact", "any")
_chosen: list[str | None] = [None]  # the command's --renderers, over the environment's


def choose(mode: str | None) -> None:
    """The running command's --renderers (exact or any; None: not given)."""
    _chosen[0] = mode


def exact(profile: bool = False) -> bool:
    """Whether only the release Argo CD runs may render: the command's --renderers, else
    KUEUE_GITOPS_RENDERERS, else the cluster profile's `argocd.renderers` (`profile`)."""
    for said in (_chosen[0], os.environ.get(EXACT_ENV)):
        mode = (said or "").strip().lower()
        if mode in MODES:
            return mode == "exact"
    return profile
