/*
 * Random access queries over one binary policy, with each context's SID in both arbiter
 * and libsepol (libsepol's context-to-SID is a linear scan, so SIDs are made once).
 * Shared by the differential test (sepol_diff.c) and the benchmark (bench/bench.c).
 *
 * Contexts come from the policy itself, read with libsepol's public policydb API: for
 * each user and each of its roles, random types the role authorises, at a few MLS levels;
 * objects as system_u:object_r:TYPE:LEVEL. Queries mix (0) keys of allow rules
 * (attributes expanded to a random member type), (1) uniform subject x object type pairs
 * and classes, and (2) subject x subject pairs (process constraints, MLS), half, a quarter
 * and a quarter. Contexts valid for one engine and not the other are counted. Booleans
 * can be set at random in both engines (queries_flip_booleans).
 */
#ifndef ARBITER_TEST_QUERIES_H
#define ARBITER_TEST_QUERIES_H

#include <arbiter.h>
#include <errno.h>
#include <sepol/boolean_record.h>
#include <sepol/booleans.h>
#include <sepol/debug.h>
#include <sepol/handle.h>
#include <sepol/policydb.h>
#include <sepol/policydb/ebitmap.h>
#include <sepol/policydb/policydb.h>
#include <sepol/policydb/services.h>
#include <sepol/sepol.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static uint64_t next_random(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
    return n ? (uint32_t)(next_random() % n) : 0;
}

struct ctx {
    arb_sid arb;
    sepol_security_id_t sepol;
    char *text;
};

static arb_server *srv;
static policydb_t *pdb;
static long validity_mismatches, invalid_both;

/* Both SIDs of a context; 0 if both reject it. A disagreement counts as a mismatch. */
static int make_ctx(const char *text, struct ctx *out)
{
    arb_sid a = 0;
    sepol_security_id_t s = 0;
    int ra = arb_context_to_sid(srv, text, &a);
    int rs = sepol_context_to_sid(text, strlen(text) + 1, &s);
    if ((ra == 0) != (rs == 0)) {
        if (validity_mismatches++ < 10)
            fprintf(stderr, "MISMATCH validity of %s: arbiter %s, libsepol %s\n", text,
                    ra == 0 ? "valid" : arb_last_error(), rs == 0 ? "valid" : "invalid");
        return 0;
    }
    if (ra != 0) {
        invalid_both++;
        return 0;
    }
    out->arb = a;
    out->sepol = s;
    out->text = strdup(text);
    return 1;
}

static const char *LEVELS_MLS[] = {"s0", "s0-s0:c0.c1023", "s0:c1,c5", "s0:c0.c255-s0:c0.c1023",
                                   "s0-s0:c0.c255"};
static const char *LEVEL_NONE[] = {""};
static const char **levels;
static unsigned nlevels;

static const char *level(void)
{
    return levels[below(nlevels)];
}

static void format_ctx(char *buf, size_t n, const char *u, const char *r, const char *t)
{
    const char *l = level();
    snprintf(buf, n, "%s:%s:%s%s%s", u, r, t, *l ? ":" : "", l);
}

/* Subject contexts: authorised user/role/type triples. */
static struct ctx *subjects;
static uint32_t *subject_type;
static unsigned nsubjects;

/* Object contexts per type value, made on first use (0 = not yet, -1 = none valid). */
static struct ctx *objects;
static signed char *object_state;

/* Member types of each type or attribute value (a type is its own only member). */
static uint32_t **members;
static uint32_t *nmembers;

static void build_members(void)
{
    uint32_t n = pdb->p_types.nprim;
    members = calloc(n + 1, sizeof *members);
    nmembers = calloc(n + 1, sizeof *nmembers);
    for (uint32_t t = 1; t <= n; t++) {
        type_datum_t *td = pdb->type_val_to_struct[t - 1];
        if (!td || td->flavor == TYPE_ATTRIB)
            continue;
        ebitmap_node_t *node;
        unsigned int bit;
        ebitmap_for_each_positive_bit(&pdb->type_attr_map[t - 1], node, bit)
        {
            uint32_t a = bit + 1;
            members[a] = realloc(members[a], (nmembers[a] + 1) * sizeof(uint32_t));
            members[a][nmembers[a]++] = t;
        }
        if (nmembers[t] == 0 || members[t][nmembers[t] - 1] != t) {
            members[t] = realloc(members[t], (nmembers[t] + 1) * sizeof(uint32_t));
            members[t][nmembers[t]++] = t;
        }
    }
}

static int is_type(uint32_t t)
{
    type_datum_t *td = pdb->type_val_to_struct[t - 1];
    return td && td->flavor == TYPE_TYPE;
}

static struct ctx *object_of(uint32_t t)
{
    if (object_state[t] == 0) {
        char buf[512];
        object_state[t] = -1;
        for (int tries = 0; tries < 3; tries++) {
            format_ctx(buf, sizeof buf, "system_u", "object_r", pdb->p_type_val_to_name[t - 1]);
            if (make_ctx(buf, &objects[t])) {
                object_state[t] = 1;
                break;
            }
        }
    }
    return object_state[t] == 1 ? &objects[t] : NULL;
}

