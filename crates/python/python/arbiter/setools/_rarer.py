"""The objects of ``setools.policyrep`` that TE rule, symbol, MLS, labeling and constraint
queries do not make: conditional expressions (``Conditional``, ``ConditionalOperator``),
the ioctl sets of xperm rules (``IoctlSet``), RBAC rules (``RoleAllow``,
``RoleTransition``) and typebounds (``Bounds``), with the ``SELinuxPolicy`` methods that
list them (``_RarerPolicy``). Imported on first use, as the MLS, labeling and constraint
parts are (``policyrep._PART_CLASSES`` and ``_PART_MEMBERS``): their code and classes,
about 45 kB of Python's memory, are not kept by a script that asks for none of them.
``policyrep`` serves the classes under their names there (``policyrep.RoleAllow``), so
``setools.RoleAllow``, ``isinstance`` and pickles are as before."""

from . import exception as _exc
from .policyrep import PolicyObject, PolicyRule, _Deferred, _install_loaded_deferred, _made


# --------------------------------------------------------------------------- conditionals


class ConditionalOperator(PolicyObject):
    """An operator of a conditional expression."""

    __slots__ = ("policy", "_op")

    _PRECEDENCE = {"!": 5, "&&": 4, "^": 3, "||": 2, "==": 1, "!=": 1}

    def __init__(self, policy, op):
        self.policy = policy
        self._op = op

    def _key(self):
        return self._op

    def __str__(self):
        return self._op

    @property
    def precedence(self):
        return self._PRECEDENCE[self._op]

    @property
    def unary(self):
        return self._op == "!"

    evaluate = _Deferred("_evaluation")


class Conditional(PolicyObject):
    """A conditional expression (``if`` block) of the policy."""

    __slots__ = ("policy", "_node", "_text", "_bools", "_expr")

    def __init__(self, policy, node):
        self.policy = policy
        self._node = node
        self._text, self._bools, self._expr = policy._db.conditional(node)

    def _key(self):
        return self._node

    def __str__(self):
        return self._text

    def __hash__(self):
        return hash(self._node)

    __reduce__ = _Deferred("_pickling")

    def __contains__(self, other):
        return any(other == b for b in self.booleans)

    @property
    def booleans(self):
        """The Booleans the expression uses (a frozenset)."""
        p = self.policy
        return frozenset(p._bool_by_value[v] for v in self._bools)

    def expression(self):
        """The expression in postfix order: ``Boolean`` and ``ConditionalOperator`` items."""
        p = self.policy
        return [
            p._bool_by_value[v] if op == "" else ConditionalOperator(p, op)
            for op, v in self._expr
        ]

    evaluate = _Deferred("_evaluation")
    truth_table = _Deferred("_evaluation")
    _rules = _Deferred("_evaluation")
    true_rules = _Deferred("_evaluation")
    false_rules = _Deferred("_evaluation")

    def statement(self):
        raise _exc.NoStatement


# --------------------------------------------------------------------------- ioctl sets


class IoctlSet(frozenset):
    """A set of ioctl numbers, printed as setools 4.4.1 prints an xperm rule's ``perms``:
    runs of consecutive numbers as ``0x5401`` or ``0x5403-0x5410`` (``{:#06x}``), joined
    by spaces (``str``, ``format`` with no spec) or by ``", "`` (format spec ``","``);
    ``repr`` is the comma form in braces. Any other format spec is refused with
    ``object.__format__``'s ``TypeError``, naming the class as setools' compiled class
    names itself (``setools.policyrep.IoctlSet``; a script's subclass by its own name)."""

    __slots__ = ()

    def _runs(self):
        """The sorted numbers as ``(first, last)`` runs of consecutive values."""
        runs = []
        for v in sorted(self):
            if runs and v == runs[-1][1] + 1:
                runs[-1][1] = v
            else:
                runs.append([v, v])
        return runs

    def __format__(self, spec):
        if spec and spec != ",":
            name = "setools.policyrep.IoctlSet" if type(self) is IoctlSet \
                else type(self).__name__
            raise TypeError("unsupported format string passed to {0}.__format__".format(name))
        text = ["{0:#06x}".format(lo) if lo == hi else "{0:#06x}-{1:#06x}".format(lo, hi)
                for lo, hi in self._runs()]
        return (", " if spec else " ").join(text)

    def __str__(self):
        return format(self)

    def __repr__(self):
        return "{{ {0:,} }}".format(self)

    def ranges(self):
        """How many runs of consecutive numbers the set holds (setools: whether a rule's
        statement needs braces)."""
        return len(self._runs())


