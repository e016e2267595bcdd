"""``setools.policyrep`` on arbiter: ``SELinuxPolicy``, the symbol and rule classes and the
enums, with setools 4.4.1's attributes, ``str()``, equality, hashing and ordering.

Each object is a small handle (the policy and the symbol's value); the tables behind it
come from the native ``PolicyDb`` (one read of the policy, shared) the first time a kind
of symbol is asked for. Iteration orders are setools' (libsepol's hash tables), which the
native side reproduces.
"""

import enum
import importlib
import os
import sys
from array import array
from collections import namedtuple
from sys import intern

from .. import _native
from . import exception as _exc

# --------------------------------------------------------------------------- enums


class PolicyEnum(enum.Enum):
    """An enumeration whose ``str()`` is the member's name (``allow``); ``lookup`` takes a
    member, its name or its value."""

    def __str__(self):
        return self.name

    def __hash__(self):
        return hash(self.name)

    @classmethod
    def lookup(cls, value):
        """The member named or valued ``value`` (or ``value`` itself, a member)."""
        if isinstance(value, cls):
            return value
        try:
            return cls(value)
        except ValueError:
            return cls[value]


class TERuletype(PolicyEnum):
    """TE rule types."""

    allow = 1
    neverallow = 128
    auditallow = 2
    dontaudit = 4
    allowxperm = 256
    neverallowxperm = 2048
    auditallowxperm = 512
    dontauditxperm = 1024
    type_transition = 16
    type_change = 64
    type_member = 32


class MLSRuletype(PolicyEnum):
    """MLS rule types."""

    range_transition = 1


class ConstraintRuletype(PolicyEnum):
    """Constraint rule types."""

    constrain = 1
    mlsconstrain = 2
    validatetrans = 3
    mlsvalidatetrans = 4


class DefaultRuletype(PolicyEnum):
    """default_* rule types."""

    default_user = 1
    default_role = 2
    default_type = 3
    default_range = 4


class DefaultValue(PolicyEnum):
    """Which context a default_* rule takes its field from."""

    source = 1
    target = 2
    glblub = 7


class DefaultRangeValue(PolicyEnum):
    """Which part of the range a default_range rule takes."""

    low = 1
    high = 2
    low_high = 3


class FSUseRuletype(PolicyEnum):
    """fs_use_* rule types."""

    fs_use_xattr = 1
    fs_use_trans = 2
    fs_use_task = 3


class PortconProtocol(PolicyEnum):
    """portcon protocols (IP protocol numbers)."""

    tcp = 6
    udp = 17
    dccp = 33
    sctp = 132


class NodeconIPVersion(PolicyEnum):
    """nodecon address families."""

    ipv4 = 2
    ipv6 = 10


PortconRange = namedtuple("PortconRange", ["low", "high"])


# The enumerations and named tuples that only rarer statements, rules and queries use,
# made when first named (``__getattr__`` below, PEP 562; ``_made`` inside this module):
# 4-6 kB of Python's memory each, that a script using none of them does not keep. The
# enumerations are defined in functions of ``_more`` (imported then), each named as at
# this module's level, so that their members pickle, print and compare as before.


def _range_tuple(name, fields=("low", "high")):
    return lambda: namedtuple(name, fields, module=__name__)


_MADE_ON_USE = {
    # The enumerations' definitions are ``_more``'s (named there).
    "RBACRuletype": "_rbac_ruletype",
    "HandleUnknown": "_handle_unknown",
    "PolicyTarget": "_policy_target",
    "BoundsRuletype": "_bounds_ruletype",
    "TruthTableRow": _range_tuple("TruthTableRow", ("values", "result")),
    "IbpkeyconRange": _range_tuple("IbpkeyconRange"),
    "IoportconRange": _range_tuple("IoportconRange"),
    "IomemconRange": _range_tuple("IomemconRange"),
}


def _made(name):
    """One of ``_MADE_ON_USE``'s classes, made on its first use."""
    cls = globals().get(name)
    if cls is None:
        make = _MADE_ON_USE[name]
        if type(make) is str:
            make = getattr(_part_module("_more"), make)
        # The first made is kept, should two threads make one at once.
        cls = globals().setdefault(name, make())
    return cls

# The policy capabilities libsepol 3.4 names, by bit.
_POLCAP_NAMES = (
    "network_peer_controls",
    "open_perms",
    "extended_socket_class",
    "always_check_network",
    "cgroup_seclabel",
    "nnp_nosuid_transition",
    "genfs_seclabel_symlinks",
    "ioctl_skip_cloexec",
)

# --------------------------------------------------------------------------- base classes