static void build_subjects(unsigned per_role)
{
    char buf[512];
    unsigned cap = 1024;
    subjects = malloc(cap * sizeof *subjects);
    subject_type = malloc(cap * sizeof *subject_type);
    for (uint32_t u = 1; u <= pdb->p_users.nprim; u++) {
        user_datum_t *ud = pdb->user_val_to_struct[u - 1];
        ebitmap_node_t *rn;
        unsigned int rbit;
        ebitmap_for_each_positive_bit(&ud->roles.roles, rn, rbit)
        {
            role_datum_t *rd = pdb->role_val_to_struct[rbit];
            if (strcmp(pdb->p_role_val_to_name[rbit], "object_r") == 0)
                continue;
            /* The role's types, then a random sample of them. */
            uint32_t *types = NULL, ntypes = 0;
            ebitmap_node_t *tn;
            unsigned int tbit;
            ebitmap_for_each_positive_bit(&rd->types.types, tn, tbit)
            {
                if (!is_type(tbit + 1))
                    continue;
                types = realloc(types, (ntypes + 1) * sizeof *types);
                types[ntypes++] = tbit + 1;
            }
            for (unsigned k = 0; k < per_role && ntypes; k++) {
                uint32_t t = types[below(ntypes)];
                format_ctx(buf, sizeof buf, pdb->p_user_val_to_name[u - 1],
                           pdb->p_role_val_to_name[rbit], pdb->p_type_val_to_name[t - 1]);
                if (nsubjects == cap) {
                    cap *= 2;
                    subjects = realloc(subjects, cap * sizeof *subjects);
                    subject_type = realloc(subject_type, cap * sizeof *subject_type);
                }
                if (make_ctx(buf, &subjects[nsubjects]))
                    subject_type[nsubjects++] = t;
            }
            free(types);
        }
    }
}

/* Allow-rule keys (source, target, class), possibly attributes. */
static avtab_key_t *keys;
static unsigned nkeys;

static void collect_keys(void)
{
    avtab_t *tab = &pdb->te_avtab;
    keys = malloc((tab->nel + 1) * sizeof *keys);
    for (uint32_t i = 0; i < tab->nslot; i++)
        for (avtab_ptr_t n = tab->htable[i]; n; n = n->next)
            if (n->key.specified & AVTAB_ALLOWED)
                keys[nkeys++] = n->key;
}

static uint32_t member_of(uint32_t t)
{
    return nmembers[t] ? members[t][below(nmembers[t])] : 0;
}

/* A subject context of type t if the pool has one, else the object context of t. */
static struct ctx *subject_of_type(uint32_t t)
{
    for (int tries = 0; tries < 8 && nsubjects; tries++) {
        unsigned i = below(nsubjects);
        if (subject_type[i] == t)
            return &subjects[i];
    }
    return object_of(t);
}

static sepol_policydb_t *sepol_db;
static sepol_policy_file_t *sepol_file;
static uint32_t nclasses, ntypes;

/* Loads `path` into libsepol's services layer and arbiter (`srv`), reads its symbols,
 * builds the context pools. Returns 0, or -1 with a message on stderr. */
static int queries_open(const char *path, uint64_t seed)
{
    rng_state = seed;
    sepol_debug(0); /* libsepol's own messages off */
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        perror(path);
        return -1;
    }
    if (sepol_set_policydb_from_file(fp) != 0) {
        fprintf(stderr, "libsepol cannot load %s\n", path);
        fclose(fp);
        return -1;
    }
    rewind(fp);
    if (sepol_policy_file_create(&sepol_file) || sepol_policydb_create(&sepol_db)) {
        fprintf(stderr, "libsepol: out of memory\n");
        fclose(fp);
        return -1;
    }
    sepol_policy_file_set_fp(sepol_file, fp);
    int r = sepol_policydb_read(sepol_db, sepol_file);
    fclose(fp);
    if (r != 0) {
        fprintf(stderr, "libsepol cannot read %s\n", path);
        return -1;
    }
    pdb = &sepol_db->p;
    if (arb_server_open(path, &srv) != 0) {
        fprintf(stderr, "arbiter cannot open %s: %s\n", path, arb_last_error());
        return -1;
    }
    levels = pdb->mls ? LEVELS_MLS : LEVEL_NONE;
    nlevels = pdb->mls ? sizeof LEVELS_MLS / sizeof *LEVELS_MLS : 1;
    nclasses = pdb->p_classes.nprim;
    ntypes = pdb->p_types.nprim;
    objects = calloc(ntypes + 1, sizeof *objects);
    object_state = calloc(ntypes + 1, 1);
    build_members();
    build_subjects(40);
    collect_keys();
    if (nsubjects == 0 || nkeys == 0) {
        fprintf(stderr, "no subjects or rules found in %s\n", path);
        return -1;
    }
    return 0;
}

