"""The pickling of ``_constraint``'s objects: their ``__reduce__`` methods and the functions
that rebuild them in the unpickled policy, imported on the first pickling or
unpickling (``policyrep._Deferred``, and ``_constraint``'s module ``__getattr__``, which
serves the functions under their old names: a pickle reads
``arbiter.setools._constraint._expr_node_at`` as before). Each namespace class below gives
its ``__reduce__`` to the ``_constraint`` class of its name."""

from .. import _native
from ._constraint import ConstraintExprNode as _ConstraintExprNode

_PART = "_constraint"


class ConstraintExprNode:
    def __reduce__(self):
        return (_expr_node_at, (self.policy, self._id))


class ConstraintExpression:
    def __reduce__(self):
        owner = next(c for c in self.policy.constraints() if c.expression is self)
        return (_expression_at, (self.policy, _constraint_ident(owner)))


class BaseConstraint:
    def __reduce__(self):
        return (_constraint_at, (self.policy, _constraint_ident(self)))


class Default:
    def __reduce__(self):
        return (_default_at, (self.policy, self.tclass.name, str(self.ruletype)))


def _expr_node_at(policy, ident):
    """Rebuilds a pickled expression node (its constraint and position)."""
    # Read again (the policy's copy of the rows is dropped once the objects are built).
    cls_value, which, n, k = ident
    [(_, cons, vts)] = _native.constraint_table(policy._db, cls_value)
    nodes = cons[n][1] if which == 0 else vts[n]
    return _ConstraintExprNode(policy, ident, *nodes[k])


def _expression_at(policy, ident):
    """Rebuilds a pickled constraint expression from its constraint."""
    return _constraint_at(policy, ident).expression


def _constraint_ident(constraint):
    """``(class value, table, position)`` of a constraint (table 0) or validatetrans (1)
    in its class's tables."""
    tables = constraint.policy._class_constraints(constraint.tclass)
    for which, table in enumerate(tables):
        for n, c in enumerate(table):
            if c is constraint:
                return (constraint.tclass._value, which, n)
    raise ValueError("a constraint of no class of its policy")


def _constraint_at(policy, ident):
    """Rebuilds a pickled constraint (class value, table, position)."""
    cls_value, which, n = ident
    return policy._class_constraints(policy._class_by_value[cls_value])[which][n]


def _default_at(policy, tclass, ruletype):
    """Rebuilds a pickled default_* rule."""
    for d in policy.lookup_class(tclass).defaults():
        if str(d.ruletype) == ruletype:
            return d
    raise ValueError("no {} rule for {}".format(ruletype, tclass))


# Named as ``_constraint``'s: pickle records a function by its module and name, and checks that
# the name finds it there.
for _f in (_expr_node_at, _expression_at, _constraint_ident, _constraint_at, _default_at):
    _f.__module__ = __package__ + "._constraint"
del _f
