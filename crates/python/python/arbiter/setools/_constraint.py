"""Constraints and default_* rules of ``setools.policyrep`` on arbiter: ``Constraint``,
``Validatetrans`` (and their MLS kinds), ``ConstraintExpression`` with setools 4.4.1's
infix text, ``Default`` and ``DefaultRange``, and the ``SELinuxPolicy`` iterators over
them (``_ConstraintPolicy``). The postfix nodes come from the native
``constraint_table``; the name sets are built in the policy's bitmap order, as setools
builds them, so that their iteration order is setools' for the same hash seed."""

from sys import intern

from .. import _native
from . import exception as _exc
from .policyrep import (
    ConstraintRuletype,
    DefaultRangeValue,
    DefaultRuletype,
    DefaultValue,
    PolicyObject,
    _Deferred,
    _pickling_getattr,
)

# CEXPR_* attribute bits (libsepol's constraint.h) and setools' operand names for them.
_USER, _ROLE, _TYPE, _TARGET, _XTARGET = 1, 2, 4, 8, 16
_L1L2, _L1H2, _H1L2, _H1H2, _L1H1, _L2H2 = 32, 64, 128, 256, 512, 1024
_SYM_TO_TEXT = {
    _USER: "u1", _ROLE: "r1", _TYPE: "t1",
    _USER + _TARGET: "u2", _ROLE + _TARGET: "r2", _TYPE + _TARGET: "t2",
    _USER + _XTARGET: "u3", _ROLE + _XTARGET: "r3", _TYPE + _XTARGET: "t3",
    _L1L2: "l1", _L1H2: "l1", _H1L2: "h1", _H1H2: "h1", _L1H1: "l1", _L2H2: "l2",
    _L1L2 + _TARGET: "l2", _L1H2 + _TARGET: "h2", _H1L2 + _TARGET: "l2",
    _H1H2 + _TARGET: "h2", _L1H1 + _TARGET: "h1", _L2H2 + _TARGET: "h2",
}
_ROLE_SYMS = (_ROLE, _ROLE + _TARGET, _ROLE + _XTARGET)
_TYPE_SYMS = (_TYPE, _TYPE + _TARGET, _TYPE + _XTARGET)


def _shared_set(policy, key, items):
    """One ``frozenset`` per distinct content of the policy's constraints (their name sets,
    the users, roles and types an expression names, their permission sets), shared by
    every constraint that has it: the Debian policy's 670 name sets are 26 distinct ones,
    and the per-set expansions ``ConstraintQuery`` caches (by set) shrink with them.

    ``key`` is the set's items in the order they are inserted (after a tag saying what
    they are), not the set: two equal sets built in different orders may iterate
    differently, and a shared set must iterate as the one it stands for would."""
    shared = policy._table("constraint_sets", dict)
    s = shared.get(key)
    if s is None:
        s = shared[key] = frozenset(items())
    return s


class ConstraintExprNode(PolicyObject):
    """One node of a postfix constraint expression, list-like: ``["u1", "u2", "=="]``,
    ``["t1", frozenset(types), "=="]`` or ``["and"]``."""

    __slots__ = ("policy", "_id", "_expression", "_names", "_symbol_type", "mls", "roles", "types",
                 "users")

    def __init__(self, policy, ident, kind, attr, op, values):
        # The native rows make a new str per node for its kind and operator: interned, the
        # nodes share one of each (2,500 strs of the Debian policy's constraints).
        kind, op = intern(kind), intern(op)
        self.policy = policy
        self._id = ident
        self._names = None
        self._symbol_type = attr if kind in ("attr", "names") else None
        self.mls = self.roles = self.types = self.users = False
        if self._symbol_type is not None:
            self.mls = attr >= _L1L2
        if kind == "names":
            if attr in _ROLE_SYMS:
                self.roles = True
                tag, by_value = "role values", policy._role_by_value
            elif attr in _TYPE_SYMS:
                self.types = True
                tag, by_value = "type values", policy._type_by_value
            else:
                self.users = True
                tag, by_value = "user values", policy._user_by_value()
            self._names = _shared_set(policy, (tag,) + tuple(values),
                                      lambda: (by_value[v] for v in values))
            self._expression = [_SYM_TO_TEXT[attr], self._names, op]
        elif kind == "attr":
            self._expression = [_SYM_TO_TEXT[attr], _SYM_TO_TEXT[attr + _TARGET], op]
        else:
            self._expression = [kind]

    _key = _Deferred("_constraint_more")
    __str__ = _Deferred("_constraint_more")

    def __iter__(self):
        return iter(self._expression)

    __contains__ = _Deferred("_constraint_more")

    def __len__(self):
        return len(self._expression)

    __getitem__ = _Deferred("_constraint_more")

    __reduce__ = _Deferred("_constraint_pickling")

    @property
    def names(self):
        if self._names is None:
            raise AttributeError("names")
        return self._names

    symbol_type = _Deferred("_constraint_more")

    statement = _Deferred("_constraint_more")