class _Deferred:
    """A method whose code is in a submodule (``_statements``, ``_evaluation``,
    ``_pickling``; for the parts' classes ``_mls_pickling``, ``_labeling_pickling``,
    ``_constraint_pickling``) imported on the method's first use: what a script rarely
    calls does not cost its code objects in every process (tests/test_setools_lazy.py).
    The submodule's namespace classes hold the functions under the class names of this
    module (or of the part its ``_PART`` names); importing it puts them on the classes
    (named as if defined there), so ``help()``, ``inspect`` and pickling see the plain
    methods."""

    __slots__ = ("module", "name")

    def __init__(self, module):
        self.module = module

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        _install_deferred(self.module)
        owner = type(obj) if owner is None else owner
        value = next(c.__dict__[self.name] for c in owner.__mro__ if self.name in c.__dict__)
        if value is self:  # the submodule lacks it: a bug, not a loop
            raise AttributeError(self.name)
        return value.__get__(obj, owner)


_FUNCTION = type(lambda: None)
# The functions that rebuild pickled objects, in ``_pickling`` (served by ``__getattr__``).
_PICKLING_FUNCTIONS = frozenset((
    "_resolve_symbol", "_conditional_at", "_te_rule_at", "_expanded_rule", "_derived_av_rule",
    "_rbac_rule_at", "_bounds_at"))


def _install_deferred(module):
    """Imports the submodule ``module`` and makes its namespace classes' functions the
    methods of this module's classes of the same names. The classes this module serves
    from ``_rarer`` (``_PART_OF_CLASS``) are left while that module is not loaded: the
    first ``statement()`` of a TE rule does not load it for ``RoleAllow``'s; ``_rarer``
    calls this again when it loads (``_install_loaded_deferred``)."""
    mod = _part_module(module)
    # The namespace classes installed so far (a set, so that a later call installs those
    # left before and nothing twice).
    done = mod.__dict__.setdefault("_installed", set())
    # The classes are this module's, or those of the part the submodule names (``_PART``).
    part = getattr(mod, "_PART", None)
    target = sys.modules[__name__] if part is None else _part_module(part)
    for cls_name, ns in list(vars(mod).items()):
        if cls_name in done or not isinstance(ns, type) or ns.__module__ != mod.__name__:
            continue
        holder = target
        if part is None and cls_name in _PART_OF_CLASS:
            holder = sys.modules.get(__package__ + "." + _PART_OF_CLASS[cls_name])
            if holder is None:
                continue
        cls = getattr(holder, cls_name)
        for name, fn in vars(ns).items():
            # A function, a property (its getter named as the class's) or a class method.
            f = fn.fget if type(fn) is property else fn
            f = f.__func__ if type(f) is classmethod else f
            if type(f) is _FUNCTION:
                f.__module__ = cls.__module__
                setattr(cls, name, fn)
                # A part's mixin: ``SELinuxPolicy`` holds copies of its members
                # (``_load_part``), this one still the deferred stand-in.
                if cls.__name__ == _PART_MIXINS.get(part) and isinstance(
                        SELinuxPolicy.__dict__.get(name), _Deferred):
                    setattr(SELinuxPolicy, name, fn)
        done.add(cls_name)


def _install_loaded_deferred():
    """Installs, for a part just loaded, the methods of the deferred submodules already
    installed (``_install_deferred`` left its classes)."""
    for module in ("_statements", "_pickling", "_evaluation"):
        if __package__ + "." + module in sys.modules:
            _install_deferred(module)


def _pickling_getattr(namespace, part, names):
    """The module ``__getattr__`` of a part whose pickling moved to the submodule ``part``:
    it serves ``names`` (the functions that rebuild the part's pickled objects, which
    pickles name as the part's) from that submodule, imported and installed on first use."""

    def __getattr__(name):
        if name in names:
            _install_deferred(part)
            value = namespace[name] = getattr(_part_module(part), name)
            return value
        raise AttributeError("module {!r} has no attribute {!r}".format(namespace["__name__"], name))

    return __getattr__


