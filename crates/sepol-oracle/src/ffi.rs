//! Raw declarations of the C shim in `csrc/oracle.c`.  Nothing here mirrors
//! a libsepol struct: the shim keeps libsepol's types opaque.

use std::ffi::{c_char, c_int, c_void};

/// Opaque `struct oracle` (a `policydb_t` plus a `sidtab_t`, owned by C).
#[repr(C)]
pub struct RawOracle {
    _private: [u8; 0],
}

/// Mirror of `struct oracle_avd` in the shim.
#[repr(C)]
#[derive(Default)]
pub struct RawAvd {
    pub allowed: u32,
    pub decided: u32,
    pub auditallow: u32,
    pub auditdeny: u32,
    pub seqno: u32,
    pub flags: u32,
}

extern "C" {
    pub fn oracle_init_logging(verbose: c_int) -> c_int;
    pub fn oracle_clear_error();
    pub fn oracle_last_error() -> *const c_char;
    pub fn oracle_is_static() -> c_int;
    pub fn oracle_heap_in_use() -> usize;

    pub fn oracle_read_only(data: *const c_void, len: usize, out: *mut *mut c_void) -> c_int;
    pub fn oracle_read_only_free(p: *mut c_void);
    pub fn oracle_read_only_info(
        p: *const c_void,
        policyvers: *mut u32,
        nclasses: *mut u32,
        ntypes: *mut u32,
        nbools: *mut u32,
    );

    pub fn oracle_load(data: *const c_void, len: usize, out: *mut *mut RawOracle) -> c_int;
    pub fn oracle_free(o: *mut RawOracle);
    pub fn oracle_info(
        o: *const RawOracle,
        policyvers: *mut u32,
        mls: *mut c_int,
        handle_unknown: *mut u32,
        nclasses: *mut u32,
        nbools: *mut u32,
    );
    pub fn oracle_class_value(o: *const RawOracle, name: *const c_char, value: *mut u16) -> c_int;
    pub fn oracle_class_name(o: *const RawOracle, value: u32) -> *const c_char;
    pub fn oracle_perm_value(
        o: *const RawOracle,
        tclass: u32,
        name: *const c_char,
        value: *mut u32,
    ) -> c_int;
    pub fn oracle_perm_name(o: *const RawOracle, tclass: u32, value: u32) -> *const c_char;
    pub fn oracle_class_nperms(o: *const RawOracle, tclass: u32) -> u32;
    pub fn oracle_isid_count(o: *const RawOracle) -> u32;
    pub fn oracle_isid_at(o: *const RawOracle, idx: u32, sid: *mut u32) -> c_int;
    pub fn oracle_sid_exists(o: *const RawOracle, sid: u32) -> c_int;
    pub fn oracle_sid_count(o: *const RawOracle) -> u32;

    pub fn oracle_context_to_sid(s: *const c_char, len: usize, sid: *mut u32) -> c_int;
    pub fn oracle_sid_to_context(sid: u32, out: *mut *mut c_char, len: *mut usize) -> c_int;
    pub fn oracle_free_string(s: *mut c_char);
    pub fn oracle_compute_sid(
        kind: c_int,
        ssid: u32,
        tsid: u32,
        tclass: u32,
        out: *mut u32,
    ) -> c_int;
    pub fn oracle_compute_av(
        o: *const RawOracle,
        ssid: u32,
        tsid: u32,
        tclass: u32,
        requested: u32,
        out: *mut RawAvd,
        reason: *mut u32,
        want_text: c_int,
        text: *mut *mut c_char,
    ) -> c_int;
    pub fn oracle_validate_transition(
        oldsid: u32,
        newsid: u32,
        tasksid: u32,
        tclass: u32,
        want_text: c_int,
        text: *mut *mut c_char,
    ) -> c_int;

    pub fn oracle_bool_name(o: *const RawOracle, idx: u32) -> *const c_char;
    pub fn oracle_bool_index(o: *const RawOracle, name: *const c_char, value: *mut u32) -> c_int;
    pub fn oracle_bool_get(o: *const RawOracle, value: u32) -> c_int;
    pub fn oracle_commit_bools(
        o: *mut RawOracle,
        values: *const u32,
        states: *const c_int,
        n: usize,
    ) -> c_int;
}