class ConstraintExpression(PolicyObject):
    """A constraint's expression: iterates in postfix order, prints in infix order;
    ``users``, ``roles``, ``types`` are the names it mentions."""

    __slots__ = ("policy", "_postfix", "_infix", "mls", "users", "roles", "types")

    _PRECEDENCE = {"not": 4, "and": 2, "or": 1, "==": 3, "!=": 3, "dom": 3, "domby": 3,
                   "incomp": 3}
    _OPERANDS = ("u1", "u2", "u3", "r1", "r2", "r3", "t1", "t2", "t3", "l1", "l2", "h1", "h2")

    def __init__(self, policy, ident, rows):
        # ``ident`` is the constraint's (class value, table, position), for the nodes: the
        # expression, made once per constraint and policy, is identified by its object.
        self.policy = policy
        self._infix = None
        self.mls = False
        postfix = []
        users, roles, types = [], [], []
        for n, row in enumerate(rows):
            node = ConstraintExprNode(policy, ident + (n,), *row)
            if node.mls:
                self.mls = True
            if node.types:
                types.extend(node.names)
            elif node.roles:
                roles.extend(node.names)
            elif node.users:
                users.extend(node.names)
            postfix.extend(node)
        # A copy of its exact length: the grown list's spare room was 15 kB of the Debian
        # policy's constraints.
        self._postfix = postfix[:]
        self.users = _shared_set(policy, ("users",) + tuple(users), lambda: users)
        self.roles = _shared_set(policy, ("roles",) + tuple(roles), lambda: roles)
        self.types = _shared_set(policy, ("types",) + tuple(types), lambda: types)

    _key = _Deferred("_constraint_more")
    __str__ = _Deferred("_constraint_more")
    __getitem__ = _Deferred("_constraint_more")
    __iter__ = _Deferred("_constraint_more")
    __eq__ = _Deferred("_constraint_more")
    __hash__ = _Deferred("_constraint_more")

    __reduce__ = _Deferred("_constraint_pickling")

    infix = _Deferred("_constraint_more")
    statement = _Deferred("_constraint_more")


class BaseConstraint(PolicyObject):
    """Base of ``Constraint`` and ``Validatetrans``. Each is made once per statement and
    policy (``_class_constraints``), so it is identified by its object: a ``(class value,
    table, position)`` tuple per constraint was 15 kB of the Debian policy's."""

    __slots__ = ("policy", "ruletype", "tclass", "expression")

    _key = _Deferred("_constraint_more")
    __str__ = _Deferred("_constraint_more")

    perms = _Deferred("_constraint_more")

    __reduce__ = _Deferred("_constraint_pickling")


class Constraint(BaseConstraint):
    """``constrain``/``mlsconstrain CLASS PERMS (EXPRESSION);``"""

    __slots__ = ("perms",)

    def __init__(self, policy, ident, tclass, perms, rows):
        self.policy = policy
        self.tclass = tclass
        perms = tuple(map(intern, perms))
        self.perms = _shared_set(policy, ("perms",) + perms, lambda: perms)
        self.expression = ConstraintExpression(policy, ident, rows)
        self.ruletype = (ConstraintRuletype.mlsconstrain if self.expression.mls
                         else ConstraintRuletype.constrain)

    statement = _Deferred("_constraint_more")


class Validatetrans(BaseConstraint):
    """``validatetrans``/``mlsvalidatetrans CLASS (EXPRESSION);``"""

    __slots__ = ()

    def __init__(self, policy, ident, tclass, rows):
        self.policy = policy
        self.tclass = tclass
        self.expression = ConstraintExpression(policy, ident, rows)
        self.ruletype = (ConstraintRuletype.mlsvalidatetrans if self.expression.mls
                         else ConstraintRuletype.validatetrans)

    perms = _Deferred("_constraint_more")

    statement = _Deferred("_constraint_more")


_RANGE_DEFAULT = {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 2, 7: 7}
_RANGE_PART = {1: 1, 2: 2, 3: 3, 4: 1, 5: 2, 6: 3, 7: None}