class PolicyObject:
    """Base of every object of a policy: equal to an object of the same policy and kind
    with the same identity, else compared by ``str()``; hashed and ordered by ``str()``.
    Its ``policy`` slot is each direct subclass's: the symbols' base (``PolicySymbol``)
    also has the native base that holds the value, and a class cannot have two bases
    that both add to ``object``'s layout."""

    __slots__ = ()

    _key = _Deferred("_more")

    __str__ = _Deferred("_more")

    def __getattr__(self, name):
        # Reached for missing attributes and for properties that raised AttributeError (a
        # RuleUseError, say): re-raise those; word the others as setools' compiled classes
        # do, since scripts print the message.
        if hasattr(type(self), name):
            return object.__getattribute__(self, name)
        raise AttributeError(
            "'setools.policyrep.{}' object has no attribute '{}'".format(type(self).__name__, name)
        )

    __repr__ = _Deferred("_more")

    def __eq__(self, other):
        if isinstance(other, PolicyObject):
            return (
                type(self) is type(other)
                and self.policy is other.policy
                and self._key() == other._key()
            )
        return str(self) == str(other)

    __ne__ = _Deferred("_more")

    __hash__ = _Deferred("_more")

    __lt__ = _Deferred("_more")
    __copy__ = _Deferred("_more")
    __deepcopy__ = _Deferred("_more")

    statement = _Deferred("_more")


class PolicySymbol(PolicyObject, _native.SymbolBase):
    """A named symbol: ``str()`` is its name. The name's slot is ``_NamedSymbol``'s: the
    type objects (``BaseType``) read theirs from the policy, and a slot they never set was
    16 bytes on each of a distribution policy's 4,000 types (each object 64 bytes of
    Python's memory instead of 48). The value (``_value``) is the native base's, a
    machine int given to ``__new__`` (``Kind(policy, value, ...)``): in a slot, each
    value over 256 was an ``int`` of 32 bytes more (133 kB for those 4,000 types)."""

    __slots__ = ("policy",)

    name = _Deferred("_more")

    _key = _Deferred("_more")

    def __str__(self):
        return self.name

    def __eq__(self, other):
        # The common case first (two symbols of one kind), without the generic path.
        if other.__class__ is self.__class__:
            return self.policy is other.policy and self._value == other._value
        return PolicyObject.__eq__(self, other)

    def __hash__(self):
        return hash(self.name)

    __reduce__ = _Deferred("_pickling")


class _NamedSymbol(PolicySymbol):
    """A symbol that holds its name (every kind but the types and attributes)."""

    __slots__ = ("name",)

    def __init__(self, policy, value, name):
        self.policy = policy
        self.name = name


# --------------------------------------------------------------------------- symbols


class BaseType(PolicySymbol):
    """Common base of ``Type`` and ``TypeAttribute``. The name is read from the policy
    when asked (``name``, ``str()``, hashing), not held: the 4,000 names of a
    distribution policy's types were about 0.27 MB kept for the whole run, when a script
    reads few of them (the queries match names natively)."""

    __slots__ = ()

    def __init__(self, policy, value):
        self.policy = policy

    @property
    def name(self):
        """The type's (or attribute's) name."""
        return self.policy._db.type_name(self._value)

    def __str__(self):
        return self.policy._db.type_name(self._value)

    def __hash__(self):
        return hash(self.policy._db.type_name(self._value))

    expand = _Deferred("_more")


class Type(BaseType):
    """A type. Its permissive flag and aliases are the policy's (``_type_extras``), not
    the object's: few types have either, and two slots on each of the 4,000 types of a
    distribution policy were 64 kB."""

    __slots__ = ()

    _aliases = _Deferred("_more")

    ispermissive = _Deferred("_more")

    aliases = _Deferred("_more")
    attributes = _Deferred("_more")
    expand = _Deferred("_more")

    statement = _Deferred("_statements")


class TypeAttribute(BaseType):
    """A type attribute: a set of types."""

    __slots__ = ()

    def _members(self):
        # Built once per attribute: queries that expand attributes (ConstraintQuery's
        # indirect types) ask for the same members once per rule.
        p = self.policy
        cache = p._table("attribute_members", dict)
        m = cache.get(self._value)
        if m is None:
            tv = p._type_by_value
            m = cache[self._value] = [tv[v] for v in p._type_relations()[self._value - 1]]
        return m

    expand = _Deferred("_more")
    __iter__ = _Deferred("_more")

    def __len__(self):
        return len(self._members())

    __contains__ = _Deferred("_more")

    ispermissive = _Deferred("_more")

    aliases = _Deferred("_more")
    attributes = _Deferred("_more")

    statement = _Deferred("_statements")


class Role(_NamedSymbol):
    """A role."""

    __slots__ = ("_types",)

    def __init__(self, policy, value, name, types):
        super().__init__(policy, value, name)
        self._types = types

    types = _Deferred("_more")

    dominated_roles = _Deferred("_more")

    expand = _Deferred("_more")

    statement = _Deferred("_statements")


