/*
 * Every function of arbiter.h from C, against the installed header and library:
 * expected decisions on the built-in policy (policies/src/default.conf), bad input (NULL,
 * non-UTF-8, truncated policies, unknown names) always an error and never a crash,
 * threads hammering one server and one cache while another reloads and flips booleans,
 * and open/reload/free cycles (run under valgrind by run.sh to catch leaks).
 *
 * Usage: api_test POLICY_DIR [CYCLES] [THREAD_ITERS]
 *   POLICY_DIR holds default.33, unknown-allow.33 and unknown-deny.33 (policies/bin).
 */
#define _GNU_SOURCE
#include <arbiter.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
static int checks;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        checks++;                                                                        \
        if (!(cond)) {                                                                   \
            failures++;                                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s (errno %d, last error: %s)\n",      \
                    __FILE__, __LINE__, #cond, errno, arb_last_error());                 \
        }                                                                                \
    } while (0)

/* `call` fails with `value` (-1 or 0) and errno `err`, leaving a message. */
#define FAILS(call, value, err)                                                          \
    do {                                                                                 \
        errno = 0;                                                                       \
        long long r_ = (long long)(call);                                                \
        int e_ = errno;                                                                  \
        checks++;                                                                        \
        if (r_ != (value) || e_ != (err) || arb_last_error()[0] == '\0') {               \
            failures++;                                                                  \
            fprintf(stderr, "%s:%d: %s: want %lld/errno %d, got %lld/errno %d (%s)\n",   \
                    __FILE__, __LINE__, #call, (long long)(value), (err), r_, e_,        \
                    arb_last_error());                                                   \
        }                                                                                \
    } while (0)

#define OK(call) CHECK((call) == 0)

static const char *BAD_UTF8 = "system_u:object_r:\xff\xfe_t:s0";

static char policy_dir[4096];

static const char *policy_path(const char *name)
{
    static __thread char buf[4200];
    snprintf(buf, sizeof buf, "%s/%s", policy_dir, name);
    return buf;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = malloc(n);
    if (fread(buf, 1, n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static arb_sid sid_of(arb_server *srv, const char *ctx)
{
    arb_sid sid = 0;
    if (arb_context_to_sid(srv, ctx, &sid) != 0)
        fprintf(stderr, "context_to_sid(%s): %s\n", ctx, arb_last_error());
    return sid;
}

static arb_perms perm(arb_server *srv, const char *cls, const char *name)
{
    return arb_string_to_perm(srv, arb_string_to_class(srv, cls), name);
}

#define HTTPD "system_u:system_r:httpd_t:s0"
#define CONTENT "system_u:object_r:httpd_content_t:s0"
#define USER "user_u:user_r:user_t:s0"
#define SHADOW "system_u:object_r:shadow_t:s0"
#define SSHD "system_u:system_r:sshd_t:s0-s3:c0.c15"
#define HOME "user_u:object_r:user_home_t:s0"

/* ---- bad input ------------------------------------------------------------------- */

static void test_null_and_bad_arguments(arb_server *srv)
{
    arb_server *s = NULL;
    arb_avc *a = NULL;
    arb_sid sid = 0;
    char *ctx = NULL;
    char **names = NULL;
    int len = 0;
    struct arb_av_decision d;
    struct arb_avc_cache_stats st;
    arb_sid ok = sid_of(srv, HTTPD);
    arb_class file = arb_string_to_class(srv, "file");

    FAILS(arb_server_open(NULL, &s), -1, EINVAL);
    FAILS(arb_server_open(policy_path("default.33"), NULL), -1, EINVAL);
    FAILS(arb_server_open(BAD_UTF8, &s), -1, EINVAL);
    FAILS(arb_server_open("/nonexistent/policy.33", &s), -1, ENOENT);
    FAILS(arb_server_from_bytes(NULL, 10, &s), -1, EINVAL);
    FAILS(arb_server_from_bytes(NULL, 0, &s), -1, EINVAL); /* an empty policy */
    FAILS(arb_server_from_bytes("garbage!", 8, &s), -1, EINVAL);
    FAILS(arb_server_builtin(NULL), -1, EINVAL);
    CHECK(s == NULL);
    arb_server_free(NULL);

    FAILS(arb_load_policy(NULL, policy_path("default.33")), -1, EINVAL);
    FAILS(arb_load_policy(srv, NULL), -1, EINVAL);
    FAILS(arb_load_policy(srv, BAD_UTF8), -1, EINVAL);
    FAILS(arb_load_policy_bytes(srv, NULL, 3), -1, EINVAL);
    FAILS(arb_server_seqno(NULL), 0, EINVAL);
    FAILS(arb_policyvers(NULL), -1, EINVAL);
    FAILS(arb_mls_enabled(NULL), -1, EINVAL);
    FAILS(arb_deny_unknown(NULL), -1, EINVAL);

    FAILS(arb_context_to_sid(NULL, HTTPD, &sid), -1, EINVAL);
    FAILS(arb_context_to_sid(srv, NULL, &sid), -1, EINVAL);
    FAILS(arb_context_to_sid(srv, HTTPD, NULL), -1, EINVAL);
    FAILS(arb_context_to_sid(srv, BAD_UTF8, &sid), -1, EINVAL);
    FAILS(arb_context_to_sid(srv, "system_u:object_r:nosuch_t:s0", &sid), -1, EINVAL);
    FAILS(arb_context_to_sid(srv, "not a context", &sid), -1, EINVAL);
    FAILS(arb_context_to_sid(srv, "user_u:system_r:httpd_t:s0", &sid), -1, EINVAL);
    FAILS(arb_context_to_sid(srv, "", &sid), -1, EINVAL);
    FAILS(arb_sid_to_context(NULL, ok, &ctx), -1, EINVAL);
    FAILS(arb_sid_to_context(srv, ok, NULL), -1, EINVAL);
    FAILS(arb_sid_to_context(srv, 0, &ctx), -1, EINVAL);
    FAILS(arb_sid_to_context(srv, 999999, &ctx), -1, EINVAL);
    CHECK(ctx == NULL);
    arb_freecon(NULL);
    arb_freeconary(NULL);
    FAILS(arb_check_context(NULL, HTTPD), -1, EINVAL);
    FAILS(arb_check_context(srv, NULL), -1, EINVAL);
    FAILS(arb_check_context(srv, BAD_UTF8), -1, EINVAL);
    FAILS(arb_check_context(srv, "system_u:object_r:nosuch_t:s0"), -1, EINVAL);

    FAILS(arb_string_to_class(NULL, "file"), 0, EINVAL);
    FAILS(arb_string_to_class(srv, NULL), 0, EINVAL);
    FAILS(arb_string_to_class(srv, "\xff"), 0, EINVAL);
    FAILS(arb_string_to_class(srv, "nosuchclass"), 0, EINVAL);
    FAILS(arb_string_to_perm(NULL, file, "read"), 0, EINVAL);
    FAILS(arb_string_to_perm(srv, file, NULL), 0, EINVAL);
    FAILS(arb_string_to_perm(srv, file, "\xff"), 0, EINVAL);
    FAILS(arb_string_to_perm(srv, file, "nosuchperm"), 0, EINVAL);
    FAILS(arb_string_to_perm(srv, 0, "read"), 0, EINVAL);
    FAILS(arb_string_to_perm(srv, 60000, "read"), 0, EINVAL);
    FAILS(arb_class_to_string(srv, 0, &ctx), -1, EINVAL);
    FAILS(arb_class_to_string(srv, 60000, &ctx), -1, EINVAL);
    FAILS(arb_class_to_string(srv, file, NULL), -1, EINVAL);
    FAILS(arb_class_to_string(NULL, file, &ctx), -1, EINVAL);
    FAILS(arb_av_string(srv, 60000, 1, &ctx), -1, EINVAL);
    FAILS(arb_av_string(srv, file, 1, NULL), -1, EINVAL);
    FAILS(arb_av_string(NULL, file, 1, &ctx), -1, EINVAL);

    FAILS(arb_compute_av(NULL, ok, ok, file, &d), -1, EINVAL);
    FAILS(arb_compute_av(srv, ok, ok, file, NULL), -1, EINVAL);
    FAILS(arb_compute_av(srv, 0, ok, file, &d), -1, EINVAL);
    FAILS(arb_compute_av(srv, ok, 999999, file, &d), -1, EINVAL);
    FAILS(arb_compute_av(srv, ok, ok, 0, &d), -1, EINVAL);
    FAILS(arb_compute_av(srv, ok, ok, 60000, &d), -1, EINVAL);

    FAILS(arb_check_access(NULL, HTTPD, CONTENT, "file", "read"), -1, EINVAL);
    FAILS(arb_check_access(srv, NULL, CONTENT, "file", "read"), -1, EINVAL);
    FAILS(arb_check_access(srv, HTTPD, NULL, "file", "read"), -1, EINVAL);
    FAILS(arb_check_access(srv, HTTPD, CONTENT, NULL, "read"), -1, EINVAL);
    FAILS(arb_check_access(srv, HTTPD, CONTENT, "file", NULL), -1, EINVAL);
    FAILS(arb_check_access(srv, BAD_UTF8, CONTENT, "file", "read"), -1, EINVAL);
    FAILS(arb_check_access(srv, HTTPD, CONTENT, "file", "\xc3\x28"), -1, EINVAL);
    FAILS(arb_check_access(srv, "bogus", CONTENT, "file", "read"), -1, EINVAL);

    FAILS(arb_compute_create(NULL, ok, ok, file, NULL, &sid), -1, EINVAL);
    FAILS(arb_compute_create(srv, ok, ok, file, NULL, NULL), -1, EINVAL);
    FAILS(arb_compute_create(srv, ok, ok, file, BAD_UTF8, &sid), -1, EINVAL);
    FAILS(arb_compute_create(srv, 0, ok, file, NULL, &sid), -1, EINVAL);
    FAILS(arb_compute_create(srv, ok, ok, 60000, NULL, &sid), -1, EINVAL);
    FAILS(arb_compute_relabel(NULL, ok, ok, file, &sid), -1, EINVAL);
    FAILS(arb_compute_relabel(srv, ok, 999999, file, &sid), -1, EINVAL);
    FAILS(arb_compute_relabel(srv, ok, ok, file, NULL), -1, EINVAL);
    FAILS(arb_compute_member(NULL, ok, ok, file, &sid), -1, EINVAL);
    FAILS(arb_compute_member(srv, ok, ok, 0, &sid), -1, EINVAL);
    FAILS(arb_compute_member(srv, ok, ok, file, NULL), -1, EINVAL);

    FAILS(arb_set_boolean(NULL, "secure_mode", 1), -1, EINVAL);
    FAILS(arb_set_boolean(srv, NULL, 1), -1, EINVAL);
    FAILS(arb_set_boolean(srv, "\xff", 1), -1, EINVAL);
    FAILS(arb_set_boolean(srv, "no_such_bool", 1), -1, ENOENT);
    FAILS(arb_commit_booleans(NULL), -1, EINVAL);
    FAILS(arb_get_boolean_active(srv, "no_such_bool"), -1, ENOENT);
    FAILS(arb_get_boolean_active(srv, NULL), -1, EINVAL);
    FAILS(arb_get_boolean_pending(srv, "no_such_bool"), -1, ENOENT);
    FAILS(arb_get_boolean_pending(NULL, "secure_mode"), -1, EINVAL);
    FAILS(arb_get_boolean_names(NULL, &names, &len), -1, EINVAL);
    FAILS(arb_get_boolean_names(srv, NULL, &len), -1, EINVAL);
    FAILS(arb_get_boolean_names(srv, &names, NULL), -1, EINVAL);

    FAILS(arb_avc_open(NULL, 0, 0, &a), -1, EINVAL);
    FAILS(arb_avc_open(srv, 0, 0, NULL), -1, EINVAL);
    FAILS(arb_avc_open(srv, 3, 0, &a), -1, EINVAL);     /* not a power of two */
    FAILS(arb_avc_open(srv, 16, 4096, &a), -1, EINVAL); /* more entries than room */
    CHECK(a == NULL);
    FAILS(arb_avc_has_perm(NULL, ok, ok, file, 1, &d, NULL), -1, EINVAL);
    FAILS(arb_avc_has_perm_noaudit(NULL, ok, ok, file, 1, &d), -1, EINVAL);
    FAILS(arb_avc_compute_create(NULL, ok, ok, file, &sid), -1, EINVAL);
    FAILS(arb_avc_cache_stats(NULL, &st), -1, EINVAL);
    FAILS(arb_avc_reset(NULL), -1, EINVAL);
    FAILS(arb_avc_setenforce(NULL, 1), -1, EINVAL);
    FAILS(arb_avc_getenforce(NULL), -1, EINVAL);
    errno = 0;
    arb_avc_set_audit_callback(NULL, NULL, NULL);
    CHECK(errno == EINVAL);
    arb_avc_free(NULL);
}

/* Every prefix of a policy image (and a file holding one) is refused, never a crash. */
static void test_truncated_policies(arb_server *srv)
{
    size_t len = 0;
    unsigned char *img = read_file(policy_path("default.33"), &len);
    CHECK(img != NULL && len > 1000);
    if (!img)
        return;
    int refused = 0;
    for (size_t n = 0; n < len; n++) {
        arb_server *s = NULL;
        errno = 0;
        if (arb_server_from_bytes(img, n, &s) == -1 && errno == EINVAL && s == NULL)
            refused++;
        else
            arb_server_free(s);
    }
    CHECK(refused == (int)len);
    /* Flipped bytes: an error or a policy, never a crash. */
    for (size_t i = 0; i < len; i += 7) {
        arb_server *s = NULL;
        img[i] ^= 0x5a;
        if (arb_server_from_bytes(img, len, &s) == 0)
            arb_server_free(s);
        else
            CHECK(errno != 0 && arb_last_error()[0] != '\0');
        img[i] ^= 0x5a;
    }
    char path[] = "/tmp/arbiter-truncated-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, img, len / 2) == (ssize_t)(len / 2));
    close(fd);
    arb_server *s = NULL;
    FAILS(arb_server_open(path, &s), -1, EINVAL);
    CHECK(strstr(arb_last_error(), "truncated") != NULL);
    /* A failed reload leaves the old policy in force. */
    uint64_t before = arb_server_seqno(srv);
    FAILS(arb_load_policy(srv, path), -1, EINVAL);
    FAILS(arb_load_policy_bytes(srv, img, len - 1), -1, EINVAL);
    CHECK(arb_server_seqno(srv) == before);
    OK(arb_check_access(srv, HTTPD, CONTENT, "file", "read"));
    unlink(path);
    free(img);
}

/* ---- the server ------------------------------------------------------------------- */

static void test_names(arb_server *srv)
{
    CHECK(arb_policyvers(srv) == 33);
    CHECK(arb_mls_enabled(srv) == 1);
    CHECK(arb_deny_unknown(srv) == 1);
    CHECK(arb_server_seqno(srv) == 1);

    arb_sid a = sid_of(srv, HTTPD), b = sid_of(srv, HTTPD);
    CHECK(a != 0 && a == b);
    char *ctx = NULL;
    OK(arb_sid_to_context(srv, a, &ctx));
    CHECK(ctx && strcmp(ctx, HTTPD) == 0);
    arb_freecon(ctx);
    /* Aliases resolve; the context reads back canonical. */
    arb_sid alias = sid_of(srv, "system_u:object_r:httpd_sys_content_t:s0");
    OK(arb_sid_to_context(srv, alias, &ctx));
    CHECK(ctx && strcmp(ctx, CONTENT) == 0);
    free(ctx); /* malloc'ed: free() works too */
    OK(arb_check_context(srv, SSHD));

    arb_class file = arb_string_to_class(srv, "file");
    arb_class dir = arb_string_to_class(srv, "dir");
    CHECK(file != 0 && dir != 0 && file != dir);
    char *name = NULL;
    OK(arb_class_to_string(srv, file, &name));
    CHECK(name && strcmp(name, "file") == 0);
    arb_freecon(name);
    arb_perms read = arb_string_to_perm(srv, file, "read");
    arb_perms write = arb_string_to_perm(srv, file, "write");
    CHECK(read && write && read != write && (read & (read - 1)) == 0);
    OK(arb_av_string(srv, file, read | write, &name));
    CHECK(name && (strcmp(name, "{ read write }") == 0 || strcmp(name, "{ write read }") == 0));
    arb_freecon(name);
    OK(arb_av_string(srv, file, 0, &name));
    CHECK(name && strcmp(name, "null") == 0);
    arb_freecon(name);
}

static void test_decisions(arb_server *srv)
{
    arb_class file = arb_string_to_class(srv, "file");
    arb_perms read = perm(srv, "file", "read"), open = perm(srv, "file", "open"),
              getattr = perm(srv, "file", "getattr"), map = perm(srv, "file", "map"),
              write = perm(srv, "file", "write");
    struct arb_av_decision d;

    OK(arb_compute_av(srv, sid_of(srv, HTTPD), sid_of(srv, CONTENT), file, &d));
    CHECK(d.allowed == (read | open | getattr | map));
    CHECK(d.auditallow == 0 && d.seqno == 1 && d.flags == 0);

    OK(arb_compute_av(srv, sid_of(srv, USER), sid_of(srv, SHADOW), file, &d));
    CHECK(d.allowed == getattr);
    CHECK((d.auditdeny & (read | open)) == 0); /* dontaudit */
    CHECK((d.auditdeny & write) == write);

    OK(arb_compute_av(srv, sid_of(srv, SSHD), sid_of(srv, SHADOW), file, &d));
    CHECK(d.allowed == (read | open | getattr) && d.auditallow == read);

    OK(arb_check_access(srv, HTTPD, CONTENT, "file", "read"));
    FAILS(arb_check_access(srv, USER, SHADOW, "file", "read"), -1, EACCES);
    FAILS(arb_check_access(srv, HTTPD, CONTENT, "nosuchclass", "read"), -1, EINVAL);
    FAILS(arb_check_access(srv, HTTPD, CONTENT, "file", "nosuchperm"), -1, EINVAL);

    /* Labels: filename transition, plain transition, process transition. */
    arb_sid out = 0;
    char *ctx = NULL;
    arb_sid passwd = sid_of(srv, "system_u:system_r:passwd_t:s0");
    arb_sid etc = sid_of(srv, "system_u:object_r:etc_t:s0");
    OK(arb_compute_create(srv, passwd, etc, file, "shadow", &out));
    OK(arb_sid_to_context(srv, out, &ctx));
    CHECK(ctx && strcmp(ctx, "system_u:object_r:shadow_t:s0") == 0);
    arb_freecon(ctx);
    OK(arb_compute_create(srv, passwd, etc, file, NULL, &out));
    OK(arb_sid_to_context(srv, out, &ctx));
    CHECK(ctx && strcmp(ctx, "system_u:object_r:etc_t:s0") == 0);
    arb_freecon(ctx);
    arb_class process = arb_string_to_class(srv, "process");
    OK(arb_compute_create(srv, sid_of(srv, USER),
                          sid_of(srv, "system_u:object_r:passwd_exec_t:s0"), process, NULL,
                          &out));
    OK(arb_sid_to_context(srv, out, &ctx));
    CHECK(ctx && strcmp(ctx, "user_u:user_r:passwd_t:s0") == 0);
    arb_freecon(ctx);
    /* No type_change/type_member rules: the object keeps its type. */
    OK(arb_compute_relabel(srv, sid_of(srv, USER), sid_of(srv, HOME), file, &out));
    OK(arb_sid_to_context(srv, out, &ctx));
    CHECK(ctx && strstr(ctx, ":user_home_t:") != NULL);
    arb_freecon(ctx);
    OK(arb_compute_member(srv, sid_of(srv, USER), sid_of(srv, HOME), file, &out));
    OK(arb_sid_to_context(srv, out, &ctx));
    CHECK(ctx && strstr(ctx, ":user_home_t:") != NULL);
    arb_freecon(ctx);
}

static void test_unknown_handling(void)
{
    arb_server *allow = NULL, *deny = NULL;
    OK(arb_server_open(policy_path("unknown-allow.33"), &allow));
    OK(arb_server_open(policy_path("unknown-deny.33"), &deny));
    if (!allow || !deny)
        return;
    CHECK(arb_deny_unknown(allow) == 0 && arb_deny_unknown(deny) == 1);
    /* selinux_check_access: an undefined class passes under allow_unknown only. */
    char *ctx = NULL;
    OK(arb_sid_to_context(allow, 1, &ctx)); /* the kernel initial SID */
    if (ctx) {
        OK(arb_check_access(allow, ctx, ctx, "no_such_class", "read"));
        FAILS(arb_check_access(deny, ctx, ctx, "no_such_class", "read"), -1, EINVAL);
        arb_freecon(ctx);
    }
    arb_server_free(allow);
    arb_server_free(deny);
}

static void test_booleans_and_reload(arb_server *srv)
{
    char **names = NULL;
    int len = 0;
    OK(arb_get_boolean_names(srv, &names, &len));
    CHECK(len == 4 && names && names[len] == NULL);
    int found = 0;
    for (int i = 0; names && i < len; i++)
        found += strcmp(names[i], "httpd_enable_homedirs") == 0;
    CHECK(found == 1);
    arb_freeconary(names);

    arb_class file = arb_string_to_class(srv, "file");
    arb_perms read = perm(srv, "file", "read");
    arb_sid httpd = sid_of(srv, HTTPD), home = sid_of(srv, HOME);
    struct arb_av_decision d;
    uint64_t seq = arb_server_seqno(srv);

    CHECK(arb_get_boolean_active(srv, "httpd_enable_homedirs") == 0);
    OK(arb_set_boolean(srv, "httpd_enable_homedirs", 1));
    CHECK(arb_get_boolean_pending(srv, "httpd_enable_homedirs") == 1);
    CHECK(arb_get_boolean_active(srv, "httpd_enable_homedirs") == 0);
    OK(arb_compute_av(srv, httpd, home, file, &d));
    CHECK((d.allowed & read) == 0); /* pending only */
    OK(arb_commit_booleans(srv));
    CHECK(arb_server_seqno(srv) == seq + 1);
    CHECK(arb_get_boolean_active(srv, "httpd_enable_homedirs") == 1);
    OK(arb_compute_av(srv, httpd, home, file, &d));
    CHECK((d.allowed & read) == read && d.seqno == seq + 1);

    /* Reload: SIDs keep their meaning, booleans carry over, seqno + 1. */
    OK(arb_load_policy(srv, policy_path("default.33")));
    CHECK(arb_server_seqno(srv) == seq + 2);
    CHECK(arb_get_boolean_active(srv, "httpd_enable_homedirs") == 1);
    OK(arb_compute_av(srv, httpd, home, file, &d));
    CHECK((d.allowed & read) == read && d.seqno == seq + 2);
    char *ctx = NULL;
    OK(arb_sid_to_context(srv, httpd, &ctx));
    CHECK(ctx && strcmp(ctx, HTTPD) == 0);
    arb_freecon(ctx);

    size_t len2 = 0;
    void *img = read_file(policy_path("default.33"), &len2);
    OK(arb_load_policy_bytes(srv, img, len2));
    free(img);
    CHECK(arb_server_seqno(srv) == seq + 3);
    OK(arb_set_boolean(srv, "httpd_enable_homedirs", 0));
    OK(arb_commit_booleans(srv));
    OK(arb_compute_av(srv, httpd, home, file, &d));
    CHECK((d.allowed & read) == 0);
}

/* ---- the cache -------------------------------------------------------------------- */

struct records {
    pthread_mutex_t lock;
    int count;
    char last[1024];
};

static void collect(void *arg, const char *record)
{
    struct records *r = arg;
    pthread_mutex_lock(&r->lock);
    r->count++;
    snprintf(r->last, sizeof r->last, "%s", record);
    pthread_mutex_unlock(&r->lock);
}

static void test_avc(arb_server *srv)
{
    arb_avc *avc = NULL;
    OK(arb_avc_open(srv, 0, 0, &avc));
    if (!avc)
        return;
    struct records rec = {PTHREAD_MUTEX_INITIALIZER, 0, ""};
    arb_avc_set_audit_callback(avc, collect, &rec);

    arb_class file = arb_string_to_class(srv, "file");
    arb_perms read = perm(srv, "file", "read"), write = perm(srv, "file", "write");
    arb_sid httpd = sid_of(srv, HTTPD), content = sid_of(srv, CONTENT),
            user = sid_of(srv, USER), shadow = sid_of(srv, SHADOW), sshd = sid_of(srv, SSHD);
    struct arb_av_decision d;

    CHECK(arb_avc_getenforce(avc) == 1);
    OK(arb_avc_has_perm(avc, httpd, content, file, read, &d, NULL));
    OK(arb_avc_has_perm(avc, httpd, content, file, read, NULL, NULL)); /* a hit */
    CHECK((d.allowed & read) == read);
    CHECK(rec.count == 0);

    /* An audited denial, with the caller's fields. */
    memset(&d, 0, sizeof d);
    FAILS(arb_avc_has_perm(avc, user, shadow, file, write, &d, "pid=42 comm=\"cat\""), -1,
          EACCES);
    CHECK(d.allowed != 0 && (d.allowed & write) == 0); /* filled on denial too */
    CHECK(rec.count == 1);
    CHECK(strncmp(rec.last, "avc:  denied  { write } for  pid=42 comm=\"cat\" scontext=" USER
                  " tcontext=" SHADOW " tclass=file permissive=0",
                  sizeof rec.last) == 0);
    /* A dontaudit'ed denial: no record. noaudit: no record. */
    FAILS(arb_avc_has_perm(avc, user, shadow, file, read, &d, NULL), -1, EACCES);
    FAILS(arb_avc_has_perm_noaudit(avc, user, shadow, file, write, &d), -1, EACCES);
    CHECK(rec.count == 1);
    /* An auditallow'ed grant. */
    OK(arb_avc_has_perm(avc, sshd, shadow, file, read, &d, NULL));
    CHECK(rec.count == 2 && strncmp(rec.last, "avc:  granted  { read } for  scontext=", 38) == 0);
    /* audit_extra is checked when a record is due. */
    FAILS(arb_avc_has_perm(avc, user, shadow, file, write, &d, "no key"), -1, EINVAL);
    FAILS(arb_avc_has_perm(avc, user, shadow, file, write, &d, "pid=\xff"), -1, EINVAL);
    /* Requesting nothing is refused, as in the kernel. */
    FAILS(arb_avc_has_perm(avc, httpd, content, file, 0, &d, NULL), -1, EACCES);
    FAILS(arb_avc_has_perm(avc, 0, content, file, read, &d, NULL), -1, EINVAL);
    FAILS(arb_avc_has_perm(avc, httpd, content, 60000, read, &d, NULL), -1, EINVAL);

    /* Permissive mode: the denial passes, is audited once with permissive=1. */
    OK(arb_avc_setenforce(avc, 0));
    CHECK(arb_avc_getenforce(avc) == 0);
    int before = rec.count;
    OK(arb_avc_has_perm(avc, user, shadow, file, write, &d, NULL));
    CHECK(rec.count == before + 1 && strstr(rec.last, "permissive=1") != NULL);
    OK(arb_avc_has_perm(avc, user, shadow, file, write, &d, NULL));
    CHECK(rec.count == before + 1);
    OK(arb_avc_setenforce(avc, 1));
    FAILS(arb_avc_has_perm(avc, user, shadow, file, write, &d, NULL), -1, EACCES);

    /* Removing the callback. */
    arb_avc_set_audit_callback(avc, NULL, NULL);
    before = rec.count;
    FAILS(arb_avc_has_perm(avc, user, shadow, file, write, &d, NULL), -1, EACCES);
    CHECK(rec.count == before);

    arb_sid out = 0, again = 0;
    arb_sid passwd = sid_of(srv, "system_u:system_r:passwd_t:s0");
    arb_sid etc = sid_of(srv, "system_u:object_r:etc_t:s0");
    OK(arb_avc_compute_create(avc, passwd, etc, file, &out));
    OK(arb_avc_compute_create(avc, passwd, etc, file, &again));
    CHECK(out != 0 && out == again);
    FAILS(arb_avc_compute_create(avc, passwd, etc, file, NULL), -1, EINVAL);

    struct arb_avc_cache_stats st;
    OK(arb_avc_cache_stats(avc, &st));
    CHECK(st.entry_lookups >= 8 && st.entry_hits >= 4 && st.entry_misses >= 3);
    CHECK(st.entry_hits + st.entry_misses == st.entry_lookups);
    CHECK(st.create_lookups == 2 && st.create_misses == 1);
    FAILS(arb_avc_cache_stats(avc, NULL), -1, EINVAL);
    OK(arb_avc_reset(avc));
    OK(arb_avc_has_perm(avc, httpd, content, file, read, &d, NULL));
    struct arb_avc_cache_stats st2;
    OK(arb_avc_cache_stats(avc, &st2));
    CHECK(st2.entry_misses == st.entry_misses + 1);

    /* A policy change reaches the cache without any call to it. */
    arb_perms home_read = read;
    arb_sid home = sid_of(srv, HOME);
    FAILS(arb_avc_has_perm_noaudit(avc, httpd, home, file, home_read, &d), -1, EACCES);
    OK(arb_set_boolean(srv, "httpd_enable_homedirs", 1));
    OK(arb_commit_booleans(srv));
    OK(arb_avc_has_perm_noaudit(avc, httpd, home, file, home_read, &d));
    OK(arb_set_boolean(srv, "httpd_enable_homedirs", 0));
    OK(arb_commit_booleans(srv));

    arb_avc_free(avc);
}

/* The cache keeps its server alive: free the server first. */
static void test_avc_outlives_server(void)
{
    arb_server *srv = NULL;
    arb_avc *avc = NULL;
    OK(arb_server_builtin(&srv));
    OK(arb_avc_open(srv, 1024, 512, &avc));
    arb_sid httpd = sid_of(srv, HTTPD), content = sid_of(srv, CONTENT);
    arb_class file = arb_string_to_class(srv, "file");
    arb_perms read = perm(srv, "file", "read");
    arb_server_free(srv);
    OK(arb_avc_has_perm(avc, httpd, content, file, read, NULL, NULL));
    arb_avc_free(avc);
}

/* ---- threads ---------------------------------------------------------------------- */

struct shared {
    arb_server *srv;
    arb_avc *avc;
    int iters;
    atomic_int stop;
    atomic_int flips; /* boolean commits the writer has finished */
    atomic_int errors;
    atomic_long queries;
    atomic_long denials; /* audited denials checked */
    atomic_long records; /* records the callback received */
    arb_sid httpd, content, user, shadow, home;
    arb_class file;
    arb_perms read, write;
};

static void *checker(void *arg)
{
    struct shared *s = arg;
    struct arb_av_decision d;
    char ctx[64];
    long n = 0;
    /* Start only once the writer has committed a boolean and reloaded the policy: under
     * valgrind, which runs one thread at a time, the checkers could otherwise finish before
     * the writer is first scheduled, and nothing would have changed meanwhile. */
    while (atomic_load(&s->flips) == 0)
        sched_yield();
    for (int i = 0; i < s->iters; i++) {
        /* Invariant under every state the writer publishes. */
        if (arb_avc_has_perm(s->avc, s->httpd, s->content, s->file, s->read, &d, NULL) != 0)
            atomic_fetch_add(&s->errors, 1);
        if (arb_avc_has_perm_noaudit(s->avc, s->user, s->shadow, s->file, s->write, &d) != -1 ||
            errno != EACCES)
            atomic_fetch_add(&s->errors, 1);
        if (arb_compute_av(s->srv, s->httpd, s->content, s->file, &d) != 0 ||
            !(d.allowed & s->read))
            atomic_fetch_add(&s->errors, 1);
        /* Flips with the boolean: either answer, but never an error. */
        int r = arb_avc_has_perm_noaudit(s->avc, s->httpd, s->home, s->file, s->read, &d);
        if (r != 0 && errno != EACCES)
            atomic_fetch_add(&s->errors, 1);
        if (i % 16 == 0) {
            /* An audited denial: records reach the callback from every thread at once. */
            if (arb_avc_has_perm(s->avc, s->user, s->shadow, s->file, s->write, &d,
                                 "pid=7 comm=\"hammer\"") != -1 ||
                errno != EACCES)
                atomic_fetch_add(&s->errors, 1);
            atomic_fetch_add(&s->denials, 1);
            if (arb_check_access(s->srv, HTTPD, CONTENT, "file", "read") != 0)
                atomic_fetch_add(&s->errors, 1);
            /* New contexts issue SIDs while reloads convert the table. */
            snprintf(ctx, sizeof ctx, "user_u:object_r:tmp_t:s0");
            arb_sid sid = 0;
            char *back = NULL;
            if (arb_context_to_sid(s->srv, ctx, &sid) != 0 ||
                arb_sid_to_context(s->srv, sid, &back) != 0 || strcmp(back, ctx) != 0)
                atomic_fetch_add(&s->errors, 1);
            arb_freecon(back);
        }
        n += 4;
    }
    atomic_fetch_add(&s->queries, n);
    return NULL;
}

static void *writer(void *arg)
{
    struct shared *s = arg;
    int flips = 0;
    while (!atomic_load(&s->stop)) {
        if (arb_set_boolean(s->srv, "httpd_enable_homedirs", flips & 1) != 0 ||
            arb_commit_booleans(s->srv) != 0)
            atomic_fetch_add(&s->errors, 1);
        if (flips % 4 == 0 && arb_load_policy(s->srv, policy_path("default.33")) != 0)
            atomic_fetch_add(&s->errors, 1);
        flips++;
        atomic_store(&s->flips, flips);
    }
    return (void *)(long)flips;
}

static void count_record(void *arg, const char *record)
{
    struct shared *s = arg;
    if (strncmp(record, "avc:  denied  { write } for  pid=7 comm=\"hammer\" ", 49) == 0)
        atomic_fetch_add(&s->records, 1);
}

static void test_threads(arb_server *srv, int iters)
{
    struct shared s = {.srv = srv, .iters = iters};
    OK(arb_avc_open(srv, 0, 0, &s.avc));
    arb_avc_set_audit_callback(s.avc, count_record, &s);
    s.httpd = sid_of(srv, HTTPD);
    s.content = sid_of(srv, CONTENT);
    s.user = sid_of(srv, USER);
    s.shadow = sid_of(srv, SHADOW);
    s.home = sid_of(srv, HOME);
    s.file = arb_string_to_class(srv, "file");
    s.read = perm(srv, "file", "read");
    s.write = perm(srv, "file", "write");
    uint64_t seq = arb_server_seqno(srv);

    enum { CHECKERS = 4 };
    pthread_t t[CHECKERS], w;
    pthread_create(&w, NULL, writer, &s);
    for (int i = 0; i < CHECKERS; i++)
        pthread_create(&t[i], NULL, checker, &s);
    for (int i = 0; i < CHECKERS; i++)
        pthread_join(t[i], NULL);
    atomic_store(&s.stop, 1);
    void *flips;
    pthread_join(w, &flips);
    CHECK(atomic_load(&s.errors) == 0);
    CHECK(atomic_load(&s.records) == atomic_load(&s.denials));
    CHECK(arb_server_seqno(srv) > seq);
    printf("threads: %d checkers, %ld queries, %ld boolean flips and %ld reloads meanwhile, "
           "%ld audit records from %ld audited denials, %d errors\n",
           CHECKERS, atomic_load(&s.queries), (long)flips, ((long)flips + 3) / 4,
           atomic_load(&s.records), atomic_load(&s.denials), atomic_load(&s.errors));
    arb_avc_free(s.avc);
}

/* ---- open/reload/free cycles ------------------------------------------------------ */

static void test_cycles(int cycles)
{
    int ok = 0;
    for (int i = 0; i < cycles; i++) {
        arb_server *srv = NULL;
        arb_avc *avc = NULL;
        struct arb_av_decision d;
        char *ctx = NULL;
        if (arb_server_open(policy_path("default.33"), &srv) != 0)
            continue;
        arb_sid a = sid_of(srv, HTTPD), b = sid_of(srv, CONTENT);
        arb_class file = arb_string_to_class(srv, "file");
        if (arb_avc_open(srv, 0, 0, &avc) == 0 &&
            arb_avc_has_perm(avc, a, b, file, perm(srv, "file", "read"), &d, NULL) == 0 &&
            arb_load_policy(srv, policy_path("default.33")) == 0 &&
            arb_compute_av(srv, a, b, file, &d) == 0 && arb_sid_to_context(srv, a, &ctx) == 0)
            ok++;
        arb_freecon(ctx);
        arb_avc_free(avc);
        arb_server_free(srv);
    }
    CHECK(ok == cycles);
    printf("cycles: %d open/reload/free cycles, %d complete\n", cycles, ok);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s POLICY_DIR [CYCLES] [THREAD_ITERS]\n", argv[0]);
        return 2;
    }
    snprintf(policy_dir, sizeof policy_dir, "%s", argv[1]);
    int cycles = argc > 2 ? atoi(argv[2]) : 1000;
    int iters = argc > 3 ? atoi(argv[3]) : 20000;

    arb_server *srv = NULL;
    OK(arb_server_builtin(&srv));
    if (!srv)
        return 1;
    CHECK(arb_last_error() != NULL);
    test_null_and_bad_arguments(srv);
    test_truncated_policies(srv);
    test_names(srv);
    test_decisions(srv);
    test_unknown_handling();
    test_booleans_and_reload(srv);
    test_avc(srv);
    test_avc_outlives_server();
    test_threads(srv, iters);
    test_cycles(cycles);
    arb_server_free(srv);

    printf("api_test: %d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
