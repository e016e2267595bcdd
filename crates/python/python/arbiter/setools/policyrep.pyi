# Type stubs for arbiter.setools.policyrep (setools 4.4.1's setools.policyrep on arbiter).
# tests/test_setools_stubs.py checks that every class here exists with these members and
# that every public class of the module is here.

import enum
import ipaddress
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, \
    Optional, Tuple, Union

from .exception import *  # noqa: F401,F403

class PolicyEnum(enum.Enum):
    @classmethod
    def lookup(cls, value: Any) -> "PolicyEnum": ...

class TERuletype(PolicyEnum):
    allow: int
    neverallow: int
    auditallow: int
    dontaudit: int
    allowxperm: int
    neverallowxperm: int
    auditallowxperm: int
    dontauditxperm: int
    type_transition: int
    type_change: int
    type_member: int

class RBACRuletype(PolicyEnum):
    allow: int
    role_transition: int

class MLSRuletype(PolicyEnum):
    range_transition: int

class HandleUnknown(PolicyEnum):
    deny: int
    allow: int
    reject: int

class PolicyTarget(PolicyEnum):
    selinux: int
    xen: int

class ConstraintRuletype(PolicyEnum):
    constrain: int
    mlsconstrain: int
    validatetrans: int
    mlsvalidatetrans: int

class DefaultRuletype(PolicyEnum):
    default_user: int
    default_role: int
    default_type: int
    default_range: int

class DefaultValue(PolicyEnum):
    source: int
    target: int
    glblub: int

class DefaultRangeValue(PolicyEnum):
    low: int
    high: int
    low_high: int

class BoundsRuletype(PolicyEnum):
    typebounds: int

class FSUseRuletype(PolicyEnum):
    fs_use_xattr: int
    fs_use_trans: int
    fs_use_task: int

class PortconProtocol(PolicyEnum):
    tcp: int
    udp: int
    dccp: int
    sctp: int

class NodeconIPVersion(PolicyEnum):
    ipv4: int
    ipv6: int

class TruthTableRow(NamedTuple):
    values: Dict[str, bool]
    result: bool

class PortconRange(NamedTuple):
    low: int
    high: int

class IbpkeyconRange(NamedTuple):
    low: int
    high: int

class IoportconRange(NamedTuple):
    low: int
    high: int

class IomemconRange(NamedTuple):
    low: int
    high: int

class PolicyObject:
    policy: "SELinuxPolicy"
    def statement(self) -> str: ...
    def __lt__(self, other: Any) -> bool: ...

class PolicySymbol(PolicyObject):
    name: str

class BaseType(PolicySymbol):
    def expand(self) -> Iterator["Type"]: ...

class Type(BaseType):
    @property
    def ispermissive(self) -> int: ...
    def aliases(self) -> Iterator[str]: ...
    def attributes(self) -> Iterator["TypeAttribute"]: ...

class TypeAttribute(BaseType):
    @property
    def ispermissive(self) -> int: ...
    def aliases(self) -> Iterator[str]: ...
    def attributes(self) -> Iterator["TypeAttribute"]: ...
    def __iter__(self) -> Iterator[Type]: ...
    def __len__(self) -> int: ...

class Role(PolicySymbol):
    def types(self) -> FrozenSet[Type]: ...
    @property
    def dominated_roles(self) -> FrozenSet["Role"]: ...
    def expand(self) -> Iterator["Role"]: ...

class User(PolicySymbol):
    @property
    def roles(self) -> FrozenSet[Role]: ...
    @property
    def mls_level(self) -> "Level": ...
    @property
    def mls_range(self) -> "Range": ...

class Boolean(PolicySymbol):
    state: bool

class Common(PolicySymbol):
    perms: FrozenSet[str]

class ObjClass(PolicySymbol):
    perms: FrozenSet[str]
    @property
    def common(self) -> Common: ...
    def constraints(self) -> Iterator["Constraint"]: ...
    def validatetrans(self) -> Iterator["Validatetrans"]: ...
    def defaults(self) -> Iterator[Union["Default", "DefaultRange"]]: ...

class PolicyCapability(PolicySymbol): ...

class Category(PolicySymbol):
    def aliases(self) -> Iterator[str]: ...

class Sensitivity(PolicySymbol):
    def aliases(self) -> Iterator[str]: ...
    def level_decl(self) -> "LevelDecl": ...
    def __le__(self, other: "Sensitivity") -> bool: ...
    def __ge__(self, other: "Sensitivity") -> bool: ...
    def __gt__(self, other: "Sensitivity") -> bool: ...

class BaseMLSLevel(PolicyObject):
    sensitivity: Sensitivity
    def categories(self) -> Iterator[Category]: ...

class LevelDecl(BaseMLSLevel): ...

