"""setools 4.4.1's Python API on arbiter's query layer.

Scripts written against setools run unchanged when ``setools`` is served by this package:
``python3 -m arbiter.setools PROGRAM [ARGS...]`` for a whole program, or
``arbiter.setools.install()`` from inside one (see docs/setools.md). The real setools is
never replaced on disk: only the importing process sees arbiter's.

Implemented: ``SELinuxPolicy`` (types, attributes, roles, users, Booleans, classes,
commons, policy capabilities, conditionals, TE rules, lookups, counts), the TE rule classes
and ``TERuleQuery`` (in Rust), ``TypeQuery``, ``TypeAttributeQuery``, ``RoleQuery``,
``UserQuery`` (without MLS criteria), ``RBACRuleQuery``, ``BoundsQuery``, ``BoolQuery``, ``ObjClassQuery``, ``CommonQuery``,
``PolCapQuery``. The other names of setools raise ``AttributeError`` (and their modules
``ModuleNotFoundError``) saying they are not implemented yet; the analyses
(``DomainTransitionAnalysis``, ``InfoFlowAnalysis``, ``PermissionMap``, ``PolicyChecker``)
will join as the modules ``dta``, ``infoflow``, ``permmap`` and ``checker``.
"""

from . import exception  # noqa: F401
from . import policyrep  # noqa: F401
from .policyrep import (  # noqa: F401
    AVRule,
    AVRuleXperm,
    Boolean,
    Bounds,
    BoundsRuletype,
    Common,
    Conditional,
    ConstraintRuletype,
    DefaultRangeValue,
    DefaultRuletype,
    DefaultValue,
    FileNameTERule,
    FSUseRuletype,
    HandleUnknown,
    IbpkeyconRange,
    IoctlSet,
    IomemconRange,
    IoportconRange,
    Level,
    MLSRuletype,
    NodeconIPVersion,
    ObjClass,
    RoleAllow,
    RoleTransition,
    PolicyCapability,
    PolicyTarget,
    PortconProtocol,
    PortconRange,
    RBACRuletype,
    Range,
    Role,
    SELinuxPolicy,
    TERule,
    TERuletype,
    TruthTableRow,
    Type,
    TypeAttribute,
    User,
)
from .query import PolicyQuery  # noqa: F401
from .boolquery import BoolQuery  # noqa: F401
from .boundsquery import BoundsQuery  # noqa: F401
from .commonquery import CommonQuery  # noqa: F401
from .objclassquery import ObjClassQuery  # noqa: F401
from .polcapquery import PolCapQuery  # noqa: F401
from .rbacrulequery import RBACRuleQuery  # noqa: F401
from .rolequery import RoleQuery  # noqa: F401
from .terulequery import TERuleQuery  # noqa: F401
from .typeattrquery import TypeAttributeQuery  # noqa: F401
from .typequery import TypeQuery  # noqa: F401
from .userquery import UserQuery  # noqa: F401
from .diff import PolicyDifference  # noqa: F401
from ._finder import install, uninstall, NOT_IMPLEMENTED_MODULES  # noqa: F401

__version__ = "4.4.1"

# setools 4.4.1's public names this package does not provide yet; asking for one is an
# AttributeError that says so (never a silent stand-in).
NOT_IMPLEMENTED_NAMES = frozenset(
    """AnyConstraint AnyDefault AnyRBACRule AnyTERule Category
    CategoryQuery Constraint ConstraintQuery Context Default DefaultQuery DefaultRange
    Devicetreecon DevicetreeconQuery DomainEntrypoint DomainTransition
    DomainTransitionAnalysis FSUse FSUseQuery Genfscon GenfsconQuery Ibendportcon
    IbendportconQuery Ibpkeycon IbpkeyconQuery InfoFlowAnalysis InitialSID InitialSIDQuery
    Iomemcon IomemconQuery Ioportcon IoportconQuery LevelDecl MLSRule MLSRuleQuery Mapping
    Netifcon NetifconQuery Nodecon NodeconQuery Pcidevicecon PcideviceconQuery
    PermissionMap Pirqcon PirqconQuery PolicyChecker Portcon PortconQuery
    RuleWeight Sensitivity SensitivityQuery
    Validatetrans xperm_str_to_tuple_ranges""".split()
)


def __getattr__(name):
    if name in NOT_IMPLEMENTED_NAMES or name in NOT_IMPLEMENTED_MODULES:
        raise AttributeError(
            "setools.{0} is not implemented by arbiter.setools yet".format(name)
        )
    raise AttributeError("module 'setools' has no attribute '{0}'".format(name))
