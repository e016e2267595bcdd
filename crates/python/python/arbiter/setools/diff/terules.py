"""The TE rule sections of ``PolicyDifference`` (AV, xperm and type_* rules), computed as
setools 4.4.1 computes them, so that results and their order are the same:

* AV rules (allow, auditallow, neverallow, dontaudit) are expanded (natively, see
  ``crates/python/src/setools/avdiff.rs``) to one source and one
  target type and keyed by (conditional expression text, block, source, target, class);
  the permissions of rules sharing a key are unioned, the first rule of a key is the one
  derived from, and a conditional rule's permissions already granted unconditionally on
  the same side are dropped. The lists come out in the order keys were first seen (left
  policy first), as setools' nested dicts give them.
* xperm rules are expanded and keyed by (source, target, class, xperm type), ioctls
  unioned; results hold the first expanded rule of a key (with its own ioctls, as
  setools' do) and the modified records the ``IoctlSet`` differences.
* type_* rules are expanded and matched by (source, target, class, conditional, block,
  file name); a matched pair whose default differs is modified.
"""

from ... import _native
from ..exception import RuleNotConditional, RuleUseError, TERuleNoFilename
from ..policyrep import IoctlSet
from .records import ModifiedAVRule, ModifiedTERule

_UNCONDITIONAL = "<<unconditional>>"
_UNCONDITIONAL_BLOCK = "True"

AV_KINDS = ["allow", "auditallow", "neverallow", "dontaudit"]
XPERM_KINDS = ["allowxperm", "auditallowxperm", "neverallowxperm", "dontauditxperm"]
TYPE_KINDS = ["type_transition", "type_change", "type_member"]


def rules_by_kind(policy):
    """The policy's TE rules grouped by rule type name, each in ``terules()`` order."""
    out = {}
    for rule in policy.terules():
        out.setdefault(rule.ruletype.name, []).append(rule)
    return out


def _cond_key(rule):
    try:
        return str(rule.conditional), str(rule.conditional_block)
    except RuleNotConditional:
        return _UNCONDITIONAL, _UNCONDITIONAL_BLOCK


def av_diff(left, right):
    """(added, removed, modified) lists for one AV rule type. The expansion and comparison
    run natively (``_native.av_rule_diff``) over names interned to numbers here; only the
    results become rule objects."""
    names = {}
    types = ({}, {})
    expansions = {}

    def intern(name):
        n = names.get(name)
        if n is None:
            n = names[name] = len(names) + 1
        return n

    def expand(side, symbol):
        ids = expansions.get((side, symbol.name))
        if ids is None:
            ids = []
            for t in symbol.expand():
                types[side].setdefault(t.name, t)
                ids.append(intern(t.name))
            expansions[(side, symbol.name)] = ids
        return ids

    conds = {_UNCONDITIONAL: 0}

    def rows(side, rules):
        out = []
        for rule in rules:
            cond, block = _cond_key(rule)
            c = conds.get(cond)
            if c is None:
                c = conds[cond] = len(conds)
            out.append((c, block == "True", intern(rule.tclass.name),
                        [intern(p) for p in rule.perms],
                        expand(side, rule.source), expand(side, rule.target)))
        return out

    results = _native.av_rule_diff(rows(0, left), rows(1, right))
    by_id = {n: name for name, n in names.items()}
    added, removed, modified = [], [], []
    for status, i, src, tgt, lperms, rperms in results:
        src, tgt = by_id[src], by_id[tgt]
        lperms = {by_id[p] for p in lperms}
        rperms = {by_id[p] for p in rperms}
        if status == 0:
            added.append(right[i].derive_expanded(types[1][src], types[1][tgt], rperms))
        elif status == 1:
            removed.append(left[i].derive_expanded(types[0][src], types[0][tgt], lperms))
        else:
            common = lperms & rperms
            rule = left[i].derive_expanded(types[0][src], types[0][tgt], lperms)
            modified.append(ModifiedAVRule(rule, rperms - common, lperms - common, common))
    return added, removed, modified


def _xperm_index(rules):
    out = {}
    for rule in rules:
        for expanded in rule.expand():
            key = (expanded.source.name, expanded.target.name, expanded.tclass.name,
                   expanded.xperm_type)
            entry = out.get(key)
            if entry is None:
                out[key] = (expanded, set(expanded.perms))
            else:
                entry[1].update(expanded.perms)
    return out


def xperm_diff(left, right):
    """(added set, removed set, modified list) for one xperm rule type."""
    lmap, rmap = _xperm_index(left), _xperm_index(right)
    added = {rmap[k][0] for k in rmap.keys() - lmap.keys()}
    removed = {lmap[k][0] for k in lmap.keys() - rmap.keys()}
    modified = []
    for key in lmap.keys() & rmap.keys():
        (lrule, lperms), (_, rperms) = lmap[key], rmap[key]
        if lperms != rperms:
            modified.append(ModifiedAVRule(lrule, IoctlSet(rperms - lperms),
                                           IoctlSet(lperms - rperms),
                                           IoctlSet(lperms & rperms)))
    return added, removed, modified


def _type_rule_key(rule):
    try:
        cond = (str(rule.conditional), rule.conditional_block)
    except RuleNotConditional:
        cond = None
    try:
        filename = rule.filename
    except (RuleUseError, TERuleNoFilename):
        filename = None
    return (rule.source.name, rule.target.name, rule.tclass.name, cond, filename)


def _type_rule_index(rules):
    out = {}
    for rule in rules:
        for expanded in rule.expand():
            out.setdefault(_type_rule_key(expanded), expanded)
    return out


def type_rule_diff(left, right):
    """(added set, removed set, modified list) for one type_* rule type."""
    lmap, rmap = _type_rule_index(left), _type_rule_index(right)
    added = {rmap[k] for k in rmap.keys() - lmap.keys()}
    removed = {lmap[k] for k in lmap.keys() - rmap.keys()}
    modified = [ModifiedTERule(lmap[k], rmap[k].default, lmap[k].default)
                for k in lmap.keys() & rmap.keys()
                if lmap[k].default.name != rmap[k].default.name]
    return added, removed, modified


def section_attrs():
    """method name -> the attributes it fills, for every TE rule kind."""
    out = {}
    for kind in AV_KINDS + XPERM_KINDS + TYPE_KINDS:
        out["_diff_te_" + kind] = [side + "_" + kind + "s"
                                   for side in ("added", "removed", "modified")]
    return out


def diff_kind(difference, kind):
    """The three attributes of one rule kind, from ``difference``'s cached rule lists."""
    lists = difference.__dict__["_results"].get("_te_rule_lists")
    if lists is None:
        lists = (rules_by_kind(difference.left_policy), rules_by_kind(difference.right_policy))
        difference.__dict__["_results"]["_te_rule_lists"] = lists
    left, right = lists[0].get(kind, []), lists[1].get(kind, [])
    if kind in AV_KINDS:
        added, removed, modified = av_diff(left, right)
    elif kind in XPERM_KINDS:
        added, removed, modified = xperm_diff(left, right)
    else:
        added, removed, modified = type_rule_diff(left, right)
    return {"added_" + kind + "s": added, "removed_" + kind + "s": removed,
            "modified_" + kind + "s": modified}