class Level(BaseMLSLevel):
    def __ge__(self, other: BaseMLSLevel) -> bool: ...
    def __gt__(self, other: BaseMLSLevel) -> bool: ...
    def __le__(self, other: BaseMLSLevel) -> bool: ...
    def __xor__(self, other: BaseMLSLevel) -> bool: ...

class Range(PolicyObject):
    low: Level
    high: Level
    def __contains__(self, other: Level) -> bool: ...

class ConditionalOperator(PolicyObject):
    @property
    def precedence(self) -> int: ...
    @property
    def unary(self) -> bool: ...
    def evaluate(self, *operands: bool) -> bool: ...

class Conditional(PolicyObject):
    @property
    def booleans(self) -> FrozenSet[Boolean]: ...
    def expression(self) -> List[Union[Boolean, ConditionalOperator]]: ...
    def evaluate(self, **kwargs: bool) -> bool: ...
    def truth_table(self) -> List[TruthTableRow]: ...
    def true_rules(self) -> Iterator["BaseTERule"]: ...
    def false_rules(self) -> Iterator["BaseTERule"]: ...

class IoctlSet(FrozenSet[int]):
    def __format__(self, spec: str) -> str: ...
    def ranges(self) -> int: ...

class PolicyRule(PolicyObject):
    ruletype: PolicyEnum
    source: Any
    target: Any
    origin: Optional["PolicyRule"]
    extended: bool
    @property
    def conditional(self) -> Conditional: ...
    @property
    def conditional_block(self) -> bool: ...
    def enabled(self, **kwargs: bool) -> bool: ...
    def expand(self) -> Iterator["PolicyRule"]: ...

class BaseTERule(PolicyRule):
    tclass: ObjClass
    @property
    def filename(self) -> str: ...

class AVRule(BaseTERule):
    @property
    def perms(self) -> FrozenSet[str]: ...
    @property
    def default(self) -> Type: ...
    def derive_expanded(self, source: BaseType, target: BaseType,
                        perms: Iterable[str]) -> "AVRule": ...

class AVRuleXperm(AVRule):
    @property
    def xperm_type(self) -> str: ...

class TERule(BaseTERule):
    @property
    def perms(self) -> FrozenSet[str]: ...
    @property
    def default(self) -> Type: ...

class FileNameTERule(TERule): ...

class RoleAllow(PolicyRule):
    @property
    def tclass(self) -> ObjClass: ...
    @property
    def default(self) -> Role: ...

class RoleTransition(PolicyRule):
    tclass: ObjClass
    default: Role

class MLSRule(PolicyRule):
    tclass: ObjClass
    @property
    def default(self) -> Range: ...

class Bounds(PolicyObject):
    ruletype: BoundsRuletype
    parent: Type
    child: Type

class ConstraintExprNode(PolicyObject):
    mls: bool
    roles: bool
    types: bool
    users: bool
    @property
    def names(self) -> FrozenSet[Any]: ...
    @property
    def symbol_type(self) -> int: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...

class ConstraintExpression(PolicyObject):
    mls: bool
    users: FrozenSet[User]
    roles: FrozenSet[Role]
    types: FrozenSet[BaseType]
    def infix(self) -> List[Any]: ...
    def __iter__(self) -> Iterator[Any]: ...

class BaseConstraint(PolicyObject):
    ruletype: ConstraintRuletype
    tclass: ObjClass
    expression: ConstraintExpression
    @property
    def perms(self) -> FrozenSet[str]: ...

class Constraint(BaseConstraint):
    perms: FrozenSet[str]

class Validatetrans(BaseConstraint): ...

class Default(PolicyObject):
    ruletype: DefaultRuletype
    tclass: ObjClass
    @property
    def default(self) -> DefaultValue: ...

class DefaultRange(Default):
    default_range: Optional[DefaultRangeValue]

class Context(PolicyObject):
    user: User
    role: Role
    type_: Type
    @property
    def range_(self) -> Range: ...

class Ocontext(PolicyObject):
    context: Context

class InitialSID(Ocontext):
    name: str

class FSUse(Ocontext):
    ruletype: FSUseRuletype
    fs: str

class GenfsFiletype(int): ...

class Genfscon(Ocontext):
    fs: str
    path: str
    filetype: GenfsFiletype
    tclass: Optional[ObjClass]

class Portcon(Ocontext):
    ports: PortconRange
    protocol: PortconProtocol

class Netifcon(Ocontext):
    netif: str
    packet: Context

class Nodecon(Ocontext):
    ip_version: NodeconIPVersion
    network: Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

class Ibpkeycon(Ocontext):
    subnet_prefix: ipaddress.IPv6Address
    pkeys: IbpkeyconRange

class Ibendportcon(Ocontext):
    name: str
    port: int

class Pirqcon(Ocontext):
    irq: int

