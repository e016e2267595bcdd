/*
 * arbiter.h - SELinux access decisions in userspace, from a policy file.
 *
 * libarbiter answers the questions libselinux sends to the kernel (selinux.h, avc.h)
 * from a binary policy file instead: access vectors, selinux_check_access, labels of
 * new objects, booleans, and an access vector cache with enforcing/permissive modes and
 * kernel-format audit records. Policies can be reloaded under load.
 *
 * Conventions (as libselinux):
 *  - functions return 0 on success and -1 with errno set on failure; functions that
 *    return a value return 0 (or -1 where noted) with errno set; arb_last_error() gives
 *    this thread's message for the last failing call;
 *  - NULL handles, strings and out-parameters are rejected with EINVAL (unless noted as
 *    allowed), so are strings that are not UTF-8; unknown names give EINVAL (ENOENT for
 *    booleans); a denial gives EACCES;
 *  - strings returned through char ** are malloc'ed: release them with arb_freecon()
 *    (or free()), lists with arb_freeconary();
 *  - every function is thread-safe on shared handles; freeing a handle must not race
 *    with its use; an arb_avc keeps its server alive (free them in any order).
 *
 * Kept in sync with the Rust exports by crates/capi/tests/header.rs.
 */
#ifndef ARBITER_H
#define ARBITER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct arb_server arb_server;
typedef struct arb_avc arb_avc;

typedef uint32_t arb_sid;   /* security identifier, never 0 */
typedef uint16_t arb_class; /* class value; 0 is no class */
typedef uint32_t arb_perms; /* access vector: bit i = permission value i + 1 */

/* flags of struct arb_av_decision */
#define ARB_AVD_FLAGS_PERMISSIVE 0x0001u /* the source domain is permissive */
#define ARB_AVD_FLAGS_NEVERAUDIT 0x0002u /* the source domain is never audited */

/* The kernel's struct av_decision (without `decided`, always all bits). */
struct arb_av_decision {
    uint32_t allowed;    /* granted permissions */
    uint32_t auditallow; /* audited when granted */
    uint32_t auditdeny;  /* audited when denied (a clear bit is dontaudit) */
    uint32_t seqno;      /* policy sequence number the decision was made under */
    uint32_t flags;      /* ARB_AVD_FLAGS_* */
};

/* avc_cache_stats, summed over threads. */
struct arb_avc_cache_stats {
    uint64_t entry_lookups;     /* access-vector lookups */
    uint64_t entry_hits;        /* answered from the cache */
    uint64_t entry_misses;      /* sent to the server */
    uint64_t entry_discards;    /* evicted to make room */
    uint64_t entry_allocations; /* inserted */
    uint64_t entry_frees;       /* evicted or invalidated by a reset or policy change */
    uint64_t create_lookups;    /* arb_avc_compute_create lookups */
    uint64_t create_misses;     /* ... sent to the server */
};

/* ---- errors ------------------------------------------------------------------------ */

/* This thread's message for its last failing call ("" before any); valid until the next
 * failing call on the same thread. */
const char *arb_last_error(void);

/* ---- the server: open, reload, free ------------------------------------------------ */

/* Opens a binary policy (format versions 15-35); *out receives the handle. */
int arb_server_open(const char *path, arb_server **out);
/* The same from a policy image in memory (copied). */
int arb_server_from_bytes(const void *buf, size_t len, arb_server **out);
/* A server over arbiter's small built-in demonstration policy. */
int arb_server_builtin(arb_server **out);
/* Releases a server (NULL ignored); caches opened on it keep working. */
void arb_server_free(arb_server *srv);
/* security_load_policy: replaces the policy; SIDs keep their meaning, booleans carry
 * over by name, seqno + 1. On failure the old policy stays in force. */
int arb_load_policy(arb_server *srv, const char *path);
int arb_load_policy_bytes(arb_server *srv, const void *buf, size_t len);
/* The sequence number: 1 after opening, +1 per reload or boolean commit (0 on error). */
uint64_t arb_server_seqno(arb_server *srv);
/* security_policyvers: the policy's format version, or -1. */
int arb_policyvers(arb_server *srv);
/* is_selinux_mls_enabled: 1, 0, or -1. */
int arb_mls_enabled(arb_server *srv);
/* security_deny_unknown: 1 if undefined classes/permissions are denied (or rejected),
 * 0 if allowed, -1 on error. */
int arb_deny_unknown(arb_server *srv);

/* ---- contexts, SIDs, classes, permissions ----------------------------------------- */

