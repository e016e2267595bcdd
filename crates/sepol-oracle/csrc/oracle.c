/*
 * sepol-oracle C shim: a deliberately thin layer over libsepol 3.4 so the
 * Rust side never has to mirror libsepol's (large, version-dependent) struct
 * layouts.  Every decision is made by libsepol's own services layer
 * (sepol_compute_av_reason_buffer, sepol_transition_sid, ...); the shim only
 * loads the policy, installs it, and translates names/values.
 *
 * Thread-safety: none here.  libsepol's services layer is process-global
 * state; the Rust wrapper serialises every call into this file behind one
 * mutex and allows at most one installed oracle at a time.
 *
 * Build modes:
 *   ORACLE_STATIC  linked against libsepol.a: internal symbols
 *                  (policydb_read, policydb_load_isids, evaluate_conds,
 *                  sepol_set_policydb, sepol_compat_handle, ...) are usable.
 *   otherwise      linked against libsepol.so, whose version script hides
 *                  those symbols; only the plain read benchmark works and
 *                  oracle_load() reports -ENOSYS.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sepol/debug.h>
#include <sepol/handle.h>
#include <sepol/policydb.h>
#include <sepol/policydb/conditional.h>
#include <sepol/policydb/ebitmap.h>
#include <sepol/policydb/hashtab.h>
#include <sepol/policydb/policydb.h>
#include <sepol/policydb/services.h>
#include <sepol/policydb/sidtab.h>

/* ------------------------------------------------------------------------ */
/* Message capture                                                          */
/* ------------------------------------------------------------------------ */

#define ERRBUF_SIZE 4096
static char errbuf[ERRBUF_SIZE];
static size_t errbuf_used;
static int verbose_msgs;
static sepol_handle_t *own_handle; /* used for policy_file reads */

void oracle_clear_error(void)
{
	errbuf[0] = '\0';
	errbuf_used = 0;
}

const char *oracle_last_error(void)
{
	return errbuf;
}

static void append_error(const char *msg)
{
	size_t len = strlen(msg);
	if (errbuf_used && errbuf_used + 2 < ERRBUF_SIZE) {
		memcpy(errbuf + errbuf_used, "; ", 2);
		errbuf_used += 2;
	}
	if (errbuf_used + len >= ERRBUF_SIZE)
		len = ERRBUF_SIZE - 1 - errbuf_used;
	memcpy(errbuf + errbuf_used, msg, len);
	errbuf_used += len;
	errbuf[errbuf_used] = '\0';
}

static void msg_callback(void *arg __attribute__((unused)),
			 sepol_handle_t *h, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int level = sepol_msg_get_level(h);

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);

	if (level == SEPOL_MSG_ERR || level == SEPOL_MSG_WARN)
		append_error(line);
	if (verbose_msgs)
		fprintf(stderr, "%s.%s: %s\n", sepol_msg_get_channel(h),
			sepol_msg_get_fname(h), line);
}

#ifdef ORACLE_STATIC
/* libsepol's handle for ERR(NULL, ...): not exported from libsepol.so, but
 * present in libsepol.a.  Its type is incomplete here, which is fine: only
 * its address is taken. */
extern sepol_handle_t sepol_compat_handle;
#endif

/* Route libsepol's messages into errbuf; echo them to stderr iff verbose. */
int oracle_init_logging(int verbose)
{
	verbose_msgs = verbose;
	if (!own_handle) {
		own_handle = sepol_handle_create();
		if (!own_handle)
			return -ENOMEM;
	}
	sepol_msg_set_callback(own_handle, msg_callback, NULL);
#ifdef ORACLE_STATIC
	sepol_msg_set_callback(&sepol_compat_handle, msg_callback, NULL);
#else
	/* Cannot reach the compat handle: all we can do is silence it. */
	sepol_debug(verbose);
#endif
	return 0;
}

int oracle_is_static(void)
{
#ifdef ORACLE_STATIC
	return 1;
#else
	return 0;
#endif
}

/* ------------------------------------------------------------------------ */
/* Heap accounting (glibc)                                                  */
/* ------------------------------------------------------------------------ */

size_t oracle_heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* ------------------------------------------------------------------------ */
/* Bare policydb_read (load benchmark)                                      */
/* ------------------------------------------------------------------------ */

