//! The header: magic, target string, version, configuration, table counts, policy
//! capabilities, permissive and neveraudit maps.

use crate::cursor::Cursor;
use crate::ebitmap::Ebitmap;
use crate::error::{PolicyError, Result};
use crate::policy::HandleUnknown;

pub(crate) struct Header {
    pub version: u32,
    pub mls: bool,
    pub handle_unknown: HandleUnknown,
    pub sym_num: u32,
    pub ocon_num: u32,
    pub policycaps: Ebitmap,
    pub permissive: Ebitmap,
    pub neveraudit: Ebitmap,
}

pub(crate) fn read(c: &mut Cursor<'_>) -> Result<Header> {
    let _ = c;
    Err(PolicyError::Inconsistent {
        what: "header".into(),
        detail: "reader not written yet".into(),
    })
}
