"""The MLS, constraint, default, initial SID and labeling sections of PolicyDifference,
over the symbol and statement classes of ``arbiter.setools`` (setools 4.4.1's matching:
levels and ranges compare by sensitivity and category names, contexts by user, role, type
and range; labeling statements by the fields that identify them, their contexts compared)."""

from ..exception import MLSDisabled
from .records import (
    ModifiedCategory,
    ModifiedDefault,
    ModifiedFSUse,
    ModifiedGenfscon,
    ModifiedIbendportcon,
    ModifiedIbpkeycon,
    ModifiedInitialSID,
    ModifiedLevelDecl,
    ModifiedMLSRule,
    ModifiedNetifcon,
    ModifiedNodecon,
    ModifiedPortcon,
    ModifiedSensitivity,
)


def level_key(level):
    """setools compares levels by sensitivity and category set, not by text (a value that
    is no level, such as a user's MLS-disabled text, by its text)."""
    sens = getattr(level, "sensitivity", None)
    cats = getattr(level, "categories", None)
    if sens is not None and callable(cats):
        return (str(sens), frozenset(str(c) for c in cats()))
    return str(level)


def range_key(range_):
    return (level_key(range_.low), level_key(range_.high))


def context_key(ctx):
    try:
        rng = range_key(ctx.range_)
    except MLSDisabled:
        rng = None
    return (str(ctx.user), str(ctx.role), str(ctx.type_), rng)


def keyed(left, right, key=str):
    """(added: right items, removed: left items, matched: [(left, right)]) by ``key`` (by
    default the name); the first item of a key wins. The one matcher of every section."""
    def index(items):
        out = {}
        for item in items:
            out.setdefault(key(item), item)
        return out
    lmap, rmap = index(left), index(right)
    added = {rmap[k] for k in rmap.keys() - lmap.keys()}
    removed = {lmap[k] for k in lmap.keys() - rmap.keys()}
    matched = [(lmap[k], rmap[k]) for k in lmap.keys() & rmap.keys()]
    return added, removed, matched


def expanded(rules):
    """Each rule's expanded rules (one source and one target each), in order."""
    for rule in rules:
        yield from rule.expand()


