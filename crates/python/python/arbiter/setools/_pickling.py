"""Pickling of ``policyrep``'s symbols and rules: their ``__reduce__`` methods and the
functions that rebuild them in the unpickled policy, imported on the first pickling or
unpickling (``policyrep._Deferred`` and its module ``__getattr__``): a script rarely
pickles. The rebuilding functions are named as ``policyrep``'s, so pickles read
``arbiter.setools.policyrep._resolve_symbol`` and the like, as before. Each namespace
class below gives its ``__reduce__`` to the ``policyrep`` class of its name."""

from .policyrep import _DerivedAVRule as _DerivedAVRuleClass


class PolicySymbol:
    def __reduce__(self):
        return (_resolve_symbol, (self.policy, type(self).__name__, self.name))


class Conditional:
    def __reduce__(self):
        return (_conditional_at, (self.policy, self._node))


class BaseTERule:
    def __reduce__(self):
        # A handle on a native result set pickles as the rule's fields, found again by a
        # query in the unpickled policy; an expanded rule as its origin and types.
        if self.origin is not None:
            return (_expanded_rule, (self.origin, str(self.source), str(self.target)))
        return (_te_rule_at, (self.policy, str(self.ruletype), str(self.source),
                              str(self.target), str(self.tclass), self._row,
                              self._res.statement(self._i)))


class _DerivedAVRule:
    def __reduce__(self):
        return (_derived_av_rule, (self.origin, self.source, self.target, self._perms))


class RoleAllow:
    def __reduce__(self):
        if self.origin is not None:
            return (_expanded_rule, (self.origin, str(self.source), str(self.target)))
        return (_rbac_rule_at, (self.policy, 0, self._n))


class RoleTransition:
    def __reduce__(self):
        if self.origin is not None:
            return (_expanded_rule, (self.origin, str(self.source), str(self.target)))
        return (_rbac_rule_at, (self.policy, 1, self._n))


class Bounds:
    def __reduce__(self):
        return (_bounds_at, (self.policy, self.child.name))


def _resolve_symbol(policy, kind, name):
    """Rebuilds a pickled symbol in its (unpickled) policy."""
    lookup = {
        "Type": policy.lookup_type,
        "TypeAttribute": policy.lookup_typeattr,
        "Role": policy.lookup_role,
        "User": policy.lookup_user,
        "Boolean": policy.lookup_boolean,
        "ObjClass": policy.lookup_class,
        "Common": policy.lookup_common,
        "PolicyCapability": lambda n: next(c for c in policy.polcaps() if c.name == n),
    }[kind]
    return lookup(name)


def _conditional_at(policy, node):
    """Rebuilds a pickled conditional (its position in the policy)."""
    return policy._conditional(node)


def _te_rule_at(policy, ruletype, source, target, tclass, row, stmt):
    """Rebuilds a pickled TE rule: the rule of the same fields in its (unpickled) policy."""
    from .terulequery import TERuleQuery

    q = TERuleQuery(policy, ruletype=[ruletype], source=source, source_indirect=False,
                    target=target, target_indirect=False, tclass=[tclass])
    for r in q.results():
        if r._row == row and r._res.statement(r._i) == stmt:
            return r
    raise ValueError("the policy has no rule {}".format(stmt))


def _expanded_rule(origin, source, target):
    """Rebuilds a pickled expanded rule from its (unpickled) origin."""
    for r in origin.expand():
        if str(r.source) == source and str(r.target) == target:
            return r
    raise ValueError("{} expands to no rule {} {}".format(origin, source, target))


def _derived_av_rule(origin, source, target, perms):
    """Rebuilds a pickled derived rule (the class is renamed ``AVRule`` in ``policyrep``, so
    pickle cannot find it by name)."""
    return _DerivedAVRuleClass(origin, source, target, perms)


def _rbac_rule_at(policy, kind, n):
    """Rebuilds a pickled RBAC rule (role allows are kind 0, role transitions 1)."""
    from ._rarer import RoleAllow, RoleTransition  # loaded by ``rbacrules()`` anyway

    want = RoleAllow if kind == 0 else RoleTransition
    return [r for r in policy.rbacrules() if type(r) is want][n]


def _bounds_at(policy, child):
    """Rebuilds a pickled typebounds statement (by its child type)."""
    return next(b for b in policy.bounds() if b.child.name == child)


# Named as ``policyrep``'s (which serves them by its module ``__getattr__``): pickle
# records a function by its module and name, and checks that the name finds it there.
for _f in (_resolve_symbol, _conditional_at, _te_rule_at, _expanded_rule, _derived_av_rule,
           _rbac_rule_at, _bounds_at):
    _f.__module__ = _DerivedAVRuleClass.__module__
del _f
