"""`kueue-gitops generate policies`: the admission policies of each cluster, from the profiles;
`generate argocd`: the Argo CD objects of argocd/ for another repository URL."""

from __future__ import annotations

import click
import yaml

from auditor.cli.options import Context, pass_context
from auditor.errors import ConfigError
from auditor.repo import argocd, boundaries
from auditor.repo.outfile import write_whole


@click.group()
def generate() -> None:
    """Write files that are made from the profiles (never edited by hand)."""


@generate.command()
@click.option(
    "--cluster",
    "clusters",
    multiple=True,
    help="Only this cluster (repeatable; default: every cluster).",
)
@pass_context
def policies(ctx: Context, clusters: tuple[str, ...]) -> None:
    """Write clusters/C/admission-policies.yaml: ValidatingAdmissionPolicies and bindings.

    Where another layout already syncs C's generated policies from a file of its own, that
    file is written instead.

    Made from the cluster profile (admission and tenant labels, platformIdentities), the
    tenant profiles (approved priority levels), the LocalQueues of each namespace that admits
    work and the frameworks of Kueue's Configuration in clusters/C/kueue/. `validate` reports
    a file that differs from what this writes.

    The bindings deny, or only warn and audit while the profile's
    spec.admissionPolicies.enforcement is Warn (how a cluster that already runs work starts:
    docs/boundaries.md); each cluster's line says which, and the step that changes it.
    """
    repo = ctx.repository()
    if repo.root is None:
        raise ConfigError("generate writes into a working tree; pass --repo DIR")
    names = list(clusters) or sorted(repo.clusters)
    loaded = repo.load(names)
    for name in names:
        profile = repo.cluster(name)
        objects = loaded.for_cluster(name)
        made = boundaries.boundaries(profile, repo.tenants, objects)
        text = boundaries.render(name, made, profile.file)
        target = repo.root / boundaries.policy_file(profile, objects)
        unchanged = target.is_file() and target.read_text() == text
        if not unchanged:
            write_whole(target, text, what="the admission policies")
        click.echo(
            f"{target}: {len(made.namespaces)} namespace(s) that admit work, "
            f"{'unchanged' if unchanged else 'written'}"
        )
        click.echo(f"  {boundaries.enforcement_note(profile)}")
        if not profile.platform_identities:
            ctx.note(
                f"{profile.file} lists no platformIdentities: nobody, Argo CD included, "
                "may change a namespace's admission or tenant labels"
            )
        if made.unchecked_pods:
            ctx.note(
                f"{name}: the pods' priorityClassName of {', '.join(made.unchecked_pods)} is "
                "not judged (only their labels are): the policies know where the pod template "
                "of built-in kinds is, not of custom resources"
            )


@generate.command("argocd")
@click.option("--repo-url", required=True, help="The repository Argo CD reads (a fork's URL).")
@pass_context
def argocd_objects(ctx: Context, repo_url: str) -> None:
    """Print argocd/'s ApplicationSets and AppProjects pointed at --repo-url, to apply.

    Every field that names the committed URL (the generators' and templates' repoURL, the
    projects' sourceRepos) names REPO_URL instead. Where Kueue writes a manager ClusterQueue's
    quota (MultiKueue quota automation), the ApplicationSet syncing it also ignores the fields
    Kueue's field manager owns on that queue, and respects that on sync, so self-heal does not
    fight Kueue. A fork runs `kueue-gitops generate argocd --repo-url <fork> | kubectl apply -n
    argocd -f -`; the sandbox applies the same to serve a local clone.
    """
    repo = ctx.repository()
    found = argocd.documents(repo)
    if not argocd.repo_urls(found):
        raise ConfigError(
            "no ApplicationSet in argocd/ names a repository URL to replace: write argocd/ "
            "with `kueue-gitops init --adopt --repo-url URL` (a repository `import` wrote)"
        )
    click.echo(yaml.safe_dump_all(argocd.for_url(repo, repo_url), sort_keys=False), nl=False)
