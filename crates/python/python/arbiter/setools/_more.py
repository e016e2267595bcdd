"""The methods of ``policyrep``'s objects that a script rarely calls (the symbols'
aliases, attributes, members and expansion, the TE rules' expansion and hashing, the
policy's copies, text and rarer lookups, the objects' ordering and ``repr()``) and the
rarer enumerations' definitions, imported on first use (``policyrep._Deferred``,
``policyrep._made``): a script that only queries does not keep their code. Each
namespace class below gives its methods to the ``policyrep`` class of its name."""

from . import exception as _exc
from . import policyrep as _pr


class PolicyObject:
    def __repr__(self):
        return '<{}({!r}, "{}")>'.format(type(self).__name__, self.policy, self)

    def __ne__(self, other):
        return not self == other

    def __lt__(self, other):
        return str(self) < str(other)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


class Type:
    def aliases(self):
        """The type's aliases, in the policy's alias order."""
        return iter(self._aliases)

    def attributes(self):
        """The attributes the type belongs to, in attribute-value order."""
        p = self.policy
        tv = p._type_by_value
        return (tv[v] for v in p._type_relations()[self._value - 1])

    def expand(self):
        """A type expands to itself."""
        yield self


class TypeAttribute:
    def expand(self):
        """The member types, in type-value order."""
        return iter(self._members())

    def __iter__(self):
        return self.expand()

    def __contains__(self, other):
        return any(other == t for t in self._members())

    def aliases(self):
        raise _exc.SymbolUseError("Type attributes do not have aliases.")

    def attributes(self):
        raise _exc.SymbolUseError("Type attributes do not have attributes.")


class Role:
    def types(self):
        """The types the role may have (a frozenset)."""
        p = self.policy
        return frozenset(p._type_by_value[v] for v in self._types)

    def expand(self):
        """A role expands to itself."""
        yield self


class ObjClass:
    def __contains__(self, perm):
        if perm in self.perms:
            return True
        return self._common is not None and perm in self.common.perms

    def constraints(self):
        """The class's constrain and mlsconstrain rules, in the policy's order."""
        return iter(self.policy._class_constraints(self)[0])

    def validatetrans(self):
        """The class's validatetrans and mlsvalidatetrans rules, in the policy's order."""
        return iter(self.policy._class_constraints(self)[1])


class BaseTERule:
    def _key(self):
        # Expanded rules share their origin's identity, as setools' share its pointer.
        return (self._row, self._extra(), self._origin_stmt())

    def _origin_stmt(self):
        return self._res.statement(self._i)

    def __hash__(self):
        return hash(
            (
                str(self.ruletype),
                str(self.source),
                str(self.target),
                str(self.tclass),
                self._extra(),
                self._cond,
            )
        )

    def expand(self):
        """One rule per (source type, target type) of the rule's attributes, sharing its
        body; an expanded rule yields itself."""
        if self.origin is not None:
            yield self
            return
        for s in self.source.expand():
            for t in self.target.expand():
                yield type(self)(
                    self.policy, self._res, self._i, self._row, s, t, self.tclass, origin=self
                )


class AVRule:
    def derive_expanded(self, source, target, perms):
        """An expanded rule of this one with new permissions."""
        return _pr._DerivedAVRule(self, source, target, perms)


class SELinuxPolicy:
    def __str__(self):
        return str(self._path) if self._path is not None else "<memory>"

    def __repr__(self):
        return '<SELinuxPolicy("{}")>'.format(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def terules(self):
        """Every TE rule, in setools' order (see ``TERuleQuery``)."""
        from .terulequery import TERuleQuery

        return TERuleQuery(self).results()

    def lookup_user(self, name):
        """A user by name."""
        u = self._by_name("user", self.users).get(str(name))
        if u is None:
            raise _exc.InvalidUser("{} is not a valid user".format(name))
        return u

    def lookup_boolean(self, name):
        """A Boolean by name."""
        b = self._by_name("bool", self.bools).get(str(name))
        if b is None:
            raise _exc.InvalidBoolean("{} is not a valid Boolean".format(name))
        return b


# The rarer enumerations (``policyrep._MADE_ON_USE``), named as at ``policyrep``'s module
# level, so that their members pickle, print and compare as before.


def _rbac_ruletype():
    class RBACRuletype(_pr.PolicyEnum):
        """RBAC rule types."""

        __module__ = _pr.__name__
        __qualname__ = "RBACRuletype"
        allow = 1
        role_transition = 2

    return RBACRuletype


def _handle_unknown():
    class HandleUnknown(_pr.PolicyEnum):
        """What the kernel does with classes and permissions the policy does not define."""

        __module__ = _pr.__name__
        __qualname__ = "HandleUnknown"
        deny = 0
        allow = 4
        reject = 2

    return HandleUnknown


def _policy_target():
    class PolicyTarget(_pr.PolicyEnum):
        """The platform a policy is for."""

        __module__ = _pr.__name__
        __qualname__ = "PolicyTarget"
        selinux = 0
        xen = 1

    return PolicyTarget


def _bounds_ruletype():
    class BoundsRuletype(_pr.PolicyEnum):
        """Bounds rule types."""

        __module__ = _pr.__name__
        __qualname__ = "BoundsRuletype"
        typebounds = 1

    return BoundsRuletype
