"""setools 4.4.1's exception hierarchy (``setools.exception``), with the same names and
base classes, so that ``except`` clauses written against setools catch arbiter's errors.
Callers depend on the bases: sepolicy catches ``AttributeError`` to probe rule fields and
query setters surface lookups' ``ValueError``."""


class SEToolsException(Exception):
    """Base class for every setools exception."""


class PolicyrepException(SEToolsException):
    """Base class for errors of the policy representation."""


class InvalidPolicy(ValueError, PolicyrepException):
    """A policy that cannot be loaded."""


class LowLevelPolicyError(ValueError, PolicyrepException):
    """An inconsistency in the policy's data."""


class MLSDisabled(PolicyrepException):
    """An MLS feature was used on a policy without MLS."""


class InvalidSymbol(ValueError, PolicyrepException):
    """A name that is not a symbol of the policy."""


class InvalidBoolean(InvalidSymbol):
    """Not a Boolean of the policy."""


class InvalidCategory(InvalidSymbol):
    """Not a category of the policy."""


class InvalidClass(InvalidSymbol):
    """Not an object class of the policy."""


class InvalidCommon(InvalidSymbol):
    """Not a common of the policy."""


class InvalidInitialSid(InvalidSymbol):
    """Not an initial SID of the policy."""


class InvalidLevel(InvalidSymbol):
    """Not a valid level."""


class InvalidLevelDecl(InvalidSymbol):
    """Not a level declaration of the policy."""


class InvalidRange(InvalidSymbol):
    """Not a valid range."""


class InvalidRole(InvalidSymbol):
    """Not a role of the policy."""


class InvalidSensitivity(InvalidSymbol):
    """Not a sensitivity of the policy."""


class InvalidType(InvalidSymbol):
    """Not a type (or attribute) of the policy."""


class InvalidUser(InvalidSymbol):
    """Not a user of the policy."""


class InvalidBoundsType(InvalidSymbol):
    """Not a bounds rule type."""


class InvalidConstraintType(InvalidSymbol):
    """Not a constraint rule type."""


class InvalidDefaultValue(InvalidSymbol):
    """Not a default value."""


class InvalidDefaultRange(InvalidSymbol):
    """Not a default range value."""


class InvalidPermission(InvalidSymbol):
    """Not a permission of the class(es) concerned."""


class NoDefaults(InvalidSymbol):
    """A class without default_* statements."""


class InvalidRuleType(InvalidSymbol):
    """Not a rule type of the rule family."""


class InvalidDefaultType(InvalidRuleType):
    """Not a default_* rule type."""


class InvalidFSUseType(InvalidRuleType):
    """Not an fs_use_* rule type."""


class InvalidMLSRuleType(InvalidRuleType):
    """Not an MLS rule type."""


class InvalidRBACRuleType(InvalidRuleType):
    """Not an RBAC rule type."""


class InvalidTERuleType(InvalidRuleType):
    """Not a TE rule type."""


class SymbolUseError(AttributeError, PolicyrepException):
    """An attribute a symbol of this kind does not have."""


class RuleUseError(SymbolUseError):
    """An attribute a rule of this type does not have."""


class ConstraintUseError(SymbolUseError):
    """An attribute a constraint of this type does not have."""


class NoStatement(SymbolUseError):
    """The object has no policy statement."""


class NoCommon(AttributeError, PolicyrepException):
    """The class inherits no common."""


class RuleNotConditional(AttributeError, PolicyrepException):
    """The rule is not in a conditional block."""


class TERuleNoFilename(AttributeError, PolicyrepException):
    """The type_transition rule has no file name."""


class InvalidCheckerConfig(SEToolsException):
    """A PolicyChecker configuration error."""


class InvalidCheckerModule(InvalidCheckerConfig):
    """An unknown PolicyChecker module."""


class InvalidCheckOption(InvalidCheckerConfig):
    """An unknown option of a check."""


class InvalidCheckValue(InvalidCheckerConfig):
    """A bad value of a check option."""


class PermissionMapException(SEToolsException):
    """Base class for permission map errors."""


class PermissionMapParseError(PermissionMapException):
    """A permission map file that does not parse."""


class RuleTypeError(PermissionMapException):
    """A rule type a permission map cannot weigh."""


class UnmappedClass(PermissionMapException):
    """A class the permission map lacks."""


class UnmappedPermission(PermissionMapException):
    """A permission the permission map lacks."""


class InvalidCheckerConfig(SEToolsException):
    """A policy checker configuration that cannot be used (sechecker exits 2)."""


class InvalidCheckerModule(InvalidCheckerConfig):
    """A section without ``check_type``, or with one sechecker does not have."""


class InvalidCheckOption(InvalidCheckerConfig):
    """An option the check type does not take."""


class InvalidCheckValue(InvalidCheckerConfig):
    """An option value that names nothing in the policy, or a check missing criteria."""
