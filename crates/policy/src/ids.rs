//! Typed identifiers for policy symbols.
//!
//! The format numbers every symbol from 1 ("value"); 0 means "none". Each kind gets its own
//! non-zero newtype so a class value cannot be passed where a type value is expected, and
//! `Option<Id>` costs nothing. `index()` is the 0-based position in the policy's arrays and
//! the bit position in ebitmaps.

use std::num::{NonZeroU16, NonZeroU32};

macro_rules! id_type {
    ($(#[$m:meta])* $name:ident, $nz:ty, $raw:ty) => {
        $(#[$m])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name($nz);

        impl $name {
            /// From a 1-based policy value; `None` for 0.
            #[inline]
            pub fn new(value: $raw) -> Option<Self> {
                <$nz>::new(value).map($name)
            }
            /// From a 0-based array index.
            #[inline]
            pub fn from_index(index: usize) -> Option<Self> {
                <$raw>::try_from(index + 1).ok().and_then(Self::new)
            }
            /// The 1-based value as stored in the policy.
            #[inline]
            pub fn value(self) -> $raw {
                self.0.get()
            }
            /// The 0-based index into the policy's arrays (and ebitmap bit).
            #[inline]
            pub fn index(self) -> usize {
                self.0.get() as usize - 1
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.value())
            }
        }
    };
}

id_type!(
    /// A type or attribute (16-bit: access vector table keys store types in 16 bits).
    ///
    /// Byte-aligned (packed; the niche stays, so `Option<TypeId>` is 2 bytes too), so that
    /// an access vector table key of two types, a class and a one-byte kind takes 7 bytes.
    #[repr(Rust, packed)]
    TypeId, NonZeroU16, u16);
id_type!(
    /// A security class (16-bit, as in the kernel's `u16 tclass`). Byte-aligned, as
    /// [`TypeId`] is.
    #[repr(Rust, packed)]
    ClassId, NonZeroU16, u16);

const _: () = assert!(std::mem::align_of::<TypeId>() == 1);
const _: () = assert!(std::mem::size_of::<Option<TypeId>>() == 2);
const _: () = assert!(std::mem::align_of::<ClassId>() == 1);
id_type!(
    /// A role.
    RoleId, NonZeroU32, u32);
id_type!(
    /// A user.
    UserId, NonZeroU32, u32);
id_type!(
    /// A conditional boolean.
    BoolId, NonZeroU32, u32);
id_type!(
    /// A common permission set.
    CommonId, NonZeroU32, u32);
id_type!(
    /// An MLS sensitivity.
    SensId, NonZeroU32, u32);
id_type!(
    /// An MLS category.
    CatId, NonZeroU32, u32);
