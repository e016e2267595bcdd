"""The TE rule sections of ``PolicyDifference`` (AV, xperm and type_* rules), computed as
setools 4.4.1 computes them, so that results and their order are the same:

* AV rules (allow, auditallow, neverallow, dontaudit) are expanded to one source and one
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
    """(added, removed, modified) lists for one AV rule type."""
    db = {_UNCONDITIONAL: {_UNCONDITIONAL_BLOCK: {}}}
    types = ({}, {})
    for side, rules in ((0, left), (1, right)):
        side_types = types[side]
        for rule in rules:
            cond, block_bool = _cond_key(rule)
            block = db.setdefault(cond, {}).setdefault(block_bool, {})
            tclass = rule.tclass.name
            perms = set(rule.perms)
            targets = list(rule.target.expand())
            for src in rule.source.expand():
                side_types.setdefault(src.name, src)
                src_data = block.setdefault(src.name, {})
                for tgt in targets:
                    side_types.setdefault(tgt.name, tgt)
                    tgt_data = src_data.setdefault(tgt.name, {})
                    sides = tgt_data.get(tclass)
                    if sides is None:
                        sides = tgt_data[tclass] = [None, None]
                    if sides[side] is None:
                        sides[side] = (perms, rule)
                    else:
                        sides[side] = (sides[side][0] | perms, sides[side][1])
    _remove_redundant(db)
    added, removed, modified = [], [], []
    for blocks in db.values():
        for block in blocks.values():
            for src, src_data in block.items():
                for tgt, tgt_data in src_data.items():
                    for lside, rside in tgt_data.values():
                        if lside and rside:
                            common = lside[0] & rside[0]
                            lonly, ronly = lside[0] - common, rside[0] - common
                            if lonly or ronly:
                                rule = lside[1].derive_expanded(
                                    types[0][src], types[0][tgt], lside[0])
                                modified.append(ModifiedAVRule(rule, ronly, lonly, common))
                        elif lside:
                            removed.append(lside[1].derive_expanded(
                                types[0][src], types[0][tgt], lside[0]))
                        elif rside:
                            added.append(rside[1].derive_expanded(
                                types[1][src], types[1][tgt], rside[0]))
    return added, removed, modified


def _remove_redundant(db):
    """Drops from conditional rules the permissions the same side grants unconditionally."""
    uncond = db[_UNCONDITIONAL][_UNCONDITIONAL_BLOCK]
    for cond, blocks in db.items():
        if cond == _UNCONDITIONAL:
            continue
        for block in blocks.values():
            for src, src_data in block.items():
                usrc = uncond.get(src)
                if usrc is None:
                    continue
                for tgt, tgt_data in src_data.items():
                    utgt = usrc.get(tgt)
                    if utgt is None:
                        continue
                    for tclass, sides in tgt_data.items():
                        usides = utgt.get(tclass)
                        if usides is None:
                            continue
                        for side in (0, 1):
                            if usides[side] and sides[side]:
                                common = sides[side][0] & usides[side][0]
                                if common:
                                    rest = sides[side][0] - common
                                    sides[side] = (rest, sides[side][1]) if rest else None


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