class User(_NamedSymbol):
    """A user."""

    __slots__ = ("_roles", "_level", "_range")

    def __init__(self, policy, value, name, roles, level, range_):
        super().__init__(policy, value, name)
        self._roles = roles
        self._level = level
        self._range = range_

    @property
    def roles(self):
        """The user's roles (a frozenset, without ``object_r``)."""
        p = self.policy
        return frozenset(
            r for r in (p._role_by_value[v] for v in self._roles) if r.name != "object_r"
        )

    mls_level = _Deferred("_more")

    @property
    def mls_range(self):
        """The user's range."""
        if self._range is None:
            raise _exc.MLSDisabled
        return self.policy._user_mls(self._value)[1]

    statement = _Deferred("_statements")


class Boolean(PolicySymbol):
    """A conditional policy Boolean. The name is read from the policy when asked
    (``name``, ``str()``, hashing), not held, as a type's is: the Debian policy's 300
    names were about 25 kB kept for the whole run, and a script that lists the Booleans
    or matches them by state or by a regex (matched natively) reads none."""

    __slots__ = ("state",)

    def __init__(self, policy, value, state):
        self.policy = policy
        self.state = state

    @property
    def name(self):
        """The Boolean's name."""
        return self.policy._db.bool_name(self._value)

    def __str__(self):
        return self.policy._db.bool_name(self._value)

    def __hash__(self):
        return hash(self.policy._db.bool_name(self._value))

    statement = _Deferred("_statements")


class Common(_NamedSymbol):
    """A common permission set."""

    __slots__ = ("perms",)

    def __init__(self, policy, value, name, perms):
        super().__init__(policy, value, name)
        self.perms = frozenset(map(intern, perms))

    __contains__ = _Deferred("_more")

    statement = _Deferred("_statements")


class ObjClass(_NamedSymbol):
    """An object class."""

    __slots__ = ("perms", "_common")

    def __init__(self, policy, value, name, common, perms):
        super().__init__(policy, value, name)
        self._common = common
        # Interned: the classes repeat their permission names (``read`` in most of them),
        # and the constraints name them again.
        self.perms = frozenset(map(intern, perms))

    @property
    def common(self):
        """The common the class inherits (``NoCommon`` if none)."""
        if self._common is None:
            raise _exc.NoCommon("{} does not inherit a common.".format(self.name))
        # Resolved once per policy (a lookup by name per read cost more than the queries
        # that read it).
        by_class = self.policy._table("common_of_class", dict)
        com = by_class.get(self._value)
        if com is None:
            com = by_class[self._value] = self.policy.lookup_common(self._common)
        return com

    __contains__ = _Deferred("_more")
    constraints = _Deferred("_more")
    validatetrans = _Deferred("_more")

    def defaults(self):
        """The class's default_user, default_role, default_type, default_range rules."""
        return iter(self.policy._class_defaults(self))

    statement = _Deferred("_statements")


class PolicyCapability(_NamedSymbol):
    """A policy capability."""

    __slots__ = ()

    statement = _Deferred("_statements")


# --------------------------------------------------------------------------- TE rules


class PolicyRule(PolicyObject):
    """Base of every rule."""

    __slots__ = ("policy", "ruletype", "source", "target", "origin")

    extended = False

    __str__ = _Deferred("_more")

    __lt__ = _Deferred("_more")

    conditional = _Deferred("_more")

    conditional_block = _Deferred("_more")

    enabled = _Deferred("_more")

    expand = _Deferred("_more")


class BaseTERule(PolicyRule):
    """Base of the TE rule classes: a handle on one rule of a native result set
    (``_res``, position ``_i``); fields other than the key are read on demand."""

    __slots__ = ("tclass", "_cond", "_res", "_i", "_row")

    def __init__(self, policy, res, i, row, source, target, tclass, origin=None):
        self.policy = policy
        self._res = res
        self._i = i
        self._row = row
        self.ruletype = _TE_KINDS[row[0]]
        self.source = source
        self.target = target
        self.tclass = tclass
        self._cond = None if row[6] < 0 else (row[6], row[7])
        self.origin = origin

    _key = _Deferred("_more")
    _origin_stmt = _Deferred("_more")
    __hash__ = _Deferred("_more")

    _extra = _Deferred("_more")

    conditional = _Deferred("_more")

    conditional_block = _Deferred("_more")

    filename = _Deferred("_more")

    enabled = _Deferred("_more")

    statement = _Deferred("_statements")

    __reduce__ = _Deferred("_pickling")

    expand = _Deferred("_more")


class AVRule(BaseTERule):
    """allow, auditallow, dontaudit."""

    __slots__ = ()

    @property
    def perms(self):
        """The permissions (a frozenset of names)."""
        return frozenset(self._res.perms(self._i))

    default = _Deferred("_more")

    derive_expanded = _Deferred("_more")


