"""Who may do what: RBAC roles, aggregated ClusterRoles and bindings, read as the authorizer does.

The one RBAC model: validate's tenant-rbac check, drift's RBAC powers and plan's RBAC section all
ask it. A rule allows a request when its verbs, apiGroups and resources match (`*` matches all,
`*/status` every status subresource); a rule with resourceNames allows only requests naming one
of them; nonResourceURLs match paths (a trailing `*` is a prefix). A ClusterRoleBinding grants its
role's rules everywhere, a RoleBinding only for requests in its namespace (a namespace object's
own request carries it as its namespace, so a Role may grant `patch` on its own namespace). An
aggregated ClusterRole holds the union of the ClusterRoles its selectors match (what the
aggregation controller writes, to a fixed point), so an aggregation not yet written still counts.
`system:masters` may do anything, with no binding.

A power is a watched verb on a resource, cluster-wide (namespace None) or in one namespace,
optionally on one named object: what changes what Kueue admits, or who may grant more.
"""

from __future__ import annotations

import functools
import typing as t
from dataclasses import dataclass, field, replace

from auditor.k8s import selectors
from auditor.k8s.objects import KUEUE_GROUP, RBAC_GROUP, SCHEDULING_GROUP, Json

ALL = "*"
READ_VERBS = ("get", "list", "watch")
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
ESCALATION_VERBS = ("bind", "escalate", "impersonate")  # grant more than one holds
# Every verb the API server's authorizer is asked (plus `*` in a rule): a verb outside these
# three sets (approve, sign, use, or an extension's own) is a write for anyone who judges rules.
VERBS = (*READ_VERBS, *WRITE_VERBS, *ESCALATION_VERBS, "approve", "sign", "use")
MASTERS = "system:masters"


class Watched(t.NamedTuple):
    group: str
    resource: str
    verbs: tuple[str, ...]
    in_namespace: bool  # the API server asks it with a namespace, so a RoleBinding may grant it


QUOTA_RESOURCES = ("clusterqueues", "resourceflavors", "cohorts", "workloadpriorityclasses")
WATCHED: tuple[Watched, ...] = (
    *(Watched(KUEUE_GROUP, r, WRITE_VERBS, False) for r in QUOTA_RESOURCES),
    Watched(SCHEDULING_GROUP, "priorityclasses", WRITE_VERBS, False),
    Watched("", "namespaces", ("update", "patch"), True),  # relabelling one is admission
    # `bind` is asked in the namespace of the RoleBinding being written, for Roles and ClusterRoles.
    Watched(RBAC_GROUP, "roles", ("bind", "escalate"), True),
    Watched(RBAC_GROUP, "clusterroles", ("bind", "escalate"), True),
    Watched("", "users", ("impersonate",), False),
    Watched("", "groups", ("impersonate",), False),
    Watched("", "serviceaccounts", ("impersonate",), True),
)


@dataclass(frozen=True, order=True)
class Subject:
    kind: str  # User, Group or ServiceAccount
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"

    def covers(self, other: Subject) -> bool:
        """Whether a binding to this subject applies to `other` (a service account is also in
        the groups the API server's authenticator gives every service account)."""
        if self == other:
            return True
        return other.kind == "ServiceAccount" and self in (
            Subject("Group", "system:serviceaccounts"),
            Subject("Group", f"system:serviceaccounts:{other.namespace}"),
        )


def subject_of(raw: t.Any, binding_namespace: str | None) -> Subject | None:
    """A binding's subject as the authorizer matches it (None when it matches nobody)."""
    if not isinstance(raw, dict):
        return None
    kind, name = str(raw.get("kind", "")), str(raw.get("name", ""))
    if kind == "User" and name.startswith("system:serviceaccount:") and name.count(":") == 3:
        _, _, ns, sa = name.split(":")
        return Subject("ServiceAccount", sa, ns)
    if kind == "ServiceAccount":  # a RoleBinding's service account defaults to its namespace
        sa_ns = raw.get("namespace") or binding_namespace
        return Subject(kind, name, str(sa_ns)) if sa_ns else None
    return Subject(kind, name) if kind in ("User", "Group") else None


