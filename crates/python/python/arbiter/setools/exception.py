"""setools 4.4.1's exception hierarchy (``setools.exception``), with the same names and
base classes, so that ``except`` clauses written against setools catch arbiter's errors.
Callers depend on the bases: sepolicy catches ``AttributeError`` to probe rule fields and
query setters surface lookups' ``ValueError``.

The classes are made on first use (PEP 562: ``exception.X``, ``from exception import
X``, ``dir()``, ``help()`` and pickles all reach ``__getattr__``), a base class with the
first of its subclasses: a script that raises none of them does not keep 50 classes
(about 75 kB of Python's memory). Each is made once and kept, so ``except`` clauses
and ``is`` compare as with classes written out."""

import builtins

# (name, base class names, docstring), in setools' order.
_CLASSES = (
    ('SEToolsException', 'Exception',
     'Base class for every setools exception.'),
    ('PolicyrepException', 'SEToolsException',
     'Base class for errors of the policy representation.'),
    ('InvalidPolicy', 'ValueError PolicyrepException',
     'A policy that cannot be loaded.'),
    ('LowLevelPolicyError', 'ValueError PolicyrepException',
     "An inconsistency in the policy's data."),
    ('MLSDisabled', 'PolicyrepException',
     'An MLS feature was used on a policy without MLS.'),
    ('InvalidSymbol', 'ValueError PolicyrepException',
     'A name that is not a symbol of the policy.'),
    ('InvalidBoolean', 'InvalidSymbol',
     'Not a Boolean of the policy.'),
    ('InvalidCategory', 'InvalidSymbol',
     'Not a category of the policy.'),
    ('InvalidClass', 'InvalidSymbol',
     'Not an object class of the policy.'),
    ('InvalidCommon', 'InvalidSymbol',
     'Not a common of the policy.'),
    ('InvalidInitialSid', 'InvalidSymbol',
     'Not an initial SID of the policy.'),
    ('InvalidLevel', 'InvalidSymbol',
     'Not a valid level.'),
    ('InvalidLevelDecl', 'InvalidSymbol',
     'Not a level declaration of the policy.'),
    ('InvalidRange', 'InvalidSymbol',
     'Not a valid range.'),
    ('InvalidRole', 'InvalidSymbol',
     'Not a role of the policy.'),
    ('InvalidSensitivity', 'InvalidSymbol',
     'Not a sensitivity of the policy.'),
    ('InvalidType', 'InvalidSymbol',
     'Not a type (or attribute) of the policy.'),
    ('InvalidUser', 'InvalidSymbol',
     'Not a user of the policy.'),
    ('InvalidBoundsType', 'InvalidSymbol',
     'Not a bounds rule type.'),
    ('InvalidConstraintType', 'InvalidSymbol',
     'Not a constraint rule type.'),
    ('InvalidDefaultValue', 'InvalidSymbol',
     'Not a default value.'),
    ('InvalidDefaultRange', 'InvalidSymbol',
     'Not a default range value.'),
    ('InvalidPermission', 'InvalidSymbol',
     'Not a permission of the class(es) concerned.'),
    ('NoDefaults', 'InvalidSymbol',
     'A class without default_* statements.'),
    ('InvalidRuleType', 'InvalidSymbol',
     'Not a rule type of the rule family.'),
    ('InvalidDefaultType', 'InvalidRuleType',
     'Not a default_* rule type.'),
    ('InvalidFSUseType', 'InvalidRuleType',
     'Not an fs_use_* rule type.'),
    ('InvalidMLSRuleType', 'InvalidRuleType',
     'Not an MLS rule type.'),
    ('InvalidRBACRuleType', 'InvalidRuleType',
     'Not an RBAC rule type.'),
    ('InvalidTERuleType', 'InvalidRuleType',
     'Not a TE rule type.'),
    ('SymbolUseError', 'AttributeError PolicyrepException',
     'An attribute a symbol of this kind does not have.'),
    ('RuleUseError', 'SymbolUseError',
     'An attribute a rule of this type does not have.'),
    ('ConstraintUseError', 'SymbolUseError',
     'An attribute a constraint of this type does not have.'),
    ('NoStatement', 'SymbolUseError',
     'The object has no policy statement.'),
    ('NoCommon', 'AttributeError PolicyrepException',
     'The class inherits no common.'),
    ('RuleNotConditional', 'AttributeError PolicyrepException',
     'The rule is not in a conditional block.'),
    ('TERuleNoFilename', 'AttributeError PolicyrepException',
     'The type_transition rule has no file name.'),
    ('InvalidCheckerConfig', 'SEToolsException',
     'A policy checker configuration that cannot be used (sechecker exits 2).'),
    ('InvalidCheckerModule', 'InvalidCheckerConfig',
     'A section without ``check_type``, or with one sechecker does not have.'),
    ('InvalidCheckOption', 'InvalidCheckerConfig',
     'An option the check type does not take.'),
    ('InvalidCheckValue', 'InvalidCheckerConfig',
     'An option value that names nothing in the policy, or a check missing criteria.'),
    ('PermissionMapException', 'SEToolsException',
     'Base class for permission map errors.'),
    ('PermissionMapParseError', 'PermissionMapException',
     'A permission map file that does not parse.'),
    ('RuleTypeError', 'PermissionMapException',
     'A rule type a permission map cannot weigh.'),
    ('UnmappedClass', 'PermissionMapException',
     'A class the permission map lacks.'),
    ('UnmappedPermission', 'PermissionMapException',
     'A permission the permission map lacks.'),
)
_SPEC = {name: (bases, doc) for name, bases, doc in _CLASSES}
__all__ = [name for name, _, _ in _CLASSES]


def __getattr__(name):
    spec = _SPEC.get(name)
    if spec is None:
        raise AttributeError("module {!r} has no attribute {!r}".format(__name__, name))
    bases, doc = spec
    cls = type(name, tuple(
        globals()[b] if b in globals() else __getattr__(b) if b in _SPEC
        else getattr(builtins, b) for b in bases.split()),
        {"__doc__": doc, "__module__": __name__, "__qualname__": name})
    # The first made is kept, should two threads make one at once.
    return globals().setdefault(name, cls)


def __dir__():
    return sorted(set(globals()) | set(_SPEC))
