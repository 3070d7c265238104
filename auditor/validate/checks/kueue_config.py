"""Kueue's Configuration for the cluster is in the repository, is what its Kueue release accepts,
and keeps every Job of a namespace that admits work under Kueue.

The Configuration sits as text inside the ConfigMap Kueue reads, so its findings point at the
line inside that block. It is judged by the JSON Schema derived from the Go types of the Kueue
release the cluster profile names (auditor/kueue/api/), as strictly as Kueue decodes it, plus
Kueue's own start-up rule that the managed namespaces leave out kube-system and its own.
"""

from __future__ import annotations

import difflib
import typing as t

from auditor import rules
from auditor.k8s import selectors
from auditor.kueue import NAMESPACE, release
from auditor.kueue import config as kueue_config
from auditor.model import Finding
from auditor.repo import boundaries, manifests
from auditor.validate.checks import protocol
from auditor.validate.checks._embedded import Embedded

if t.TYPE_CHECKING:
    from collections.abc import Iterator

    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
KUEUE_CONFIG_MISSING = RULES["kueue-config-missing"]
KUEUE_CONFIG_INVALID = RULES["kueue-config-invalid"]
KUEUE_CONFIG_UNMANAGED_JOBS = RULES["kueue-config-unmanaged-jobs"]

ID = "kueue-config"
RERUN = protocol.CLUSTER
NAME_LABEL = "kubernetes.io/metadata.name"


def check(ctx: CheckContext) -> Iterator[Finding]:
    # Kueue's ConfigMap by its identity, wherever the layout or a render put it.
    found = boundaries.config_map(ctx.of_kind("ConfigMap"))
    if found is None:
        if ctx.unrendered:
            return  # it may be in what did not render
        where = (
            f"clusters/{ctx.cluster.name}/{boundaries.KUEUE_FOLDER}/"
            if boundaries.convention(ctx.cluster)
            else f"a folder synced to {ctx.cluster.name}"
        )
        yield _at_profile(
            ctx,
            KUEUE_CONFIG_MISSING,
            f"the repository holds no Kueue Configuration for {ctx.cluster.name}: keep the "
            f"ConfigMap {NAMESPACE}/{kueue_config.CONFIG_MAP} (key "
            f"{kueue_config.KEY}) in {where}, "
            "or Kueue runs on upstream's defaults, where a Job without a queue name runs "
            "outside every quota",
        )
        return
    embedded = Embedded(ctx, found, KUEUE_CONFIG_INVALID)
    config = embedded.parse()
    if config is None:
        yield embedded.problem
        return
    yield from _against_api(ctx, embedded, config)
    yield from _managed(ctx, embedded, config)


def _against_api(
    ctx: CheckContext, embedded: Embedded, config: dict[str, t.Any]
) -> Iterator[Finding]:
    version = ctx.cluster.kueue_version
    api = kueue_config.api(version) if version else None
    if api is None:
        known = ", ".join(kueue_config.known_versions())
        nearest = release.nearest(version)
        said = (
            f"names Kueue {version}, a release this tool does not know"
            if version
            else "names no Kueue release (spec.kueue.version)"
        )
        add = f"; to add {version}, {release.add_command(version)}" if version else ""
        yield _at_profile(
            ctx,
            KUEUE_CONFIG_INVALID,
            f"the cluster profile {said}, so its Configuration cannot be checked against what "
            f"that release accepts (its webhook rules are judged as the nearest known release, "
            f"{nearest}, judges them; known: {known}){add}",
        )
        return
    import jsonschema  # only where a Configuration is checked: ~0.1 s of imports

    validator = jsonschema.Draft202012Validator(api.schema)
    for error in sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path)):
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            for name in extra:
                yield embedded.finding(
                    f"unknown field {'.'.join(str(p) for p in (*path, name))}: Kueue {api.version}"
                    " decodes its Configuration strictly and would not start",
                    (*path, name),
                )
            continue
        where = ".".join(str(p) for p in path) or "(top level)"
        yield embedded.finding(
            f"{where}: {error.message} (Kueue {api.version} would not start)", path
        )
    yield from _gates(embedded, config, api.version)
    selector = config.get("managedJobsNamespaceSelector")
    namespace = config.get("namespace") or NAMESPACE
    for forbidden in ("kube-system", namespace):
        if selector is not None and selectors.selects(selector, {NAME_LABEL: forbidden}, nil=True):
            yield embedded.finding(
                f"managedJobsNamespaceSelector matches namespace {forbidden}: Kueue refuses "
                "to start with a selector that would manage its own or the system's jobs",
                ("managedJobsNamespaceSelector",),
            )


