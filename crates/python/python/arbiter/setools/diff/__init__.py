"""``setools.diff``: ``PolicyDifference``, the differences from a left policy to a right
one, section by section, with setools 4.4.1's attribute names, result types and matching
rules (symbols match by name; rules by their expanded key).

Implemented sections: policy properties, types, type attributes, roles, users, Booleans,
commons, classes, policy capabilities, role allows, role transitions, typebounds. The
other sections of setools (TE / xperm rules, MLS symbols and rules, constraints, defaults,
initial SIDs and the ``*con`` labeling statements) raise ``AttributeError`` naming
themselves as not implemented yet: never an empty stand-in.
"""

from .records import (  # noqa: F401
    ModifiedBoolean,
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
