"""Rules of `codeowners --check`: CODEOWNERS matches the profiles (auditor/codeowners.py)."""

from __future__ import annotations

from auditor.rules.rule import rule, said

RULES = (
    rule(
        "codeowners-missing",
        "error",
        "ownership",
        "ownership",
        "The repository has no CODEOWNERS file.",
        """Without it GitHub asks nobody in particular to review a change to a tenant's quota.
        Run `kueue-gitops codeowners` and commit the file it writes.""",
        said("CODEOWNERS is committed at the repository's root."),
        said("CODEOWNERS was deleted."),
    ),
    rule(
        "codeowners-stale",
        "error",
        "ownership",
        "ownership",
        "CODEOWNERS differs from what the profiles generate.",
        """The owners come from the cluster and tenant profiles (the platform owns everything,
        each tenant its LocalQueues); a hand edit, or a profile changed without regenerating,
        leaves the wrong people approving. Run `kueue-gitops codeowners` and commit the
        result; the finding shows the difference.""",
        said("CODEOWNERS was regenerated after the last change to a profile."),
        said("team-c's profile was added, but CODEOWNERS was not regenerated."),
    ),
    rule(
        "codeowners-unowned",
        "error",
        "ownership",
        "ownership",
        "A file under clusters/ or tenants/ has no owner in CODEOWNERS.",
        """Nobody must approve a change to it. Usually a hand edit removed or overrode the
        line that owned it; run `kueue-gitops codeowners`.""",
        said("Every file under clusters/ and tenants/ matches a CODEOWNERS line with owners."),
        said("A line `/tenants/team-a/` without owners was added at the end of CODEOWNERS."),
    ),
)