@dataclass(frozen=True, order=True)
class Power:
    verb: str
    group: str
    resource: str
    namespace: str | None = None  # None: cluster-wide
    name: str | None = None  # None: every object

    def __str__(self) -> str:
        res = f"{self.resource}.{self.group}" if self.group else self.resource
        named = f" named {self.name}" if self.name else ""
        where = f"in namespace {self.namespace}" if self.namespace else "cluster-wide"
        return f"{self.verb} {res}{named} {where}"

    def covers(self, other: Power) -> bool:
        """A cluster-wide power covers every namespace, an unnamed one every object."""
        same = (self.verb, self.group, self.resource) == (other.verb, other.group, other.resource)
        return (
            same and self.namespace in (None, other.namespace) and self.name in (None, other.name)
        )


@dataclass(frozen=True, order=True)
class RoleRef:
    kind: str  # Role or ClusterRole
    name: str
    namespace: str | None = None  # a Role's

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


@dataclass(frozen=True)
class Origin:
    """Where a rule is written: rules[index] of a role."""

    role: RoleRef
    index: int

    def __str__(self) -> str:
        return f"{self.role} rules[{self.index}]"


def _strings(raw: Json, key: str) -> tuple[str, ...]:
    values = raw.get(key)
    return tuple(str(v) for v in values) if isinstance(values, list) else ()


@dataclass(frozen=True)
class Rule:
    """One PolicyRule; equal rules are one rule wherever written (as aggregation merges them)."""

    verbs: tuple[str, ...] = ()
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    origin: Origin | None = field(default=None, compare=False)

    @classmethod
    def of(cls, raw: t.Any, origin: Origin | None = None) -> Rule:
        """The rule in `raw`; a malformed one allows nothing."""
        if not isinstance(raw, dict):
            return cls(origin=origin)
        return cls(
            _strings(raw, "verbs"),
            _strings(raw, "apiGroups"),
            _strings(raw, "resources"),
            _strings(raw, "resourceNames"),
            _strings(raw, "nonResourceURLs"),
            origin,
        )


@dataclass(frozen=True)
class Request:
    """What the authorizer is asked: a verb on a resource (`jobs/status` for a subresource) in a
    namespace (None: cluster-wide) and on a name (None: no name), or on a non-resource `path`."""

    verb: str
    group: str = ""
    resource: str = ""
    namespace: str | None = None
    name: str | None = None
    path: str | None = None


def allows(rule: Rule, request: Request) -> bool:
    if not (ALL in rule.verbs or request.verb in rule.verbs):
        return False
    if request.path is not None:
        path = request.path
        return any(
            url in (ALL, path) or (url.endswith("*") and path.startswith(url.rstrip("*")))
            for url in rule.non_resource_urls
        )
    sub = request.resource.partition("/")[2]
    return (
        (ALL in rule.api_groups or request.group in rule.api_groups)
        and any(r in (ALL, request.resource) or (sub and r == f"*/{sub}") for r in rule.resources)
        and (not rule.resource_names or (request.name or "") in rule.resource_names)
    )


@dataclass(frozen=True)
class Binding:
    body: Json  # the RoleBinding or ClusterRoleBinding
    role: RoleRef
    namespace: str | None  # a RoleBinding's
    subjects: tuple[Subject, ...]

    def __str__(self) -> str:
        meta = self.body.get("metadata") or {}
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.body.get('kind')} {where}{meta.get('name')}"


@dataclass(frozen=True)
class Grant:
    """A watched power a subject holds, and its path: binding -> role -> rule."""

    subject: Subject
    power: Power
    binding: Binding
    rule: Rule

    @property
    def role(self) -> RoleRef:
        return self.binding.role

    @property
    def written(self) -> str:
        """The rule, as `rules[i]` of the bound role or `<role> rules[i]` of one it aggregates."""
        origin = self.rule.origin
        return f"rules[{origin.index}]" if origin and origin.role == self.role else str(origin)

    @property
    def path(self) -> str:
        return f"{self.binding} -> {self.role} -> {self.written}"


_Reach = list[tuple[Power, Rule]]  # the watched powers a role gives through one binding


def _meta(obj: Json) -> Json:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