#ifdef ORACLE_STATIC
/* policydb_init + policydb_read on a memory buffer; nothing else. */
int oracle_read_only(const void *data, size_t len, void **out)
{
	struct policy_file pf;
	policydb_t *p;

	*out = NULL;
	p = malloc(sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (policydb_init(p)) {
		free(p);
		return -ENOMEM;
	}
	policy_file_init(&pf);
	pf.type = PF_USE_MEMORY;
	pf.data = (char *)data; /* read-only use by next_entry() */
	pf.len = len;
	pf.handle = own_handle;
	if (policydb_read(p, &pf, 0)) {
		policydb_destroy(p);
		free(p);
		return -EINVAL;
	}
	*out = p;
	return 0;
}

void oracle_read_only_free(void *p)
{
	if (!p)
		return;
	policydb_destroy(p);
	free(p);
}
#else
/* Same work through the exported wrappers: sepol_policydb_create() is
 * policydb_init(), sepol_policydb_read() is policydb_read(..., 0). */
int oracle_read_only(const void *data, size_t len, void **out)
{
	sepol_policy_file_t *pf = NULL;
	sepol_policydb_t *p = NULL;
	int rc;

	*out = NULL;
	if (sepol_policy_file_create(&pf))
		return -ENOMEM;
	if (sepol_policydb_create(&p)) {
		sepol_policy_file_free(pf);
		return -ENOMEM;
	}
	sepol_policy_file_set_mem(pf, (char *)data, len);
	sepol_policy_file_set_handle(pf, own_handle);
	rc = sepol_policydb_read(p, pf);
	sepol_policy_file_free(pf);
	if (rc) {
		sepol_policydb_free(p);
		return -EINVAL;
	}
	*out = p;
	return 0;
}

void oracle_read_only_free(void *p)
{
	if (p)
		sepol_policydb_free(p);
}
#endif

/* Cheap sanity probes on a bare policydb (both build modes: in the dynamic
 * build the pointer is a sepol_policydb_t, whose first and only member is a
 * policydb_t). */
void oracle_read_only_info(const void *vp, uint32_t *policyvers,
			   uint32_t *nclasses, uint32_t *ntypes,
			   uint32_t *nbools)
{
	const policydb_t *p = vp;
	*policyvers = p->policyvers;
	*nclasses = p->p_classes.nprim;
	*ntypes = p->p_types.nprim;
	*nbools = p->p_bools.nprim;
}

/* ------------------------------------------------------------------------ */
/* The oracle proper                                                        */
/* ------------------------------------------------------------------------ */

#ifdef ORACLE_STATIC

struct oracle {
	policydb_t policydb;
	sidtab_t sidtab;
};

/* What the services layer points at while no oracle is installed: an empty
 * (but initialised) policydb and an empty sidtab, so a stray call fails
 * cleanly instead of touching freed memory. */
static policydb_t idle_policydb;
static int idle_policydb_ready;
static sidtab_t idle_sidtab;

static void install_idle(void)
{
	if (!idle_policydb_ready) {
		if (policydb_init(&idle_policydb) == 0)
			idle_policydb_ready = 1;
	}
	sepol_set_policydb(&idle_policydb);
	sepol_set_sidtab(&idle_sidtab);
}

int oracle_load(const void *data, size_t len, struct oracle **out)
{
	struct policy_file pf;
	struct oracle *o;

	*out = NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	if (policydb_init(&o->policydb)) {
		free(o);
		return -ENOMEM;
	}
	policy_file_init(&pf);
	pf.type = PF_USE_MEMORY;
	pf.data = (char *)data;
	pf.len = len;
	pf.handle = own_handle;
	if (policydb_read(&o->policydb, &pf, 0)) {
		policydb_destroy(&o->policydb);
		free(o);
		return -EINVAL;
	}
	if (o->policydb.policy_type != POLICY_KERN) {
		append_error("not a kernel (binary) policy");
		policydb_destroy(&o->policydb);
		free(o);
		return -EINVAL;
	}
	/* policydb_load_isids() starts with sepol_sidtab_init(). */
	if (policydb_load_isids(&o->policydb, &o->sidtab)) {
		sepol_sidtab_destroy(&o->sidtab);
		policydb_destroy(&o->policydb);
		free(o);
		return -ENOMEM;
	}
	sepol_set_policydb(&o->policydb);
	sepol_set_sidtab(&o->sidtab);
	*out = o;
	return 0;
}

void oracle_free(struct oracle *o)
{
	if (!o)
		return;
	install_idle();
	sepol_sidtab_destroy(&o->sidtab);
	policydb_destroy(&o->policydb);
	free(o);
}

/* --- policy facts -------------------------------------------------------- */

void oracle_info(const struct oracle *o, uint32_t *policyvers, int *mls,
		 uint32_t *handle_unknown, uint32_t *nclasses,
		 uint32_t *nbools)
{
	*policyvers = o->policydb.policyvers;
	*mls = o->policydb.mls;
	*handle_unknown = o->policydb.handle_unknown;
	*nclasses = o->policydb.p_classes.nprim;
	*nbools = o->policydb.p_bools.nprim;
}

int oracle_class_value(const struct oracle *o, const char *name,
		       uint16_t *value)
{
	class_datum_t *c = hashtab_search(o->policydb.p_classes.table, name);
	if (!c)
		return -ENOENT;
	*value = (uint16_t)c->s.value;
	return 0;
}

const char *oracle_class_name(const struct oracle *o, uint32_t value)
{
	if (value == 0 || value > o->policydb.p_classes.nprim)
		return NULL;
	return o->policydb.p_class_val_to_name[value - 1];
}

static class_datum_t *class_of(const struct oracle *o, uint32_t tclass)
{
	if (tclass == 0 || tclass > o->policydb.p_classes.nprim)
		return NULL;
	return o->policydb.class_val_to_struct[tclass - 1];
}

/* Permission value (bit index + 1), class-specific table first, then the
 * inherited common: the same lookup order as sepol_string_to_av_perm(). */
int oracle_perm_value(const struct oracle *o, uint32_t tclass,
		      const char *name, uint32_t *value)
{
	class_datum_t *c = class_of(o, tclass);
	perm_datum_t *perm;

	if (!c)
		return -EINVAL;
	perm = hashtab_search(c->permissions.table, name);
	if (!perm && c->comdatum)
		perm = hashtab_search(c->comdatum->permissions.table, name);
	if (!perm)
		return -ENOENT;
	*value = perm->s.value;
	return 0;
}

struct perm_find {
	uint32_t value;
	const char *name;
};

static int perm_find_cb(hashtab_key_t k, hashtab_datum_t d, void *arg)
{
	struct perm_find *f = arg;
	if (((perm_datum_t *)d)->s.value == f->value) {
		f->name = k;
		return 1;
	}
	return 0;
}

const char *oracle_perm_name(const struct oracle *o, uint32_t tclass,
			     uint32_t value)
{
	class_datum_t *c = class_of(o, tclass);
	struct perm_find f = { value, NULL };

	if (!c || value == 0)
		return NULL;
	hashtab_map(c->permissions.table, perm_find_cb, &f);
	if (!f.name && c->comdatum)
		hashtab_map(c->comdatum->permissions.table, perm_find_cb, &f);
	return f.name;
}

/* Number of permission values in use by the class (commons included). */
uint32_t oracle_class_nperms(const struct oracle *o, uint32_t tclass)
{
	class_datum_t *c = class_of(o, tclass);
	uint32_t n;

	if (!c)
		return 0;
	n = c->permissions.nprim;
	if (c->comdatum && c->comdatum->permissions.nprim > n)
		n = c->comdatum->permissions.nprim;
	return n;
}

/* Initial SIDs, in policy order.  A kernel policy carries no initial SID
 * names (ocontext u.name stays NULL), only numbers and contexts. */
uint32_t oracle_isid_count(const struct oracle *o)
{
	uint32_t n = 0;
	ocontext_t *c;
	for (c = o->policydb.ocontexts[OCON_ISID]; c; c = c->next)
		n++;
	return n;
}

int oracle_isid_at(const struct oracle *o, uint32_t idx, uint32_t *sid)
{
	ocontext_t *c = o->policydb.ocontexts[OCON_ISID];
	while (c && idx--)
		c = c->next;
	if (!c)
		return -ENOENT;
	*sid = c->sid[0];
	return 0;
}

/* Whether `sid` is really in the table (sepol_sidtab_search() silently
 * remaps unknown SIDs to SECINITSID_UNLABELED). */
int oracle_sid_exists(const struct oracle *o, uint32_t sid)
{
	sidtab_node_t *cur;
	if (!o->sidtab.htable)
		return 0;
	for (cur = o->sidtab.htable[sid & SIDTAB_HASH_MASK]; cur;
	     cur = cur->next)
		if (cur->sid == sid)
			return 1;
	return 0;
}

uint32_t oracle_sid_count(const struct oracle *o)
{
	return o->sidtab.nel;
}

/* --- SIDs and contexts (libsepol services layer) ------------------------- */

int oracle_context_to_sid(const char *s, size_t len, uint32_t *sid)
{
	sepol_security_id_t out = 0;
	int rc = sepol_context_to_sid(s, len, &out);
	*sid = out;
	return rc;
}

/* *out is malloc'd by libsepol; release with oracle_free_string(). */
int oracle_sid_to_context(uint32_t sid, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	return sepol_sid_to_context(sid, out, len);
}

void oracle_free_string(char *s)
{
	free(s);
}

/* kind: 0 = transition, 1 = member, 2 = change */
int oracle_compute_sid(int kind, uint32_t ssid, uint32_t tsid,
		       uint32_t tclass, uint32_t *out)
{
	sepol_security_id_t sid = 0;
	int rc;

	switch (kind) {
	case 0:
		rc = sepol_transition_sid(ssid, tsid, tclass, &sid);
		break;
	case 1:
		rc = sepol_member_sid(ssid, tsid, tclass, &sid);
		break;
	case 2:
		rc = sepol_change_sid(ssid, tsid, tclass, &sid);
		break;
	default:
		return -EINVAL;
	}
	*out = sid;
	return rc;
}

struct oracle_avd {
	uint32_t allowed;
	uint32_t decided;
	uint32_t auditallow;
	uint32_t auditdeny;
	uint32_t seqno;
	uint32_t flags;
};

#define ORACLE_AVD_FLAGS_PERMISSIVE 0x0001

/*
 * Access decision via sepol_compute_av_reason_buffer().  want_text: 0 = no
 * reason text, 1 = denied constraints only, 2 = SHOW_GRANTED as well.
 * *text is malloc'd by libsepol (may stay NULL when no constraint was
 * evaluated); release with oracle_free_string().
 *
 * libsepol 3.4's struct sepol_av_decision has no `flags`; the kernel sets
 * AVD_FLAGS_PERMISSIVE when the source type is in the permissive map, and
 * that is the one thing computed here rather than by libsepol.
 */
int oracle_compute_av(const struct oracle *o, uint32_t ssid, uint32_t tsid,
		      uint32_t tclass, uint32_t requested,
		      struct oracle_avd *out, uint32_t *reason, int want_text,
		      char **text)
{
	struct sepol_av_decision avd;
	unsigned int r = 0;
	context_struct_t *scon;
	int rc;

	memset(&avd, 0, sizeof(avd));
	memset(out, 0, sizeof(*out));
	*reason = 0;
	*text = NULL;
	if (tclass > UINT16_MAX)
		return -EINVAL;
	if (want_text)
		rc = sepol_compute_av_reason_buffer(
			ssid, tsid, (sepol_security_class_t)tclass, requested,
			&avd, &r, text, want_text == 2 ? SHOW_GRANTED : 0);
	else
		rc = sepol_compute_av_reason(ssid, tsid,
					     (sepol_security_class_t)tclass,
					     requested, &avd, &r);
	if (rc)
		return rc;

	out->allowed = avd.allowed;
	out->decided = avd.decided;
	out->auditallow = avd.auditallow;
	out->auditdeny = avd.auditdeny;
	out->seqno = avd.seqno;
	*reason = r;

	scon = sepol_sidtab_search((sidtab_t *)&o->sidtab, ssid);
	if (scon && ebitmap_get_bit(&o->policydb.permissive_map, scon->type))
		out->flags |= ORACLE_AVD_FLAGS_PERMISSIVE;
	return 0;
}

/* 0 = allowed, -EPERM = denied by a validatetrans/mlsvalidatetrans rule,
 * other negative = error (e.g. -EINVAL for an unknown class). */
int oracle_validate_transition(uint32_t oldsid, uint32_t newsid,
			       uint32_t tasksid, uint32_t tclass,
			       int want_text, char **text)
{
	char *buf = NULL;
	int rc;

	*text = NULL;
	if (tclass > UINT16_MAX)
		return -EINVAL;
	rc = sepol_validate_transition_reason_buffer(
		oldsid, newsid, tasksid, (sepol_security_class_t)tclass, &buf,
		want_text == 2 ? SHOW_GRANTED : 0);
	if (want_text)
		*text = buf;
	else
		free(buf);
	return rc;
}

/* --- booleans ------------------------------------------------------------ */

const char *oracle_bool_name(const struct oracle *o, uint32_t idx)
{
	if (idx >= o->policydb.p_bools.nprim)
		return NULL;
	return o->policydb.p_bool_val_to_name[idx];
}

/* Bool value (1-based, as in cond expressions) for a name. */
int oracle_bool_index(const struct oracle *o, const char *name,
		      uint32_t *value)
{
	cond_bool_datum_t *b = hashtab_search(o->policydb.p_bools.table, name);
	if (!b)
		return -ENOENT;
	*value = b->s.value;
	return 0;
}

int oracle_bool_get(const struct oracle *o, uint32_t value)
{
	if (value == 0 || value > o->policydb.p_bools.nprim)
		return -ENOENT;
	return o->policydb.bool_val_to_struct[value - 1]->state ? 1 : 0;
}

/* Set datum states for the given bools, then re-evaluate every conditional
 * node, as the kernel's security_set_bools() does. */
int oracle_commit_bools(struct oracle *o, const uint32_t *values,
			const int *states, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (values[i] == 0 || values[i] > o->policydb.p_bools.nprim)
			return -ENOENT;
	for (i = 0; i < n; i++)
		o->policydb.bool_val_to_struct[values[i] - 1]->state =
			states[i] ? 1 : 0;
	return evaluate_conds(&o->policydb);
}

#else /* !ORACLE_STATIC */

/* libsepol.so hides policydb_read/policydb_load_isids/evaluate_conds/
 * sepol_set_policydb/sepol_set_sidtab/sepol_transition_sid, so a faithful
 * oracle cannot be assembled from it.  The Rust side never calls any other
 * oracle_* function once oracle_load() has failed. */
struct oracle;

int oracle_load(const void *data __attribute__((unused)),
		size_t len __attribute__((unused)), struct oracle **out)
{
	*out = NULL;
	append_error("sepol-oracle was built against libsepol.so, which hides "
		     "policydb_read/policydb_load_isids/evaluate_conds/"
		     "sepol_set_policydb; install the static libsepol.a "
		     "(apt-get install -y libsepol-dev) and rebuild");
	return -ENOSYS;
}

/* Link-time stand-ins for the rest of the API (never reached: no oracle
 * can be created in this build). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define STUB(ret, val, name, ...) ret name(__VA_ARGS__) { return val; }
void oracle_free(struct oracle *o) {}
void oracle_info(const struct oracle *o, uint32_t *policyvers, int *mls,
		 uint32_t *handle_unknown, uint32_t *nclasses, uint32_t *nbools)
{
	*policyvers = *handle_unknown = *nclasses = *nbools = 0;
	*mls = 0;
}
void oracle_free_string(char *s) { free(s); }
STUB(int, -ENOSYS, oracle_class_value, const struct oracle *o, const char *n, uint16_t *v)
STUB(const char *, NULL, oracle_class_name, const struct oracle *o, uint32_t v)
STUB(int, -ENOSYS, oracle_perm_value, const struct oracle *o, uint32_t c, const char *n, uint32_t *v)
STUB(const char *, NULL, oracle_perm_name, const struct oracle *o, uint32_t c, uint32_t v)
STUB(uint32_t, 0, oracle_class_nperms, const struct oracle *o, uint32_t c)
STUB(uint32_t, 0, oracle_isid_count, const struct oracle *o)
STUB(int, -ENOSYS, oracle_isid_at, const struct oracle *o, uint32_t i, uint32_t *s)
STUB(int, 0, oracle_sid_exists, const struct oracle *o, uint32_t s)
STUB(uint32_t, 0, oracle_sid_count, const struct oracle *o)
STUB(int, -ENOSYS, oracle_context_to_sid, const char *s, size_t l, uint32_t *o)
STUB(int, -ENOSYS, oracle_sid_to_context, uint32_t s, char **o, size_t *l)
STUB(int, -ENOSYS, oracle_compute_sid, int k, uint32_t s, uint32_t t, uint32_t c, uint32_t *o)
STUB(int, -ENOSYS, oracle_compute_av, const struct oracle *o, uint32_t s, uint32_t t,
     uint32_t c, uint32_t r, void *out, uint32_t *rs, int w, char **x)
STUB(int, -ENOSYS, oracle_validate_transition, uint32_t o, uint32_t n, uint32_t t,
     uint32_t c, int w, char **x)
STUB(const char *, NULL, oracle_bool_name, const struct oracle *o, uint32_t i)
STUB(int, -ENOSYS, oracle_bool_index, const struct oracle *o, const char *n, uint32_t *v)
STUB(int, -ENOSYS, oracle_bool_get, const struct oracle *o, uint32_t v)
STUB(int, -ENOSYS, oracle_commit_bools, struct oracle *o, const uint32_t *v, const int *s, size_t n)

#endif /* ORACLE_STATIC */
