"""``setools.diff``: ``PolicyDifference``, the differences from a left policy to a right
one, section by section, with setools 4.4.1's attribute names, result types and matching
rules (symbols match by name; rules by their expanded key).

Implemented sections: policy properties, types, type attributes, roles, users, Booleans,
commons, classes, policy capabilities, role allows, role transitions, typebounds,
categories, sensitivities, level declarations, range transitions, constraints (the four
kinds), defaults, initial SIDs and the labeling statements (fs_use, genfscon, netifcon,
nodecon, portcon, ibpkeycon, ibendportcon) and the TE rule sections (AV, xperm and
type_* rules, see ``terules``).
"""

from .records import (  # noqa: F401
    ModifiedAVRule,
    ModifiedTERule,
    ModifiedBoolean,
    ModifiedCategory,
    ModifiedDefault,
    ModifiedFSUse,
    ModifiedGenfscon,
    ModifiedIbendportcon,
    ModifiedIbpkeycon,
    ModifiedInitialSID,
    ModifiedLevelDecl,
    ModifiedMLSRule,
    ModifiedNetifcon,
    ModifiedNodecon,
    ModifiedPortcon,
    ModifiedSensitivity,
    ModifiedBounds,
    ModifiedCommon,
    ModifiedObjClass,
    ModifiedProperty,
    ModifiedRBACRule,
    ModifiedRole,
    ModifiedType,
    ModifiedTypeAttribute,
    ModifiedUser,
)
from .policydiff import PolicyDifference  # noqa: F401

__all__ = ["PolicyDifference"]
