"""setools 4.4.1's Python API on arbiter's query layer.

Scripts written against setools run unchanged when ``setools`` is served by this package:
``python3 -m arbiter.setools PROGRAM [ARGS...]`` for a whole program, or
``arbiter.setools.install()`` from inside one (see docs/setools.md). The real setools is
never replaced on disk: only the importing process sees arbiter's.

Implemented: ``SELinuxPolicy`` (types, attributes, roles, users, Booleans, classes,
commons, policy capabilities, conditionals, TE rules, lookups, counts), the TE rule classes
and ``TERuleQuery`` (in Rust), ``TypeQuery``, ``TypeAttributeQuery``, ``RoleQuery``,
``UserQuery``, ``RBACRuleQuery``, ``BoundsQuery``, ``BoolQuery``, ``ObjClassQuery``, ``CommonQuery``,
``PolCapQuery``; the MLS symbols and rules (``Sensitivity``, ``Category``, ``LevelDecl``,
``Level``, ``Range``, ``MLSRule``, ``SensitivityQuery``, ``CategoryQuery``,
``MLSRuleQuery``), constraints and defaults (``ConstraintQuery``, ``DefaultQuery``), and
the initial SIDs, contexts and every SELinux ``*con`` with their queries. The other names of setools raise ``AttributeError`` (and their modules
``ModuleNotFoundError``) saying they are not implemented yet. The analyses:
``InfoFlowAnalysis`` is in ``infoflow`` and ``DomainTransitionAnalysis`` in ``dta`` (without
``shortest_path``, nor the flows into a type, which raise ``NotImplementedError``); ``PermissionMap`` is in ``permmap``; ``PolicyChecker`` is in ``checker``;
``PolicyDifference`` (``diff``) has every section.
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
from .policyrep import (  # noqa: F401  (MLS, labeling, constraints: lane pymls)
    Category, Constraint, Context, Default, DefaultRange, FSUse, Genfscon, Ibendportcon,
    Ibpkeycon, InitialSID, LevelDecl, MLSRule, Netifcon, Nodecon, Portcon, Sensitivity,
    Validatetrans,
)
from .policyrep import (  # noqa: F401  (Xen labeling)
    Devicetreecon, Iomemcon, Ioportcon, Pcidevicecon, Pirqcon,
)
from .util import xperm_str_to_tuple_ranges  # noqa: F401
from .categoryquery import CategoryQuery  # noqa: F401
from .constraintquery import ConstraintQuery  # noqa: F401
from .defaultquery import DefaultQuery  # noqa: F401
from .fsusequery import FSUseQuery  # noqa: F401
from .genfsconquery import GenfsconQuery  # noqa: F401
from .ibendportconquery import IbendportconQuery  # noqa: F401
from .ibpkeyconquery import IbpkeyconQuery  # noqa: F401
from .initsidquery import InitialSIDQuery  # noqa: F401
from .mlsrulequery import MLSRuleQuery  # noqa: F401
from .netifconquery import NetifconQuery  # noqa: F401
from .nodeconquery import NodeconQuery  # noqa: F401
from .portconquery import PortconQuery  # noqa: F401
from .devicetreeconquery import DevicetreeconQuery  # noqa: F401
from .iomemconquery import IomemconQuery  # noqa: F401
from .ioportconquery import IoportconQuery  # noqa: F401
from .pcideviceconquery import PcideviceconQuery  # noqa: F401
from .pirqconquery import PirqconQuery  # noqa: F401
from .sensitivityquery import SensitivityQuery  # noqa: F401
from .checker import PolicyChecker  # noqa: F401
from .diff import PolicyDifference  # noqa: F401
from .permmap import Mapping, PermissionMap, RuleWeight  # noqa: F401
from .infoflow import InfoFlowAnalysis  # noqa: F401
from .dta import DomainEntrypoint, DomainTransition, DomainTransitionAnalysis  # noqa: F401
from ._finder import install, uninstall, NOT_IMPLEMENTED_MODULES  # noqa: F401

__version__ = "4.4.1"

# setools 4.4.1's public names this package does not provide yet; asking for one is an
# AttributeError that says so (never a silent stand-in).
NOT_IMPLEMENTED_NAMES = frozenset(
    """AnyConstraint AnyDefault AnyRBACRule AnyTERule""".split()
)


def __getattr__(name):
    if name in NOT_IMPLEMENTED_NAMES or name in NOT_IMPLEMENTED_MODULES:
        raise AttributeError(
            "setools.{0} is not implemented by arbiter.setools yet".format(name)
        )
    raise AttributeError("module 'setools' has no attribute '{0}'".format(name))
