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

import importlib

from ._finder import install, uninstall, NOT_IMPLEMENTED_MODULES  # noqa: F401

__version__ = "4.4.1"

# Every public name of setools 4.4.1's package, by the submodule that defines it here.
# Nothing below is imported until it is first asked for (PEP 562: ``setools.X`` and
# ``from setools import X`` both end in ``__getattr__``), so a script pays in import time
# and memory only for what it uses: the analyses, ``PolicyDifference`` and the checker
# (and the standard library modules they need) stay unloaded unless named.
_EXPORTS = {
    "policyrep": """
        AVRule AVRuleXperm Boolean Bounds BoundsRuletype Category Common Conditional
        Constraint ConstraintRuletype Context Default DefaultRange DefaultRangeValue
        DefaultRuletype DefaultValue Devicetreecon FSUse FSUseRuletype FileNameTERule
        Genfscon HandleUnknown Ibendportcon Ibpkeycon IbpkeyconRange InitialSID IoctlSet
        Iomemcon IomemconRange Ioportcon IoportconRange Level LevelDecl MLSRule MLSRuletype
        Netifcon Nodecon NodeconIPVersion ObjClass Pcidevicecon Pirqcon PolicyCapability
        PolicyTarget Portcon PortconProtocol PortconRange RBACRuletype Range Role RoleAllow
        RoleTransition SELinuxPolicy Sensitivity TERule TERuletype TruthTableRow Type
        TypeAttribute User Validatetrans""",
    "query": "PolicyQuery",
    "util": "xperm_str_to_tuple_ranges",
    "boolquery": "BoolQuery",
    "boundsquery": "BoundsQuery",
    "categoryquery": "CategoryQuery",
    "commonquery": "CommonQuery",
    "constraintquery": "ConstraintQuery",
    "defaultquery": "DefaultQuery",
    "devicetreeconquery": "DevicetreeconQuery",
    "fsusequery": "FSUseQuery",
    "genfsconquery": "GenfsconQuery",
    "ibendportconquery": "IbendportconQuery",
    "ibpkeyconquery": "IbpkeyconQuery",
    "initsidquery": "InitialSIDQuery",
    "iomemconquery": "IomemconQuery",
    "ioportconquery": "IoportconQuery",
    "mlsrulequery": "MLSRuleQuery",
    "netifconquery": "NetifconQuery",
    "nodeconquery": "NodeconQuery",
    "objclassquery": "ObjClassQuery",
    "pcideviceconquery": "PcideviceconQuery",
    "pirqconquery": "PirqconQuery",
    "polcapquery": "PolCapQuery",
    "portconquery": "PortconQuery",
    "rbacrulequery": "RBACRuleQuery",
    "rolequery": "RoleQuery",
    "sensitivityquery": "SensitivityQuery",
    "terulequery": "TERuleQuery",
    "typeattrquery": "TypeAttributeQuery",
    "typequery": "TypeQuery",
    "userquery": "UserQuery",
    "checker": "PolicyChecker",
    "diff": "PolicyDifference",
    "permmap": "Mapping PermissionMap RuleWeight",
    "infoflow": "InfoFlowAnalysis",
    "dta": "DomainEntrypoint DomainTransition DomainTransitionAnalysis",
}
_SOURCE = {name: module for module, names in _EXPORTS.items() for name in names.split()}

# The submodules, reachable as attributes (``setools.policyrep``) as after setools' eager
# imports; importing one binds it here by itself.
_SUBMODULES = frozenset(_EXPORTS) | {
    "exception", "descriptors", "mixins", "_analysis", "_constraint", "_labeling", "_mls",
    "_rarer", "_xen",
}

__all__ = sorted(_SOURCE) + ["exception"]

# setools 4.4.1's public names this package does not provide yet; asking for one is an
# AttributeError that says so (never a silent stand-in).
NOT_IMPLEMENTED_NAMES = frozenset(
    """AnyConstraint AnyDefault AnyRBACRule AnyTERule""".split()
)


def __getattr__(name):
    module = _SOURCE.get(name)
    if module is not None:
        value = getattr(importlib.import_module("." + module, __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module("." + name, __name__)
    if name in NOT_IMPLEMENTED_NAMES or name in NOT_IMPLEMENTED_MODULES:
        raise AttributeError(
            "setools.{0} is not implemented by arbiter.setools yet".format(name)
        )
    raise AttributeError("module 'setools' has no attribute '{0}'".format(name))


def __dir__():
    return sorted(set(globals()) | set(_SOURCE) | _SUBMODULES)