class Policy:
    """The RBAC objects of one cluster (or one revision of the repository), resolved."""

    def __init__(self, objects: t.Iterable[Json]) -> None:
        self.roles: dict[RoleRef, tuple[Rule, ...]] = {}
        self.aggregated: dict[RoleRef, list[RoleRef]] = {}  # the ClusterRoles each one unions
        self.bindings: list[Binding] = []
        cluster_roles: list[Json] = []
        for obj in objects:
            kind, meta = obj.get("kind"), _meta(obj)
            if kind in ("Role", "ClusterRole"):
                ns = meta.get("namespace") if kind == "Role" else None
                ref = RoleRef(str(kind), str(meta.get("name", "")), ns)
                raw = obj.get("rules")
                rules = raw if isinstance(raw, list) else []
                self.roles[ref] = tuple(Rule.of(r, Origin(ref, i)) for i, r in enumerate(rules))
                if kind == "ClusterRole":
                    cluster_roles.append(obj)
            elif kind in ("RoleBinding", "ClusterRoleBinding"):
                self.bindings.extend(_binding(obj))
        self._aggregate(cluster_roles)
        self._reach: dict[tuple[RoleRef, str | None, tuple[Watched, ...]], _Reach] = {}
        self._shapes: dict[tuple[RoleRef, bool, tuple[Watched, ...]], list[_Shaped]] = {}

    def _aggregate(self, cluster_roles: list[Json]) -> None:
        """Aggregated ClusterRoles get the union of the ones they select, until nothing changes."""
        refs = [RoleRef("ClusterRole", str(_meta(o).get("name", ""))) for o in cluster_roles]
        labels = {ref: _meta(o).get("labels") for ref, o in zip(refs, cluster_roles, strict=True)}
        for ref, obj in zip(refs, cluster_roles, strict=True):
            rule = obj.get("aggregationRule")
            if not isinstance(rule, dict):
                continue
            found = self.aggregated[ref] = []
            raw = rule.get("clusterRoleSelectors")
            for selector in raw if isinstance(raw, list) else []:  # in order, roles by name
                for other in sorted(labels):
                    picked = selectors.selects(selector, labels[other], nil=False)
                    if picked and other != ref and other not in found:
                        found.append(other)
            self.roles[ref] = ()  # the controller overwrites whatever rules it was written with
        changed = True
        while changed:
            changed = False
            for ref, parts in self.aggregated.items():
                union = list(self.roles[ref])
                union += [r for p in parts for r in self.roles[p] if r not in union]
                if len(union) != len(self.roles[ref]):
                    self.roles[ref], changed = tuple(union), True

    def rules(self, ref: RoleRef) -> tuple[Rule, ...] | None:
        """A role's effective rules, aggregation included (None when it is not defined)."""
        return self.roles.get(ref)

    def allowed(self, subject: Subject, request: Request) -> bool:
        """The authorizer's answer to `subject` making `request` (a SubjectAccessReview's)."""
        if subject == Subject("Group", MASTERS):
            return True
        return any(
            (b.namespace is None or b.namespace == request.namespace)
            and any(s.covers(subject) for s in b.subjects)
            and any(allows(rule, request) for rule in self.rules(b.role) or ())
            for b in self.bindings
        )

    def grants(self, watched: tuple[Watched, ...] = WATCHED) -> list[Grant]:
        """Every watched power each bound subject holds, with its binding and rule."""
        out: list[Grant] = []
        for binding in self.bindings:
            ident = (binding.role, binding.namespace, watched)
            if ident not in self._reach:  # thousands of bindings share a handful of roles
                shape = (binding.role, bool(binding.namespace), watched)
                if shape not in self._shapes:  # ... and their reach but for the namespace
                    self._shapes[shape] = _reach_shape(
                        self.rules(binding.role) or (), bool(binding.namespace), watched
                    )
                self._reach[ident] = _place(self._shapes[shape], binding.namespace)
            for power, rule in self._reach[ident]:
                out.extend(Grant(s, power, binding, rule) for s in binding.subjects)
        return out


def _binding(obj: Json) -> list[Binding]:
    ref, meta = obj.get("roleRef"), _meta(obj)
    ref = ref if isinstance(ref, dict) else {}
    ns = meta.get("namespace") if obj.get("kind") == "RoleBinding" else None
    kind = str(ref.get("kind", ""))
    if kind not in ("Role", "ClusterRole") or (kind == "Role" and not ns):
        return []
    role = RoleRef(kind, str(ref.get("name", "")), ns if kind == "Role" else None)
    raw = obj.get("subjects")
    found = [subject_of(s, ns) for s in (raw if isinstance(raw, list) else [])]
    return [Binding(obj, role, ns, tuple(s for s in found if s is not None))]