class _DerivedAVRule(AVRule):
    """An expanded AVRule with its own permission set (``derive_expanded``)."""

    __slots__ = ("_perms",)

    __init__ = _Deferred("_more")

    perms = _Deferred("_more")

    __reduce__ = _Deferred("_pickling")
    statement = _Deferred("_statements")


# setools' derive_expanded returns a plain AVRule: scripts printing type(rule).__name__ see
# that name.
_DerivedAVRule.__name__ = _DerivedAVRule.__qualname__ = "AVRule"


def perms_text(perms):
    """A permission list as statements print it."""
    perms = sorted(perms)
    if len(perms) == 1:
        return perms[0]
    return "{{ {} }}".format(" ".join(perms))


class AVRuleXperm(AVRule):
    """allowxperm, auditallowxperm, dontauditxperm."""

    __slots__ = ()

    extended = True

    perms = _Deferred("_more")

    xperm_type = _Deferred("_more")

    _extra = _Deferred("_more")


class TERule(BaseTERule):
    """type_transition, type_change, type_member."""

    __slots__ = ()

    perms = _Deferred("_more")

    default = _Deferred("_more")

    filename = _Deferred("_more")

    _extra = _Deferred("_more")


class FileNameTERule(TERule):
    """A type_transition with an object name."""

    __slots__ = ()

    filename = _Deferred("_more")

    _extra = _Deferred("_more")


_TE_CLASSES = (AVRule, AVRuleXperm, TERule, FileNameTERule)
_TE_KINDS = {k.name: k for k in TERuletype}


def _te_rules(policy, res):
    """Rule objects for a native result set, in its order."""
    tv = policy._type_by_value
    cv = policy._class_by_value
    classes = _TE_CLASSES
    # Rows are read 256 at a time: the rules a script drops as it goes never all exist.
    for start in range(0, len(res), 256):
        for i, row in enumerate(res.rows(start, start + 256), start):
            yield classes[row[4]](policy, res, i, row, tv[row[1]], tv[row[2]], cv[row[3]])


# --------------------------------------------------------------------------- the policy


def _log():
    """setools' ``setools.policyrep`` logger, or ``None`` while ``logging`` is not imported
    (nothing can be listening then; the import costs 1 MB, so it is not made for this)."""
    logging = sys.modules.get("logging")
    return logging.getLogger("setools.policyrep") if logging is not None else None


def _values_array(values):
    """Type values as an ``array`` of 2-byte machine ints, the width of a type value in
    the kernel's tables (half of ``"I"``'s), or of 4-byte ones should one be wider."""
    try:
        return array("H", values)
    except OverflowError:
        return array("I", values)


# --------------------------------------------------------------------------- the parts

# The MLS, Xen, labeling and constraint parts of a policy, and its rarer objects
# (``_rarer``: conditionals, ioctl sets, RBAC rules and bounds) (their classes, and the
# ``SELinuxPolicy`` methods over them) live in their own modules, imported on first use:
# a script that reads types and TE rules does not pay for their code (0.4 MB resident).
# ``SELinuxPolicy`` holds a ``_PartMember`` for each of their methods; the first one used
# imports its modules and puts their methods in the class, where later lookups find them
# directly. The MLS and labeling modules load together (the labeling one uses the MLS
# part's ``Listing`` and ranges); earlier modules' methods win, as in the bases order the
# parts had as mixins. The Xen module loads only for the Xen iterators, or for a Xen
# policy's initial SIDs (the labeling part's ``_build_labeling`` asks it): an SELinux
# policy's labeling does not pay for its code (21 kB). A TE rule's ``conditional`` and an
# xperm rule's ``perms`` load ``_rarer``. tests/test_setools_lazy.py checks
# these lists against the modules.
_PART_MIXINS = {
    "_counts": "_CountsPolicy",
    "_mls": "_MLSPolicy",
    "_xen": "_XenPolicy",
    "_labeling": "_LabelingPolicy",
    "_constraint": "_ConstraintPolicy",
    "_rarer": "_RarerPolicy",
}
_PART_MEMBERS = {
    ("_counts",): """
        _constraint_counts _te_count allow_count allowxperm_count auditallow_count
        auditallowxperm_count boolean_count category_count class_count common_count
        conditional_count constraint_count default_count dontaudit_count
        dontauditxperm_count fs_use_count genfscon_count ibendportcon_count
        ibpkeycon_count initialsids_count level_count mlsconstraint_count
        mlsvalidatetrans_count netifcon_count neverallow_count neverallowxperm_count
        nodecon_count permission_count permissives_count polcap_count portcon_count
        range_transition_count role_allow_count role_count role_transition_count
        type_attribute_count type_change_count type_count type_member_count
        type_transition_count typebounds_count user_count validatetrans_count""",
    ("_mls", "_labeling"): """
        _build_labeling _cat_tokens _categories_all _categories_named
        _category_by_value _category_of_token _contexts _is_xen _labeling _level
        _leveldecl _mlsrules_all _range _sens_by_value _sens_of_bitmap
        _sensitivities_all _user_mls categories fs_uses genfscons ibendportcons
        ibpkeycons initialsids levels lookup_category lookup_initialsid lookup_level
        lookup_range lookup_sensitivity mlsrules netifcons nodecons portcons
        sensitivities""",
    ("_xen",): """
        devicetreecon_count devicetreecons iomemcon_count iomemcons ioportcon_count
        ioportcons pcidevicecon_count pcidevicecons pirqcon_count pirqcons""",
    ("_constraint",): """
        _class_constraints _class_defaults _user_by_value constraints defaults""",
    ("_rarer",): "_conditional bounds conditionals rbacrules",
}
# The classes the parts define, which ``setools.policyrep`` exports (PEP 562 below).
_PART_CLASSES = {
    "_mls": "BaseMLSLevel Category Level LevelDecl MLSRule Range Sensitivity",
    "_labeling": """Context FSUse GenfsFiletype Genfscon Ibendportcon Ibpkeycon InitialSID
        Netifcon Nodecon Ocontext Portcon""",
    "_xen": "Devicetreecon Iomemcon Ioportcon Pcidevicecon Pirqcon",
    "_constraint": """BaseConstraint Constraint ConstraintExprNode ConstraintExpression
        Default DefaultRange Validatetrans""",
    "_rarer": "Bounds Conditional ConditionalOperator IoctlSet RoleAllow RoleTransition",
}
_PART_OF_CLASS = {n: module for module, names in _PART_CLASSES.items() for n in names.split()}