def _gates(embedded: Embedded, config: dict[str, t.Any], version: str) -> Iterator[Finding]:
    """featureGates names only gates the release has, and leaves a locked gate at its default:
    Kueue refuses to start otherwise (LoadAndValidateFeatureGates)."""
    known = release.get(version)
    chosen = config.get("featureGates")
    if known is None or not isinstance(chosen, dict):
        return
    for name, value in chosen.items():
        gate = known.gates.get(str(name))
        path = ("featureGates", str(name))
        if gate is None:
            near = difflib.get_close_matches(str(name), list(known.gates), n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            yield embedded.finding(
                f"featureGates.{name}: Kueue {version} has no such feature gate{hint} and "
                "would not start",
                path,
            )
        elif gate.locked and value is not gate.default:
            yield embedded.finding(
                f"featureGates.{name}: the gate is locked to {str(gate.default).lower()} in "
                f"Kueue {version} (it graduated), which would not start with {value!r}",
                path,
            )


def _managed(ctx: CheckContext, embedded: Embedded, config: dict[str, t.Any]) -> Iterator[Finding]:
    key, value = ctx.cluster.admission_label
    if config.get("manageJobsWithoutQueueName") is not True:
        yield embedded.finding(
            "manageJobsWithoutQueueName is not true: a Job without kueue.x-k8s.io/queue-name in a "
            "namespace that admits work would start at once, outside every quota",
            ("manageJobsWithoutQueueName",),
            rule=KUEUE_CONFIG_UNMANAGED_JOBS,
        )
    selector = config.get("managedJobsNamespaceSelector")
    admitting = {key: value, NAME_LABEL: "a-tenant-namespace"}
    exact = selectors.selects(selector, admitting, nil=False) and _requires(selector, key, value)
    api = kueue_config.api(ctx.cluster.kueue_version or "")
    if api and "managedJobsNamespaceSelector" not in api.schema.get("properties", {}):
        yield embedded.finding(
            f"Kueue {api.version} has no managedJobsNamespaceSelector, so it cannot keep its "
            f"management to the namespaces labelled {key}={value}: a Job without a queue name "
            "is held in every namespace (manageJobsWithoutQueueName) or in none; upgrade Kueue",
            ("manageJobsWithoutQueueName",),
            rule=KUEUE_CONFIG_UNMANAGED_JOBS,
        )
    elif not exact:
        yield embedded.finding(
            f"managedJobsNamespaceSelector must select exactly the namespaces labelled {key}="
            f"{value} (the cluster's admission label), e.g. matchLabels: {{{key}: {value}}}",
            ("managedJobsNamespaceSelector",),
            rule=KUEUE_CONFIG_UNMANAGED_JOBS,
        )


def _requires(selector: t.Any, key: str, value: str) -> bool:
    try:
        parsed = selectors.parse(selector)
    except selectors.SelectorError:
        return False
    return parsed is not None and parsed.requires(key, value)


def _at_profile(ctx: CheckContext, rule: rules.Rule, message: str) -> Finding:
    found, _ = manifests.load_bytes(ctx.repo.tree.read(ctx.cluster.file), ctx.cluster.file)
    return Finding.about(found[0], rule, message, path=("spec", "kueue"))
