"""The methods of ``policyrep``'s objects that a script rarely calls (the symbols'
aliases, attributes, members and expansion, the TE rules' expansion and hashing, the
policy's copies, text, rarer lookups, listings and properties, the objects' ordering,
``repr()``, keys and hashing, the rules' conditionals, file names and defaults) and the
rarer enumerations' definitions, imported on first use (``policyrep._Deferred``,
``policyrep._made``): a script that only queries does not keep their code. Each
namespace class below gives its methods to the ``policyrep`` class of its name."""

from .. import _native
from . import exception as _exc
from . import policyrep as _pr
from .policyrep import TERuletype, _made


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

    def _key(self):
        raise NotImplementedError

    def __str__(self):
        raise NotImplementedError

    def __hash__(self):
        return hash(str(self))

    def statement(self):
        """The policy language text of the object."""
        raise _exc.NoStatement


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

    @property
    def _aliases(self):
        return self.policy._type_extras()[1].get(self._value, ())

    @property
    def ispermissive(self):
        """Whether the type is permissive: 1 or 0 (an int, as setools returns it)."""
        return 1 if self._value in self.policy._type_extras()[0] else 0


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

    @property
    def ispermissive(self):
        raise _exc.SymbolUseError("Attributes cannot be permissive.")


class Role:
    def types(self):
        """The types the role may have (a frozenset)."""
        p = self.policy
        return frozenset(p._type_by_value[v] for v in self._types)

    def expand(self):
        """A role expands to itself."""
        yield self

    @property
    def dominated_roles(self):
        """Roles dominated by this one (none in a binary policy)."""
        return frozenset()


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

    def _extra(self):
        return None

    @property
    def conditional(self):
        if self._cond is None:
            raise _exc.RuleNotConditional
        return self.policy._conditional(self._cond[0])

    @property
    def conditional_block(self):
        if self._cond is None:
            raise _exc.RuleNotConditional
        return self._cond[1]

    @property
    def filename(self):
        raise _exc.RuleUseError("{} rules do not have file names".format(self.ruletype))

    def enabled(self, **kwargs):
        if self._cond is None:
            return True
        return self.conditional.evaluate(**kwargs) == self._cond[1]


class AVRule:
    def derive_expanded(self, source, target, perms):
        """An expanded rule of this one with new permissions."""
        return _pr._DerivedAVRule(self, source, target, perms)

    @property
    def default(self):
        raise _exc.RuleUseError("{} rules do not have a default type.".format(self.ruletype))


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

    @classmethod
    def from_bytes(cls, data):
        """A policy from its image (``bytes``)."""
        return cls(_native.PolicyDb(bytes(data)))

    @property
    def path(self):
        """The policy file."""
        return self._path

    @property
    def version(self):
        """The policy format version."""
        return self._db.version

    @property
    def handle_unknown(self):
        """The policy's handling of unknown classes and permissions."""
        return _made("HandleUnknown")[self._db.handle_unknown]

    @property
    def target_platform(self):
        """The platform: ``PolicyTarget.selinux`` or ``PolicyTarget.xen``."""
        target = _made("PolicyTarget")
        return target.xen if self._is_xen() else target.selinux

    def _type_extras(self):
        """``(values of the permissive types, value -> aliases)``, built with the types."""
        extras = self._cache.get("type_extras")
        if extras is None:
            self._type_by_value
            extras = self._cache["type_extras"]
        return extras

    @property
    def _bool_by_value(self):
        return self._table("bool_by_value", lambda: {b._value: b for b in self._bools_all()})


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


class PolicySymbol:
    @property
    def name(self):
        """The symbol's name: ``_NamedSymbol``'s slot, or what a type reads from the
        policy (both override this; a symbol with neither has no name)."""
        raise AttributeError("name")

    def _key(self):
        return self._value


class BaseType:
    def expand(self):
        raise NotImplementedError


class User:
    @property
    def mls_level(self):
        """The user's default level."""
        if self._level is None:
            raise _exc.MLSDisabled
        return self.policy._user_mls(self._value)[0]


class Common:
    def __contains__(self, perm):
        return perm in self.perms


class PolicyRule:
    def __str__(self):
        return self.statement()

    def __lt__(self, other):
        return str(self) < str(other)

    @property
    def conditional(self):
        raise _exc.RuleNotConditional

    @property
    def conditional_block(self):
        raise _exc.RuleNotConditional

    def enabled(self, **kwargs):
        return True

    def expand(self):
        raise NotImplementedError


class _DerivedAVRule:
    def __init__(self, origin, source, target, perms):
        super(_pr._DerivedAVRule, self).__init__(
            origin.policy, origin._res, origin._i, origin._row, source, target, origin.tclass,
            origin=origin,
        )
        self._perms = frozenset(perms)

    @property
    def perms(self):
        return self._perms


class AVRuleXperm:
    @property
    def perms(self):
        """The ioctl numbers (an ``IoctlSet``)."""
        from ._rarer import IoctlSet

        return IoctlSet(self._res.xperms(self._i))

    @property
    def xperm_type(self):
        """The extended permission type (``ioctl``)."""
        return "ioctl"

    def _extra(self):
        return "ioctl"


class TERule:
    @property
    def perms(self):
        raise _exc.RuleUseError("{} rules do not have a permission set.".format(self.ruletype))

    @property
    def default(self):
        """The default type."""
        return self.policy._type_by_value[self._row[5]]

    @property
    def filename(self):
        if self.ruletype == TERuletype.type_transition:
            raise _exc.TERuleNoFilename
        raise _exc.RuleUseError("{} rules do not have file names".format(self.ruletype))

    def _extra(self):
        return self._row[5]


class FileNameTERule:
    @property
    def filename(self):
        """The object name."""
        return self._res.filename(self._i)

    def _extra(self):
        return (self._row[5], self.filename)
