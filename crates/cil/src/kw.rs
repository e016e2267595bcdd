//! CIL keywords, interned first so a statement's keyword is found by symbol id.

use crate::intern::{Interner, Sym};

macro_rules! keywords {
    ($($v:ident = $s:literal,)*) => {
        /// Every statement keyword and reserved word of CIL 3.4.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        #[repr(u8)]
        #[allow(clippy::enum_variant_names)]
        pub enum Kw { $($v,)* }
        /// Keyword texts in `Kw` order (their symbol ids are their positions).
        pub const KEYWORDS: &[&str] = &[$($s,)*];
        const ALL: &[Kw] = &[$(Kw::$v,)*];
    };
}

keywords! {
    Block = "block", BlockAbstract = "blockabstract", BlockInherit = "blockinherit",
    In = "in", Macro = "macro", Call = "call", Optional = "optional",
    Tunable = "tunable", TunableIf = "tunableif", Boolean = "boolean", BooleanIf = "booleanif",
    True = "true", False = "false",
    Type = "type", TypeAttribute = "typeattribute", TypeAttributeSet = "typeattributeset",
    ExpandTypeAttribute = "expandtypeattribute",
    TypeAlias = "typealias", TypeAliasActual = "typealiasactual", TypeBounds = "typebounds",
    TypePermissive = "typepermissive",
    Role = "role", RoleAttribute = "roleattribute", RoleAttributeSet = "roleattributeset",
    RoleType = "roletype", RoleAllow = "roleallow", RoleTransition = "roletransition",
    RoleBounds = "rolebounds",
    User = "user", UserAttribute = "userattribute", UserAttributeSet = "userattributeset",
    UserRole = "userrole", UserLevel = "userlevel", UserRange = "userrange",
    UserBounds = "userbounds", UserPrefix = "userprefix", SelinuxUser = "selinuxuser",
    SelinuxUserDefault = "selinuxuserdefault",
    Common = "common", Class = "class", ClassOrder = "classorder", ClassCommon = "classcommon",
    ClassMap = "classmap", ClassMapping = "classmapping", ClassPermission = "classpermission",
    ClassPermissionSet = "classpermissionset",
    Sid = "sid", SidOrder = "sidorder", SidContext = "sidcontext",
    Sensitivity = "sensitivity", SensitivityAlias = "sensitivityalias",
    SensitivityAliasActual = "sensitivityaliasactual", SensitivityOrder = "sensitivityorder",
    SensitivityCategory = "sensitivitycategory",
    Category = "category", CategoryAlias = "categoryalias",
    CategoryAliasActual = "categoryaliasactual", CategoryOrder = "categoryorder",
    CategorySet = "categoryset",
    Level = "level", LevelRange = "levelrange", Context = "context", IpAddr = "ipaddr",
    PermissionX = "permissionx",
    Allow = "allow", AuditAllow = "auditallow", DontAudit = "dontaudit", NeverAllow = "neverallow",
    AllowX = "allowx", AuditAllowX = "auditallowx", DontAuditX = "dontauditx",
    NeverAllowX = "neverallowx",
    TypeTransition = "typetransition", TypeChange = "typechange", TypeMember = "typemember",
    RangeTransition = "rangetransition",
    Constrain = "constrain", MlsConstrain = "mlsconstrain", ValidateTrans = "validatetrans",
    MlsValidateTrans = "mlsvalidatetrans",
    FileCon = "filecon", FsUse = "fsuse", GenfsCon = "genfscon", PortCon = "portcon",
    NodeCon = "nodecon", NetifCon = "netifcon", IbPkeyCon = "ibpkeycon",
    IbEndportCon = "ibendportcon", PirqCon = "pirqcon", IomemCon = "iomemcon",
    IoportCon = "ioportcon", PciDeviceCon = "pcidevicecon", DeviceTreeCon = "devicetreecon",
    DefaultUser = "defaultuser", DefaultRole = "defaultrole", DefaultType = "defaulttype",
    DefaultRange = "defaultrange",
    HandleUnknown = "handleunknown", Mls = "mls", PolicyCap = "policycap",
    // Reserved words and operators.
    SelfKw = "self", ObjectR = "object_r", And = "and", Or = "or", Xor = "xor", Not = "not",
    All = "all", Eq = "eq", Neq = "neq", Dom = "dom", Domby = "domby", Incomp = "incomp",
    Range = "range", Star = "*",
    U1 = "u1", U2 = "u2", U3 = "u3", R1 = "r1", R2 = "r2", R3 = "r3", T1 = "t1", T2 = "t2",
    T3 = "t3", L1 = "l1", L2 = "l2", H1 = "h1", H2 = "h2",
    Tcp = "tcp", Udp = "udp", Dccp = "dccp", Sctp = "sctp",
    Xattr = "xattr", Task = "task", Trans = "trans",
    Any = "any", File = "file", Dir = "dir", Char = "char",
    Socket = "socket", Pipe = "pipe", Symlink = "symlink",
    Source = "source", Target = "target", Low = "low", High = "high", LowHigh = "low-high",
    Glblub = "glblub", Unordered = "unordered", Deny = "deny", Reject = "reject",
    Ioctl = "ioctl", Ipv4 = "ipv4", Ipv6 = "ipv6",
}