class Iomemcon(Ocontext):
    addr: IomemconRange

class Ioportcon(Ocontext):
    ports: IoportconRange

class Pcidevicecon(Ocontext):
    device: int

class Devicetreecon(Ocontext):
    path: str

class SELinuxPolicy:
    def __init__(self, policyfile: Optional[str] = None) -> None: ...
    @classmethod
    def from_bytes(cls, data: bytes) -> "SELinuxPolicy": ...
    @property
    def path(self) -> Optional[str]: ...
    @property
    def version(self) -> int: ...
    @property
    def mls(self) -> bool: ...
    @property
    def handle_unknown(self) -> HandleUnknown: ...
    @property
    def target_platform(self) -> PolicyTarget: ...
    def types(self) -> Iterator[Type]: ...
    def typeattributes(self) -> Iterator[TypeAttribute]: ...
    def roles(self) -> Iterator[Role]: ...
    def users(self) -> Iterator[User]: ...
    def bools(self) -> Iterator[Boolean]: ...
    def classes(self) -> Iterator[ObjClass]: ...
    def commons(self) -> Iterator[Common]: ...
    def polcaps(self) -> Iterator[PolicyCapability]: ...
    def conditionals(self) -> Iterator[Conditional]: ...
    def bounds(self) -> Iterator[Bounds]: ...
    def rbacrules(self) -> Iterator[Union[RoleAllow, RoleTransition]]: ...
    def terules(self) -> Iterator[BaseTERule]: ...
    def sensitivities(self) -> Iterator[Sensitivity]: ...
    def categories(self) -> Iterator[Category]: ...
    def levels(self) -> Iterator[LevelDecl]: ...
    def mlsrules(self) -> Iterator[MLSRule]: ...
    def constraints(self) -> Iterator[BaseConstraint]: ...
    def defaults(self) -> Iterator[Default]: ...
    def initialsids(self) -> Iterator[InitialSID]: ...
    def fs_uses(self) -> Iterator[FSUse]: ...
    def genfscons(self) -> Iterator[Genfscon]: ...
    def portcons(self) -> Iterator[Portcon]: ...
    def netifcons(self) -> Iterator[Netifcon]: ...
    def nodecons(self) -> Iterator[Nodecon]: ...
    def ibpkeycons(self) -> Iterator[Ibpkeycon]: ...
    def ibendportcons(self) -> Iterator[Ibendportcon]: ...
    def pirqcons(self) -> Iterator[Pirqcon]: ...
    def iomemcons(self) -> Iterator[Iomemcon]: ...
    def ioportcons(self) -> Iterator[Ioportcon]: ...
    def pcidevicecons(self) -> Iterator[Pcidevicecon]: ...
    def devicetreecons(self) -> Iterator[Devicetreecon]: ...
    def lookup_type(self, name: str, deref: bool = True) -> Type: ...
    def lookup_typeattr(self, name: str) -> TypeAttribute: ...
    def lookup_type_or_attr(self, name: str, deref: bool = True) -> BaseType: ...
    def lookup_role(self, name: str) -> Role: ...
    def lookup_user(self, name: str) -> User: ...
    def lookup_boolean(self, name: str) -> Boolean: ...
    def lookup_class(self, name: str) -> ObjClass: ...
    def lookup_common(self, name: str) -> Common: ...
    def lookup_sensitivity(self, name: str, deref: bool = True) -> Sensitivity: ...
    def lookup_category(self, name: str, deref: bool = True) -> Category: ...
    def lookup_level(self, level: str) -> Level: ...
    def lookup_range(self, range_: str) -> Range: ...
    def lookup_initialsid(self, name: str) -> InitialSID: ...
    type_count: int
    type_attribute_count: int
    role_count: int
    user_count: int
    boolean_count: int
    class_count: int
    common_count: int
    conditional_count: int
    polcap_count: int
    permissives_count: int
    role_allow_count: int
    role_transition_count: int
    range_transition_count: int
    permission_count: int
    allow_count: int
    auditallow_count: int
    dontaudit_count: int
    allowxperm_count: int
    auditallowxperm_count: int
    dontauditxperm_count: int
    type_transition_count: int
    type_change_count: int
    type_member_count: int
    neverallow_count: int
    neverallowxperm_count: int
    typebounds_count: int
    category_count: int
    level_count: int
    constraint_count: int
    mlsconstraint_count: int
    validatetrans_count: int
    mlsvalidatetrans_count: int
    default_count: int
    initialsids_count: int
    fs_use_count: int
    genfscon_count: int
    portcon_count: int
    netifcon_count: int
    nodecon_count: int
    ibpkeycon_count: int
    ibendportcon_count: int
    pirqcon_count: int
    iomemcon_count: int
    ioportcon_count: int
    pcidevicecon_count: int
    devicetreecon_count: int
