"""The result records of setools 4.4.1's PolicyDifference (``setools.diff``), with setools'
names and field orders, so that scripts unpacking or printing them behave the same."""

from typing import NamedTuple, Any, Set


class ModifiedType(NamedTuple):
    added_attributes: Set[Any]
    removed_attributes: Set[Any]
    matched_attributes: Set[Any]
    modified_permissive: bool
    permissive: bool
    added_aliases: Set[str]
    removed_aliases: Set[str]
    matched_aliases: Set[str]


class ModifiedTypeAttribute(NamedTuple):
    added_types: Set[Any]
    removed_types: Set[Any]
    matched_types: Set[Any]


class ModifiedRole(NamedTuple):
    added_types: Set[Any]
    removed_types: Set[Any]
    matched_types: Set[Any]


class ModifiedUser(NamedTuple):
    added_roles: Set[Any]
    removed_roles: Set[Any]
    matched_roles: Set[Any]
    added_level: Any
    removed_level: Any
    added_range: Any
    removed_range: Any


class ModifiedBoolean(NamedTuple):
    added_state: bool
    removed_state: bool


class ModifiedCommon(NamedTuple):
    added_perms: Set[str]
    removed_perms: Set[str]
    matched_perms: Set[str]


class ModifiedObjClass(NamedTuple):
    added_perms: Set[str]
    removed_perms: Set[str]
    matched_perms: Set[str]


class ModifiedProperty(NamedTuple):
    property: str
    added: Any
    removed: Any


class ModifiedRBACRule(NamedTuple):
    rule: Any
    added_default: Any
    removed_default: Any


class ModifiedBounds(NamedTuple):
    rule: Any
    added_bound: Any
    removed_bound: Any


class ModifiedCategory(NamedTuple):
    added_aliases: Set[str]
    removed_aliases: Set[str]
    matched_aliases: Set[str]


class ModifiedSensitivity(NamedTuple):
    added_aliases: Set[str]
    removed_aliases: Set[str]
    matched_aliases: Set[str]


class ModifiedLevelDecl(NamedTuple):
    level: Any
    added_categories: Set[Any]
    removed_categories: Set[Any]
    matched_categories: Set[Any]


class ModifiedMLSRule(NamedTuple):
    rule: Any
    added_default: Any
    removed_default: Any


class ModifiedInitialSID(NamedTuple):
    added_context: Any
    removed_context: Any


class ModifiedDefault(NamedTuple):
    rule: Any
    added_default: Any
    removed_default: Any
    added_default_range: Any
    removed_default_range: Any


class ModifiedFSUse(NamedTuple):
    rule: Any
    added_context: Any
    removed_context: Any


class ModifiedGenfscon(NamedTuple):
    rule: Any
    added_context: Any
    removed_context: Any


class ModifiedNetifcon(NamedTuple):
    rule: Any
    added_context: Any
    removed_context: Any
    added_packet: Any
    removed_packet: Any


class ModifiedNodecon(NamedTuple):
    rule: Any
    added_context: Any
    removed_context: Any


class ModifiedPortcon(NamedTuple):
    rule: Any
    added_context: Any
    removed_context: Any


class ModifiedIbpkeycon(NamedTuple):
    rule: Any
    added_context: Any
    removed_context: Any


class ModifiedIbendportcon(NamedTuple):
    rule: Any
    added_context: Any
    removed_context: Any


class ModifiedAVRule(NamedTuple):
    rule: Any
    added_perms: Any
    removed_perms: Any
    matched_perms: Any


class ModifiedTERule(NamedTuple):
    rule: Any
    added_default: Any
    removed_default: Any