class Default(PolicyObject):
    """``default_user``/``default_role``/``default_type CLASS DEFAULT;``"""

    __slots__ = ("policy", "ruletype", "tclass", "_default")

    def __init__(self, policy, ruletype, tclass, default):
        self.policy = policy
        self.ruletype = ruletype
        self.tclass = tclass
        self._default = default

    _key = _Deferred("_constraint_more")
    __eq__ = _Deferred("_constraint_more")
    __hash__ = _Deferred("_constraint_more")
    __str__ = _Deferred("_constraint_more")

    @property
    def default(self):
        """Which context the field comes from (``DefaultValue``)."""
        return self._default

    statement = _Deferred("_constraint_more")

    __reduce__ = _Deferred("_constraint_pickling")


class DefaultRange(Default):
    """``default_range CLASS DEFAULT [RANGE];``"""

    __slots__ = ("default_range",)

    def __init__(self, policy, tclass, number):
        try:
            default = DefaultValue(_RANGE_DEFAULT[number])
        except KeyError as e:
            raise _exc.LowLevelPolicyError("Unsupported default value: {}".format(e)) from e
        super().__init__(policy, DefaultRuletype.default_range, tclass, default)
        part = _RANGE_PART[number]
        self.default_range = None if part is None else DefaultRangeValue(part)

    __eq__ = _Deferred("_constraint_more")
    __hash__ = _Deferred("_constraint_more")
    statement = _Deferred("_constraint_more")


# The constraints and validatetrans of a class without either.
_NONE = ((), ())


class _ConstraintPolicy:
    """The constraint and default_* part of ``SELinuxPolicy``."""

    def _user_by_value(self):
        return self._table("user_by_value", lambda: {u._value: u for u in self._users_all()})

    def _class_constraints(self, tclass):
        """``(constraints, validatetrans)`` of a class, built on first use from that
        class's rows alone (every class's rows read at once set a peak that Python's
        allocator kept as free blocks to the end of a script)."""
        built = self._table("constraints_by_class", dict)
        v = tclass._value
        if v not in built:
            cons, vts = next(((c, vt) for _, c, vt in _native.constraint_table(self._db, v)),
                             _NONE)
            # The classes without constraints (most) share one pair of empty tables.
            built[v] = _NONE if not (cons or vts) else (
                tuple(Constraint(self, (v, 0, n), tclass, perms, nodes)
                      for n, (perms, nodes) in enumerate(cons)),
                tuple(Validatetrans(self, (v, 1, n), tclass, nodes)
                      for n, nodes in enumerate(vts)),
            )
        return built[v]

    def _class_defaults(self, tclass):
        rows = self._table(
            "default_rows", lambda: {r[0]: r[1:] for r in _native.default_table(self._db)})
        built = self._table("defaults_by_class", dict)
        v = tclass._value
        if v not in built:
            # A class's row is read once: dropped when its objects are built.
            user, role, type_, range_ = rows.pop(v, (0, 0, 0, 0))
            out = []
            if user:
                out.append(Default(self, DefaultRuletype.default_user, tclass,
                                   DefaultValue(user)))
            if role:
                out.append(Default(self, DefaultRuletype.default_role, tclass,
                                   DefaultValue(role)))
            if type_:
                out.append(Default(self, DefaultRuletype.default_type, tclass,
                                   DefaultValue(type_)))
            if range_:
                out.append(DefaultRange(self, tclass, range_))
            built[v] = tuple(out)  # most are empty: the one empty tuple
        return built[v]

    def constraints(self):
        """Every constraint and validatetrans: per class (setools' class order), the
        constraints then the validatetrans (a generator, as setools')."""

        def build():
            out = []
            for c in self.classes():
                cons, vts = self._class_constraints(c)
                out += cons
                out += vts
            return out

        yield from self._table("constraints_all", build)

    def defaults(self):
        """Every default_* rule, per class in setools' class order."""
        # One list per policy: a DefaultQuery visited every class's table each call.
        yield from self._table(
            "defaults_all", lambda: [d for c in self.classes() for d in c.defaults()])


# The pickling of this part's objects is in ``_constraint_pickling`` (``policyrep._Deferred`` gives
# the ``__reduce__`` methods on first use); pickles name its rebuilding functions as this
# module's, which serves them here.
__getattr__ = _pickling_getattr(globals(), "_constraint_pickling", frozenset((
    "_expr_node_at",
    "_expression_at",
    "_constraint_ident",
    "_constraint_at",
    "_default_at")))