class LabelingMLSDifference:

    """Mixin of PolicyDifference: needs ``self._left`` and ``self._right``."""

    def _diff_categories(self):
        added, removed, matched = keyed(self._left.categories(), self._right.categories(), str)
        modified = {}
        for lc, rc in matched:
            a, r, m = _names(lc.aliases(), rc.aliases())
            if a or r:
                modified[lc] = ModifiedCategory(a, r, m)
        return {"added_categories": added, "removed_categories": removed,
                "modified_categories": modified}

    def _diff_sensitivities(self):
        added, removed, matched = keyed(self._left.sensitivities(), self._right.sensitivities(),
                                        str)
        modified = {}
        for ls, rs in matched:
            a, r, m = _names(ls.aliases(), rs.aliases())
            if a or r:
                modified[ls] = ModifiedSensitivity(a, r, m)
        return {"added_sensitivities": added, "removed_sensitivities": removed,
                "modified_sensitivities": modified}

    def _diff_levels(self):
        added, removed, matched = keyed(self._left.levels(), self._right.levels(),
                                        lambda lv: str(lv.sensitivity))
        modified = []
        for ll, rl in matched:
            a, r, m = keyed(ll.categories(), rl.categories(), str)
            if a or r:
                modified.append(ModifiedLevelDecl(ll, a, r, set(m)))
        return {"added_levels": added, "removed_levels": removed, "modified_levels": modified}

    def _diff_range_transitions(self):
        def rules(policy):
            return expanded(r for r in policy.mlsrules()
                             if str(r.ruletype) == "range_transition")
        added, removed, matched = keyed(
            rules(self._left), rules(self._right),
            lambda r: (str(r.source), str(r.target), str(r.tclass)))
        modified = [ModifiedMLSRule(lr, rr.default, lr.default) for lr, rr in matched
                    if range_key(lr.default) != range_key(rr.default)]
        return {"added_range_transitions": added, "removed_range_transitions": removed,
                "modified_range_transitions": modified}

    def _diff_initialsids(self):
        added, removed, matched = keyed(self._left.initialsids(), self._right.initialsids(), str)
        modified = {ls: ModifiedInitialSID(rs.context, ls.context) for ls, rs in matched
                    if context_key(ls.context) != context_key(rs.context)}
        return {"added_initialsids": added, "removed_initialsids": removed,
                "modified_initialsids": modified}

    def _diff_defaults(self):
        added, removed, matched = keyed(self._left.defaults(), self._right.defaults(),
                                        lambda d: (d.ruletype, str(d.tclass)))
        modified = []
        for ld, rd in matched:
            added_d, removed_d = (rd.default, ld.default) if ld.default != rd.default \
                else (None, None)
            try:
                lrange, rrange = ld.default_range, rd.default_range
            except AttributeError:
                lrange = rrange = None
            added_r, removed_r = (rrange, lrange) if lrange != rrange else (None, None)
            if removed_d or removed_r:
                modified.append(ModifiedDefault(ld, added_d, removed_d, added_r, removed_r))
        return {"added_defaults": added, "removed_defaults": removed,
                "modified_defaults": modified}

    def _constraints(self, ruletype):
        def key(c):
            try:
                perms = frozenset(c.perms)
            except AttributeError:  # (mls)validatetrans have no permissions
                perms = None
            expr = tuple(frozenset(str(i) for i in op) if isinstance(op, frozenset) else op
                         for op in c.expression)
            return (str(c.tclass), perms, expr)

        def rules(policy):
            return [c for c in policy.constraints() if str(c.ruletype) == ruletype]
        added, removed, _ = keyed(rules(self._left), rules(self._right), key)
        return added, removed

    def _diff_constrains(self):
        a, r = self._constraints("constrain")
        return {"added_constrains": a, "removed_constrains": r}

    def _diff_mlsconstrains(self):
        a, r = self._constraints("mlsconstrain")
        return {"added_mlsconstrains": a, "removed_mlsconstrains": r}

    def _diff_validatetrans(self):
        a, r = self._constraints("validatetrans")
        return {"added_validatetrans": a, "removed_validatetrans": r}

    def _diff_mlsvalidatetrans(self):
        a, r = self._constraints("mlsvalidatetrans")
        return {"added_mlsvalidatetrans": a, "removed_mlsvalidatetrans": r}

    def _labeled(self, kind, key, record):
        added, removed, matched = keyed(getattr(self._left, kind)(),
                                        getattr(self._right, kind)(), key)
        modified = [record(lr, rr.context, lr.context) for lr, rr in matched
                    if context_key(lr.context) != context_key(rr.context)]
        return {"added_" + kind: added, "removed_" + kind: removed, "modified_" + kind: modified}

    def _diff_fs_uses(self):
        return self._labeled("fs_uses", lambda r: (r.ruletype, r.fs), ModifiedFSUse)

    def _diff_genfscons(self):
        return self._labeled("genfscons", lambda r: (r.fs, r.path, r.filetype),
                             ModifiedGenfscon)

    def _diff_nodecons(self):
        return self._labeled("nodecons", lambda r: (r.ip_version, r.network), ModifiedNodecon)

    def _diff_portcons(self):
        return self._labeled("portcons", lambda r: (r.protocol, tuple(r.ports)),
                             ModifiedPortcon)

    def _diff_ibpkeycons(self):
        return self._labeled("ibpkeycons", lambda r: (r.subnet_prefix, tuple(r.pkeys)),
                             ModifiedIbpkeycon)

    def _diff_ibendportcons(self):
        return self._labeled("ibendportcons", lambda r: (r.name, r.port), ModifiedIbendportcon)

    def _diff_netifcons(self):
        added, removed, matched = keyed(self._left.netifcons(), self._right.netifcons(),
                                        lambda r: r.netif)
        modified = []
        for ln, rn in matched:
            ctx = (rn.context, ln.context) if context_key(ln.context) != context_key(
                rn.context) else (None, None)
            pkt = (rn.packet, ln.packet) if context_key(ln.packet) != context_key(
                rn.packet) else (None, None)
            if ctx[1] or pkt[1]:
                modified.append(ModifiedNetifcon(ln, ctx[0], ctx[1], pkt[0], pkt[1]))
        return {"added_netifcons": added, "removed_netifcons": removed,
                "modified_netifcons": modified}


def _names(left, right):
    """Plain-string set difference: (added, removed, {(name, name)})."""
    left, right = set(left), set(right)
    return right - left, left - right, {(n, n) for n in left & right}


SECTIONS = {
    "_diff_categories": ["added_categories", "removed_categories", "modified_categories"],
    "_diff_sensitivities": ["added_sensitivities", "removed_sensitivities",
                            "modified_sensitivities"],
    "_diff_levels": ["added_levels", "removed_levels", "modified_levels"],
    "_diff_range_transitions": ["added_range_transitions", "removed_range_transitions",
                                "modified_range_transitions"],
    "_diff_initialsids": ["added_initialsids", "removed_initialsids", "modified_initialsids"],
    "_diff_defaults": ["added_defaults", "removed_defaults", "modified_defaults"],
    "_diff_constrains": ["added_constrains", "removed_constrains"],
    "_diff_mlsconstrains": ["added_mlsconstrains", "removed_mlsconstrains"],
    "_diff_validatetrans": ["added_validatetrans", "removed_validatetrans"],
    "_diff_mlsvalidatetrans": ["added_mlsvalidatetrans", "removed_mlsvalidatetrans"],
    "_diff_fs_uses": ["added_fs_uses", "removed_fs_uses", "modified_fs_uses"],
    "_diff_genfscons": ["added_genfscons", "removed_genfscons", "modified_genfscons"],
    "_diff_nodecons": ["added_nodecons", "removed_nodecons", "modified_nodecons"],
    "_diff_portcons": ["added_portcons", "removed_portcons", "modified_portcons"],
    "_diff_ibpkeycons": ["added_ibpkeycons", "removed_ibpkeycons", "modified_ibpkeycons"],
    "_diff_ibendportcons": ["added_ibendportcons", "removed_ibendportcons",
                            "modified_ibendportcons"],
    "_diff_netifcons": ["added_netifcons", "removed_netifcons", "modified_netifcons"],
}