def _part_module(module):
    return importlib.import_module(__package__ + "." + module)


def _load_part(modules):
    """Imports ``modules`` and makes their mixins' methods ``SELinuxPolicy``'s."""
    members = {}
    for module in reversed(modules):
        mixin = getattr(_part_module(module), _PART_MIXINS[module])
        members.update((n, v) for n, v in vars(mixin).items() if not n.startswith("__"))
    for name, value in members.items():
        setattr(SELinuxPolicy, name, value)


class _PartMember:
    """A ``SELinuxPolicy`` method (or property) of a part not imported yet."""

    __slots__ = ("modules", "name")

    def __init__(self, modules, name):
        self.modules = modules
        self.name = name

    def __get__(self, obj, owner=None):
        _load_part(self.modules)
        return SELinuxPolicy.__dict__[self.name].__get__(obj, owner)


# The exceptions setools' ``policyrep`` re-exports, served from ``exception`` (made there on
# first use).
_EXCEPTIONS = frozenset("""
    ConstraintUseError InvalidBoolean InvalidBoundsType InvalidCategory InvalidClass
    InvalidCommon InvalidConstraintType InvalidDefaultRange InvalidDefaultType
    InvalidDefaultValue InvalidFSUseType InvalidInitialSid InvalidLevel InvalidLevelDecl
    InvalidMLSRuleType InvalidPermission InvalidPolicy InvalidRBACRuleType InvalidRange
    InvalidRole InvalidRuleType InvalidSensitivity InvalidSymbol InvalidTERuleType
    InvalidType InvalidUser LowLevelPolicyError MLSDisabled NoCommon NoDefaults
    NoStatement PolicyrepException RuleNotConditional RuleUseError SymbolUseError
    TERuleNoFilename""".split())


def __getattr__(name):
    if name in _EXCEPTIONS:
        return getattr(_exc, name)
    if name in _MADE_ON_USE:
        return _made(name)
    if name in _PICKLING_FUNCTIONS:
        _install_deferred("_pickling")
        value = globals()[name] = getattr(_part_module("_pickling"), name)
        return value
    module = _PART_OF_CLASS.get(name)
    if module is None:
        raise AttributeError("module {!r} has no attribute {!r}".format(__name__, name))
    value = getattr(_part_module(module), name)
    globals()[name] = value
    return value