impl Kw {
    /// Interns every keyword into a fresh interner so that `Kw as Sym` is its id.
    pub fn interner() -> Interner {
        let mut i = Interner::default();
        for (n, k) in KEYWORDS.iter().enumerate() {
            let id = i.intern(k.as_bytes());
            debug_assert_eq!(id as usize, n);
        }
        i
    }

    /// The keyword a symbol spells, if any. (`block` the file type and `block` the statement
    /// share a spelling; the statement wins, callers that want the file type compare syms.)
    #[inline]
    pub fn of(sym: Sym) -> Option<Kw> {
        ALL.get(sym as usize).copied()
    }

    #[inline]
    pub fn sym(self) -> Sym {
        self as u8 as Sym
    }

    pub fn text(self) -> &'static str {
        KEYWORDS[self as usize]
    }

    /// The av and type rules: what a `booleanif` may hold besides `call`, and what makes an
    /// avtab entry (lowering reserves the table by counting them).
    #[inline]
    pub fn is_te_rule(self) -> bool {
        matches!(
            self,
            Kw::Allow
                | Kw::AuditAllow
                | Kw::DontAudit
                | Kw::TypeTransition
                | Kw::TypeChange
                | Kw::TypeMember
        )
    }
}

/// The statements that declare a name or contain others and refer to no name resolution
/// must find: the resolver's check passes them ([`crate::resolve`]) and libsepol's
/// resolution passes resolve nothing in them (pass 0 of [`crate::optional_log`]). A
/// pattern, not a method, so that both `match`es keep one jump table.
macro_rules! declaration_kws {
    () => {
        Kw::Type
            | Kw::TypeAttribute
            | Kw::TypeAlias
            | Kw::Role
            | Kw::RoleAttribute
            | Kw::User
            | Kw::UserAttribute
            | Kw::Common
            | Kw::Class
            | Kw::ClassMap
            | Kw::ClassPermission
            | Kw::Boolean
            | Kw::Tunable
            | Kw::Sensitivity
            | Kw::SensitivityAlias
            | Kw::Category
            | Kw::CategoryAlias
            | Kw::Sid
            | Kw::PolicyCap
            | Kw::IpAddr
            | Kw::Optional
            | Kw::Block
            | Kw::BlockAbstract
            | Kw::In
            | Kw::Macro
    };
}
pub(crate) use declaration_kws;

/// The statements that declare a name in a block's table as their first argument: a macro
/// body's declarations ([`crate::blocks`]) and the names qualification rewrites to their
/// block's prefix ([`crate::qualify`]), each site adding its own extras. A pattern, like
/// [`declaration_kws`], so that `match`es and `matches!` keep their jump tables.
macro_rules! named_declaration_kws {
    () => {
        Kw::Type
            | Kw::TypeAttribute
            | Kw::TypeAlias
            | Kw::Role
            | Kw::RoleAttribute
            | Kw::User
            | Kw::UserAttribute
            | Kw::Sensitivity
            | Kw::SensitivityAlias
            | Kw::Category
            | Kw::CategoryAlias
            | Kw::Sid
            | Kw::ClassPermission
            | Kw::Boolean
            | Kw::Common
            | Kw::Class
            | Kw::ClassMap
            | Kw::CategorySet
            | Kw::Level
            | Kw::LevelRange
            | Kw::Context
            | Kw::IpAddr
            | Kw::PermissionX
    };
}
pub(crate) use named_declaration_kws;