struct query {
    struct ctx *s, *t;
    uint32_t cls;
    unsigned kind; /* 0 rule key, 1 subject x type, 2 subject x subject */
};

/* The next random query (see the header comment). */
static void next_query(struct query *q)
{
    for (;;) {
        struct ctx *s = NULL, *t = NULL;
        uint32_t cls = 0;
        unsigned kind = below(4);
        kind = kind < 2 ? 0 : kind - 1;
        if (kind == 0) {
            avtab_key_t *k = &keys[below(nkeys)];
            uint32_t st = member_of(k->source_type), tt = member_of(k->target_type);
            if (!st || !tt)
                continue;
            s = subject_of_type(st);
            t = below(4) == 0 ? subject_of_type(tt) : object_of(tt);
            cls = k->target_class;
        } else if (kind == 1) {
            uint32_t tt = 1 + below(ntypes);
            if (!is_type(tt))
                continue;
            s = &subjects[below(nsubjects)];
            t = object_of(tt);
            cls = 1 + below(nclasses);
        } else {
            s = &subjects[below(nsubjects)];
            t = &subjects[below(nsubjects)];
            cls = 1 + below(nclasses);
        }
        if (!s || !t || !pdb->p_class_val_to_name[cls - 1])
            continue;
        q->s = s;
        q->t = t;
        q->cls = cls;
        q->kind = kind;
        return;
    }
}

/* Gives every context its SID in libsepol again (after libsepol reloaded its policy,
 * which starts a new SID table). Returns the number of contexts libsepol now refuses. */
static inline long queries_resync_sepol(void)
{
    long refused = 0;
    for (unsigned i = 0; i < nsubjects; i++)
        refused += sepol_context_to_sid(subjects[i].text, strlen(subjects[i].text) + 1,
                                        &subjects[i].sepol) != 0;
    for (uint32_t t = 1; t <= ntypes; t++)
        if (object_state[t] == 1)
            refused += sepol_context_to_sid(objects[t].text, strlen(objects[t].text) + 1,
                                            &objects[t].sepol) != 0;
    return refused;
}

/* Sets every boolean at random, in arbiter (arb_set_boolean, arb_commit_booleans) and in
 * libsepol (sepol_bool_set on the policy read at open, which is then written out and
 * loaded into the services layer again: the services layer has no boolean call of its
 * own). Returns the number of booleans set true, or -1 on failure. */
static inline long queries_flip_booleans(void)
{
    long on = 0;
    sepol_handle_t *h = sepol_handle_create();
    if (!h)
        return -1;
    sepol_msg_set_callback(h, NULL, NULL);
    for (uint32_t b = 0; b < pdb->p_bools.nprim; b++) {
        const char *name = pdb->p_bool_val_to_name[b];
        int v = (int)below(2);
        if (arb_set_boolean(srv, name, v) != 0) {
            fprintf(stderr, "arb_set_boolean(%s): %s\n", name, arb_last_error());
            return -1;
        }
        /* sepol_bool_set also re-evaluates the conditional rules, whose enabled state
         * the written image keeps. */
        sepol_bool_key_t *key = NULL;
        sepol_bool_t *value = NULL;
        int r = sepol_bool_key_create(h, name, &key) || sepol_bool_create(h, &value) ||
                sepol_bool_set_name(h, value, name);
        if (r == 0) {
            sepol_bool_set_value(value, v);
            r = sepol_bool_set(h, sepol_db, key, value);
        }
        sepol_bool_key_free(key);
        sepol_bool_free(value);
        if (r != 0) {
            fprintf(stderr, "sepol_bool_set(%s) failed\n", name);
            return -1;
        }
        on += v;
    }
    if (arb_commit_booleans(srv) != 0)
        return -1;
    void *image = NULL;
    size_t len = 0;
    int r = sepol_policydb_to_image(h, sepol_db, &image, &len);
    sepol_handle_destroy(h);
    FILE *f = r == 0 ? fmemopen(image, len, "rb") : NULL;
    r = f ? sepol_set_policydb_from_file(f) : -1;
    if (f)
        fclose(f);
    free(image);
    if (r != 0) {
        fprintf(stderr, "libsepol cannot reload the policy with new booleans\n");
        return -1;
    }
    if (queries_resync_sepol() != 0) {
        fprintf(stderr, "libsepol refuses contexts it accepted before\n");
        return -1;
    }
    return on;
}

static void queries_close(void)
{
    for (unsigned i = 0; i < nsubjects; i++)
        free(subjects[i].text);
    for (uint32_t t = 1; t <= ntypes; t++)
        if (object_state[t] == 1)
            free(objects[t].text);
    arb_server_free(srv);
    sepol_policydb_free(sepol_db);
    sepol_policy_file_free(sepol_file);
}

#endif