class SELinuxPolicy:
    """A binary SELinux policy, read by arbiter. ``SELinuxPolicy(path)``; pickles by path
    (or, for a policy not read from a file, by its image)."""

    def __init__(self, policyfile=None):
        if isinstance(policyfile, _native.PolicyDb):
            self._db = policyfile
            self._path = policyfile.path
        elif policyfile is None:
            # Only a policy opened without a path looks for the running one (the module
            # holds the search, out of every script's memory).
            from ._running import _running_policy_candidates

            candidates, skip_missing = _running_policy_candidates()
            for path in candidates:
                try:
                    self._open(path)
                except FileNotFoundError:
                    if not skip_missing:
                        raise
                else:
                    break
            else:
                raise RuntimeError("Unable to locate an SELinux policy to load.")
        else:
            self._open(policyfile)
        self._cache = {}

    def _open(self, policyfile):
        """Reads and validates one policy file, logging what setools 4.4.1 logs when it
        opens one (its INFO lines show under ``sesearch -v``, the DEBUG ones under
        ``--debug``; they name setools' own steps, which reading here stands for)."""
        path = os.fspath(policyfile)
        log = _log()
        if log:
            log.info('Opening SELinux policy "{0}"'.format(path))
        if not os.path.exists(path):
            # ``errno`` imported here: its table is 17 kB a script would keep for this line.
            import errno

            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
        try:
            self._db = _native.PolicyDb(path)
        except _native.PolicyError as e:
            raise _exc.InvalidPolicy("Invalid policy: {}. {}".format(path, e)) from None
        self._path = path
        if log:
            log.debug("Rebuilding attributes.")
            log.debug("Setting permissive flags in type datums.")
            if self._db.mls:
                log.debug("Creating cat_val_to_struct.")
                log.debug("Creating level_val_to_struct.")
            log.info('Successfully opened SELinux policy "{0}"'.format(path))

    from_bytes = _Deferred("_more")

    def __reduce__(self):
        if self._db.path is not None:
            return (SELinuxPolicy, (os.fspath(self._db.path),))
        return (SELinuxPolicy.from_bytes, (self._db.image(),))

    __str__ = _Deferred("_more")
    __repr__ = _Deferred("_more")
    __copy__ = _Deferred("_more")
    __deepcopy__ = _Deferred("_more")

    # --- properties

    path = _Deferred("_more")

    version = _Deferred("_more")

    @property
    def mls(self):
        """Whether MLS is enabled."""
        return self._db.mls

    handle_unknown = _Deferred("_more")

    target_platform = _Deferred("_more")

    # --- tables, built on first use

    def _table(self, name, build):
        t = self._cache.get(name)
        if t is None:
            t = build()
            self._cache[name] = t
        return t

    def _types_all(self):
        """Every type and attribute, in setools' order (a new list: the policy keeps the
        objects by value and the order as machine ints, see ``_type_by_value``)."""
        tv = self._type_by_value
        return [tv[v] for v in self._cache["type_order"]]

    _type_extras = _Deferred("_more")

    def _type_relations(self):
        """Per type slot: a type's attributes' values or an attribute's members' values."""
        # A row's ints are made when it is read (the type objects hold no int to share).
        return self._table("type_relations", self._db.type_relations)

    @property
    def _type_by_value(self):
        """Types and attributes indexed by value (a list: a third of a dict's size for the
        5,000 slots of a distribution policy; a value without a symbol holds None). The
        policy keeps no other list of every type: setools' order is kept as an array of
        the values (``type_order``, ``_values_array``: 8 kB for the Debian policy, where a
        list of the objects was 37 kB), from which ``types()`` and ``typeattributes()``
        build their lists when first asked."""
        by_value = self._cache.get("type_by_value")
        if by_value is not None:
            return by_value
        values, flags, aliases = self._db.type_columns()
        # Flags: 1 an attribute, 2 a permissive type (the native TYPE_IS_* bits).
        permissive = frozenset(v for v, f in zip(values, flags) if f & 2)
        self._cache["type_extras"] = (
            permissive, {values[i]: names_ for i, names_ in aliases.items()})
        by_value = [None] * (max(values, default=0) + 1)
        for v, f in zip(values, flags):
            by_value[v] = TypeAttribute(self, v) if f & 1 else Type(self, v)
        self._cache["type_order"] = _values_array(values)
        self._cache["type_by_value"] = by_value
        return by_value

    def _by_name(self, kind, items):
        return self._table(kind + "_by_name", lambda: {t.name: t for t in items()})

    def _roles_all(self):
        return self._table(
            # A role slot without a name (a gap left by the compiler) is not a symbol.
            "roles",
            # A role's type values as machine ints (``_values_array``), sorted (RoleQuery
            # searches them): an ``int`` object each (most are over 256) was 35 kB of the
            # Debian policy's roles.
            lambda: [Role(self, v, n, _values_array(sorted(ts)))
                     for v, n, ts in self._db.role_table() if n],
        )

    @property
    def _role_by_value(self):
        return self._table("role_by_value", lambda: {r._value: r for r in self._roles_all()})

    def _users_all(self):
        return self._table(
            "users",
            lambda: [User(self, *row) for row in self._db.user_table()],
        )

    def _bools_all(self):
        return self._table(
            "bools", lambda: [Boolean(self, v, s) for v, s in self._db.bool_table()]
        )

    _bool_by_value = _Deferred("_more")

    def _classes_all(self):
        return self._table(
            "classes",
            lambda: [ObjClass(self, v, n, c, ps) for v, n, c, ps in self._db.class_table()],
        )

    @property
    def _class_by_value(self):
        return self._table(
            "class_by_value", lambda: {c._value: c for c in self._classes_all()}
        )

    def _commons_all(self):
        return self._table(
            "commons",
            lambda: [Common(self, v, n, ps) for v, n, ps in self._db.common_table()],
        )

    # --- iterators

    def _types_only(self):
        """The types (not attributes or aliases) as one list, in setools' order."""
        return self._table(
            "types_only", lambda: [t for t in self._types_all() if isinstance(t, Type)])

    def _attributes_only(self):
        """The type attributes as one list, in setools' order."""
        return self._table(
            "attributes_only",
            lambda: [t for t in self._types_all() if isinstance(t, TypeAttribute)],
        )

    def types(self):
        """Every type (not attributes or aliases), in setools' order."""
        return iter(self._types_only())

    def typeattributes(self):
        """Every type attribute, in setools' order."""
        return iter(self._attributes_only())

    def roles(self):
        """Every role."""
        return iter(self._roles_all())

    def users(self):
        """Every user."""
        return iter(self._users_all())

    def bools(self):
        """Every Boolean."""
        return iter(self._bools_all())

    def classes(self):
        """Every object class."""
        return iter(self._classes_all())

    def commons(self):
        """Every common."""
        return iter(self._commons_all())

    def polcaps(self):
        """The policy capabilities, in bit order."""
        return (
            PolicyCapability(self, b, _POLCAP_NAMES[b])
            for b in self._db.polcaps()
            if b < len(_POLCAP_NAMES)
        )

    terules = _Deferred("_more")

    # --- lookups

    def _type_named(self, name):
        """``(the type or attribute named or aliased name, whether by an alias)``, or
        ``(None, False)``: found natively (a search over the names sorted once per policy),
        not in a dict of every type by name (0.1 MB)."""
        try:
            hit = self._db.type_named(name)
        except UnicodeEncodeError:  # a str no symbol can be named (lone surrogates)
            hit = None
        if hit is None:
            return None, False
        return self._type_by_value[hit[0]], hit[1]

    def lookup_type(self, name, deref=True):
        """A type by name (or, with ``deref``, alias)."""
        name = str(name)
        t, alias = self._type_named(name)
        if not isinstance(t, Type) or (alias and not deref):
            raise _exc.InvalidType("{} is not a valid type".format(name))
        return t

    def lookup_typeattr(self, name):
        """A type attribute by name."""
        t, alias = self._type_named(str(name))
        if alias or not isinstance(t, TypeAttribute):
            raise _exc.InvalidType("{} is not a valid type attribute".format(name))
        return t

    def lookup_type_or_attr(self, name, deref=True):
        """A type (or alias) or, failing that, a type attribute."""
        try:
            return self.lookup_type(name, deref)
        except _exc.InvalidType:
            return self.lookup_typeattr(name)

    def lookup_role(self, name):
        """A role by name."""
        r = self._by_name("role", self.roles).get(str(name))
        if r is None:
            raise _exc.InvalidRole("{} is not a valid role".format(name))
        return r

    lookup_user = _Deferred("_more")
    lookup_boolean = _Deferred("_more")

    def lookup_class(self, name):
        """An object class by name."""
        c = self._by_name("class", self.classes).get(str(name))
        if c is None:
            raise _exc.InvalidClass("{} is not a valid class".format(name))
        return c

    def lookup_common(self, name):
        """A common by name."""
        c = self._by_name("common", self.commons).get(str(name))
        if c is None:
            raise _exc.InvalidCommon("{} is not a valid common".format(name))
        return c


for _modules, _names in _PART_MEMBERS.items():
    for _name in _names.split():
        setattr(SELinuxPolicy, _name, _PartMember(_modules, _name))
del _modules, _names, _name

# A star import takes the names it took when the exceptions, the rarer enumerations and
# named tuples and ``_rarer``'s classes were bound here (each is made or imported by the
# import, as ``__getattr__`` makes it).
__all__ = sorted({n for n in globals() if not n.startswith("_")} | _EXCEPTIONS
                 | set(_MADE_ON_USE) | set(_PART_CLASSES["_rarer"].split()))