/* avc_context_to_sid: the SID of a context (issued on first use). */
int arb_context_to_sid(arb_server *srv, const char *ctx, arb_sid *out);
/* avc_sid_to_context: *ctx receives the context; release with arb_freecon. */
int arb_sid_to_context(arb_server *srv, arb_sid sid, char **ctx);
/* freecon / freeconary: release strings and lists from this library (NULL ignored). */
void arb_freecon(char *ctx);
void arb_freeconary(char **list);
/* security_check_context: 0 if the policy defines ctx, -1/EINVAL if not. */
int arb_check_context(arb_server *srv, const char *ctx);
/* string_to_security_class: the class value, 0/EINVAL if unknown. */
arb_class arb_string_to_class(arb_server *srv, const char *name);
/* string_to_av_perm: the permission's bit in class c, 0/EINVAL if unknown. */
arb_perms arb_string_to_perm(arb_server *srv, arb_class c, const char *name);
/* security_class_to_string: *name receives the class name (arb_freecon). */
int arb_class_to_string(arb_server *srv, arb_class c, char **name);
/* security_av_string: "{ read write }" ("null" if av is 0; unnamed bits as 0x...). */
int arb_av_string(arb_server *srv, arb_class c, arb_perms av, char **out);

/* ---- decisions from the server (uncached) ----------------------------------------- */

/* security_compute_av_flags for SIDs. */
int arb_compute_av(arb_server *srv, arb_sid s, arb_sid t, arb_class c,
                   struct arb_av_decision *out);
/* selinux_check_access: 0 if granted (or the source domain is permissive), -1/EACCES if
 * denied. An undefined class or permission gives 0 if arb_deny_unknown() is 0, else
 * -1/EINVAL. */
int arb_check_access(arb_server *srv, const char *scon, const char *tcon,
                     const char *tclass, const char *perm);
/* security_compute_create_name: type_transition (filename transitions when name is not
 * NULL; name may be NULL). */
int arb_compute_create(arb_server *srv, arb_sid s, arb_sid t, arb_class c,
                       const char *name, arb_sid *out);
/* security_compute_relabel (type_change) and security_compute_member (type_member). */
int arb_compute_relabel(arb_server *srv, arb_sid s, arb_sid t, arb_class c, arb_sid *out);
int arb_compute_member(arb_server *srv, arb_sid s, arb_sid t, arb_class c, arb_sid *out);

/* ---- booleans ---------------------------------------------------------------------- */

/* security_set_boolean: sets the pending value (ENOENT for an unknown name). */
int arb_set_boolean(arb_server *srv, const char *name, int value);
/* security_commit_booleans: publishes the pending values (seqno + 1). */
int arb_commit_booleans(arb_server *srv);
/* security_get_boolean_active / _pending: 1, 0, or -1. */
int arb_get_boolean_active(arb_server *srv, const char *name);
int arb_get_boolean_pending(arb_server *srv, const char *name);
/* security_get_boolean_names: NULL-terminated list (arb_freeconary) and its length. */
int arb_get_boolean_names(arb_server *srv, char ***names, int *len);

/* ---- the access vector cache (avc.h) --------------------------------------------- */

/* avc_open: a cache in front of srv for at most `threshold` entries in `slots` buckets
 * (a power of two, >= threshold / 4); 0 picks the default (512 entries, one bucket per
 * entry). Starts enforcing, without audit callback. */
int arb_avc_open(arb_server *srv, unsigned slots, unsigned threshold, arb_avc **out);
/* avc_has_perm: 0 if every requested permission is granted, or denied but not enforced
 * (permissive mode or permissive domain); -1/EACCES if denied (enforcing). *out (may be
 * NULL) receives the decision either way. An audited denial or auditallow'ed grant is
 * sent to the audit callback; audit_extra (may be NULL) is "key=value ..." text placed
 * after "for" in the record, read only when a record is due. */
int arb_avc_has_perm(arb_avc *avc, arb_sid s, arb_sid t, arb_class c, arb_perms requested,
                     struct arb_av_decision *out, const char *audit_extra);
/* avc_has_perm_noaudit: the same without the audit record. */
int arb_avc_has_perm_noaudit(arb_avc *avc, arb_sid s, arb_sid t, arb_class c,
                             arb_perms requested, struct arb_av_decision *out);
/* avc_compute_create: the SID of a new object, cached. */
int arb_avc_compute_create(arb_avc *avc, arb_sid s, arb_sid t, arb_class c, arb_sid *out);
/* Sets the audit callback (NULL cb removes it). It is called from whichever thread's
 * check produces a record, possibly several at once, with the record text
 * ("avc:  denied  { read } for  pid=1 scontext=... tcontext=... tclass=file
 * permissive=0"), valid during the call. It must not unwind (C++ exceptions, longjmp). */
void arb_avc_set_audit_callback(arb_avc *avc, void (*cb)(void *arg, const char *record),
                                void *arg);
/* avc_cache_stats. */
int arb_avc_cache_stats(arb_avc *avc, struct arb_avc_cache_stats *out);
/* avc_reset: drops every cached entry. */
int arb_avc_reset(arb_avc *avc);
/* security_setenforce / security_getenforce for this cache: 1 enforcing, 0 permissive
 * (denials pass and are audited once). Switching to enforcing drops permissive grants. */
int arb_avc_setenforce(arb_avc *avc, int value);
int arb_avc_getenforce(arb_avc *avc);
/* Releases a cache (NULL ignored). */
void arb_avc_free(arb_avc *avc);

#ifdef __cplusplus
}
#endif

#endif /* ARBITER_H */