# --------------------------------------------------------------------------- RBAC rules


class RoleAllow(PolicyRule):
    """``allow ROLE NEW_ROLE;``"""

    __slots__ = ("_n",)

    def __init__(self, policy, n, source, target, origin=None):
        self.policy = policy
        self._n = n
        self.ruletype = _made("RBACRuletype").allow
        self.source = source
        self.target = target
        self.origin = origin

    def _key(self):
        return ("allow", self._n)

    __reduce__ = _Deferred("_pickling")

    def __hash__(self):
        return hash(("allow", str(self.source), str(self.target)))

    @property
    def tclass(self):
        raise _exc.RuleUseError("Role allow rules do not have an object class.")

    @property
    def default(self):
        raise _exc.RuleUseError("Role allow rules do not have a default role.")

    statement = _Deferred("_statements")

    def expand(self):
        """Roles expand to themselves: one rule, whose origin is this one."""
        if self.origin is not None:
            yield self
            return
        for s in self.source.expand():
            for t in self.target.expand():
                yield RoleAllow(self.policy, self._n, s, t, origin=self)


class RoleTransition(PolicyRule):
    """``role_transition ROLE TYPE:CLASS NEW_ROLE;``"""

    __slots__ = ("_n", "tclass", "default")

    def __init__(self, policy, n, source, target, tclass, default, origin=None):
        self.policy = policy
        self._n = n
        self.ruletype = _made("RBACRuletype").role_transition
        self.source = source
        self.target = target
        self.tclass = tclass
        self.default = default
        self.origin = origin

    def _key(self):
        return ("role_transition", self._n)

    __reduce__ = _Deferred("_pickling")

    def __hash__(self):
        return hash(("role_transition", str(self.source), str(self.target), str(self.tclass),
                     str(self.default)))

    statement = _Deferred("_statements")

    def expand(self):
        """One rule per (role, type of the target attribute)."""
        if self.origin is not None:
            yield self
            return
        for s in self.source.expand():
            for t in self.target.expand():
                yield RoleTransition(self.policy, self._n, s, t, self.tclass, self.default,
                                     origin=self)


# --------------------------------------------------------------------------- bounds


class Bounds(PolicyObject):
    """``typebounds PARENT CHILD;``"""

    __slots__ = ("policy", "ruletype", "parent", "child")

    def __init__(self, policy, parent, child):
        self.policy = policy
        self.ruletype = _made("BoundsRuletype").typebounds
        self.parent = parent
        self.child = child

    def _key(self):
        return (self.parent._value, self.child._value)

    def __str__(self):
        return self.statement()

    def __hash__(self):
        return hash((str(self.ruletype), str(self.parent), str(self.child)))

    def statement(self):
        return "{0.ruletype} {0.parent} {0.child};".format(self)

    __reduce__ = _Deferred("_pickling")


# --------------------------------------------------------------------------- the policy


class _RarerPolicy:
    """The ``SELinuxPolicy`` methods over this module's objects."""

    def _conditional(self, node):
        conds = self._table("conditionals", dict)
        c = conds.get(node)
        if c is None:
            c = conds[node] = Conditional(self, node)
        return c

    def conditionals(self):
        """Every conditional expression, in the policy's order."""
        n = self._db.counts()["conditional"]
        return (self._conditional(i) for i in range(n))

    def bounds(self):
        """Every typebounds statement, in the type table's order (setools' order)."""
        tv = self._type_by_value
        bounds = self._table("type_bounds", self._db.type_bounds)
        for t in self.types():
            parent = bounds[t._value - 1]
            if parent:
                yield Bounds(self, tv[parent], t)

    def rbacrules(self):
        """Every RBAC rule: the role allows, then the role transitions, in policy order."""
        rv = self._role_by_value
        for n, (r, nr) in enumerate(self._db.role_allows()):
            yield RoleAllow(self, n, rv[r], rv[nr])
        tv, cv = self._type_by_value, self._class_by_value
        for n, (r, t, c, nr) in enumerate(self._db.role_transitions()):
            yield RoleTransition(self, n, rv[r], tv[t], cv[c], rv[nr])


# A statement or pickling already used before this module loaded installed the methods of
# ``policyrep``'s classes only: these classes' now.
_install_loaded_deferred()
