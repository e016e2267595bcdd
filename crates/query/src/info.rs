//! seinfo