# A watched power `_reach_shape` found, but for the binding's namespace: the power (namespace
# left out), the rule that gives it, and whether the request names that namespace itself.
_Shaped = tuple[Power, Rule, bool]


def _reach_shape(
    rules: tuple[Rule, ...], namespaced: bool, watching: tuple[Watched, ...]
) -> list[_Shaped]:
    """What `_reach` finds for any binding in a namespace (or cluster-wide): `allows` reads no
    request's namespace, only its name, and a request names the namespace only for
    `namespaces` itself, where `_place` judges the rule's resourceNames.

    Remembered across policies by the rules and where each is written (a fleet's clusters, and
    the repository beside them, hold the same bootstrap and platform roles)."""
    return list(_shape_of(tuple((r, r.origin) for r in rules), namespaced, watching))


@functools.lru_cache(maxsize=4096)
def _shape_of(
    written: tuple[tuple[Rule, Origin | None], ...], namespaced: bool, watching: tuple[Watched, ...]
) -> list[_Shaped]:
    rules = tuple(rule for rule, _ in written)
    out: list[_Shaped] = []
    for watched in watching:
        if namespaced and not watched.in_namespace:
            continue
        own = namespaced and watched.resource == "namespaces"
        for verb, rule in ((v, r) for v in watched.verbs for r in rules):
            names: tuple[str | None, ...] = () if own else rule.resource_names
            for name in names or (None,):
                # the namespace's own request passes on names when the namespace is among them
                asked = rule.resource_names[0] if own and rule.resource_names else name
                request = Request(verb, watched.group, watched.resource, None, asked)
                if allows(rule, request):
                    power = Power(verb, watched.group, watched.resource, None, name)
                    out.append((power, rule, own))
    return out


def _place(shape: list[_Shaped], namespace: str | None) -> list[tuple[Power, Rule]]:
    """`_reach` for a binding in `namespace`, from its shape: the first rule per power."""
    out: dict[Power, Rule] = {}
    for power, rule, own in shape:
        if own and rule.resource_names and namespace not in rule.resource_names:
            continue
        out.setdefault(power if namespace is None else replace(power, namespace=namespace), rule)
    return list(out.items())


def _reach(
    rules: tuple[Rule, ...], namespace: str | None, watching: tuple[Watched, ...] = WATCHED
) -> list[tuple[Power, Rule]]:
    """The watched powers `rules` give through a binding in `namespace` (None: cluster-wide)."""
    out: dict[Power, Rule] = {}
    for watched in watching:
        if namespace and not watched.in_namespace:
            continue  # a RoleBinding cannot reach a request that carries no namespace
        # A namespace's own request names it; other rules with resourceNames grant only those.
        own = bool(namespace) and watched.resource == "namespaces"
        for verb, rule in ((v, r) for v in watched.verbs for r in rules):
            names: tuple[str | None, ...] = () if own else rule.resource_names
            for name in names or (None,):
                asked = namespace if own else name
                request = Request(verb, watched.group, watched.resource, namespace, asked)
                if allows(rule, request):
                    power = Power(verb, watched.group, watched.resource, namespace, name)
                    out.setdefault(power, rule)
    return list(out.items())


def grants(objects: t.Iterable[Json]) -> list[Grant]:
    """Every watched power held through `objects` (RBAC roles and bindings)."""
    return Policy(objects).grants()


def within(held: t.Container[tuple[Subject, Power]], subject: Subject, power: Power) -> bool:
    """Whether the (subject, power) pairs `held` give `subject` this power or a wider one."""
    return any(
        (subject, replace(power, namespace=ns, name=name)) in held
        for ns in {power.namespace, None}
        for name in {power.name, None}
    )


def holds(found: t.Iterable[Grant], subject: Subject, power: Power) -> bool:
    """Whether `subject` holds `power` through the grants `found` (Policy.grants)."""
    if subject == Subject("Group", MASTERS):
        return True
    return any(g.subject.covers(subject) and g.power.covers(power) for g in found)
