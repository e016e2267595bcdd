/*
 * libarbiter from C, side by side with libsepol: arb_compute_av and sepol_compute_av on
 * the same random queries of one policy (tests/c/queries.h), and arb_avc_has_perm on
 * cache hits. Prints one line per measurement: NAME<TAB>MEDIAN_NS<TAB>MIN_NS (thread CPU
 * time per call, over RUNS runs), and writes the queries (scon, tcon, class value) to QUERIES_OUT so that
 * the Rust side (examples/bench_rust.rs) can time the same ones.
 *
 * Usage: bench POLICY QUERIES_OUT [QUERIES] [RUNS]
 */
#define _GNU_SOURCE
#include "../tests/c/queries.h"
#include <time.h>

/* This thread's CPU time: the machine is shared, and wall time would count the time
 * other processes hold the cores. */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, double *ns, int runs)
{
    qsort(ns, runs, sizeof *ns, cmp_double);
    printf("%s\t%.2f\t%.2f\n", name, ns[runs / 2], ns[0]);
}

static volatile uint32_t sink;

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s POLICY QUERIES_OUT [QUERIES] [RUNS]\n", argv[0]);
        return 2;
    }
    int nq = argc > 3 ? atoi(argv[3]) : 20000;
    int runs = argc > 4 ? atoi(argv[4]) : 15;
    if (nq < 1 || runs < 1 || runs > 1000)
        return 2;
    if (queries_open(argv[1], 0xbe7c4) != 0)
        return 1;

    struct query *q = malloc(nq * sizeof *q);
    FILE *out = fopen(argv[2], "w");
    if (!q || !out) {
        perror(argv[2]);
        return 1;
    }
    for (int i = 0; i < nq; i++) {
        next_query(&q[i]);
        char *s = NULL, *t = NULL;
        if (arb_sid_to_context(srv, q[i].s->arb, &s) || arb_sid_to_context(srv, q[i].t->arb, &t))
            return 1;
        fprintf(out, "%s\t%s\t%u\n", s, t, q[i].cls);
        arb_freecon(s);
        arb_freecon(t);
    }
    fclose(out);

    /* Uncached decisions, from flat arrays of SIDs (as the Rust side holds them): all runs
     * of one engine, then all of the other, so that neither starts its runs with caches
     * filled by the other. */
    struct {
        arb_sid s, t;
        arb_class c;
    } *aq = malloc(nq * sizeof *aq);
    struct {
        sepol_security_id_t s, t;
        sepol_security_class_t c;
    } *sq = malloc(nq * sizeof *sq);
    for (int i = 0; i < nq; i++) {
        aq[i].s = q[i].s->arb;
        aq[i].t = q[i].t->arb;
        aq[i].c = (arb_class)q[i].cls;
        sq[i].s = q[i].s->sepol;
        sq[i].t = q[i].t->sepol;
        sq[i].c = (sepol_security_class_t)q[i].cls;
    }
    double *arb = malloc(runs * sizeof *arb), *sep = malloc(runs * sizeof *sep);
    struct arb_av_decision d;
    struct sepol_av_decision o;
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (int i = 0; i < nq; i++) {
            arb_compute_av(srv, aq[i].s, aq[i].t, aq[i].c, &d);
            sink += d.allowed;
        }
        arb[r] = (now_ns() - t0) / nq;
    }
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (int i = 0; i < nq; i++) {
            sepol_compute_av(sq[i].s, sq[i].t, sq[i].c, ~0u, &o);
            sink += o.allowed;
        }
        sep[r] = (now_ns() - t0) / nq;
    }
    report("c arb_compute_av", arb, runs);
    report("libsepol sepol_compute_av", sep, runs);

    /* Cache hits: 256 granted triples, warmed, checked round-robin. */
    enum { HOT = 256 };
    struct {
        arb_sid s, t;
        arb_class c;
        arb_perms p;
    } hot[HOT];
    int nhot = 0;
    for (int i = 0; i < nq && nhot < HOT; i++) {
        if (arb_compute_av(srv, q[i].s->arb, q[i].t->arb, (arb_class)q[i].cls, &d) == 0 &&
            d.allowed) {
            hot[nhot].s = q[i].s->arb;
            hot[nhot].t = q[i].t->arb;
            hot[nhot].c = (arb_class)q[i].cls;
            hot[nhot].p = d.allowed & -d.allowed;
            nhot++;
        }
    }
    arb_avc *avc = NULL;
    if (nhot == 0 || arb_avc_open(srv, 0, 8192, &avc) != 0) {
        fprintf(stderr, "bench: no granted triple or no cache: %s\n", arb_last_error());
        return 1;
    }
    for (int i = 0; i < nhot; i++)
        arb_avc_has_perm(avc, hot[i].s, hot[i].t, hot[i].c, hot[i].p, NULL, NULL);
    const long calls = 2000000;
    double *hit = malloc(runs * sizeof *hit), *hit_extra = malloc(runs * sizeof *hit_extra);
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++) {
            int k = i & (HOT - 1);
            k = k < nhot ? k : 0;
            sink += arb_avc_has_perm(avc, hot[k].s, hot[k].t, hot[k].c, hot[k].p, &d, NULL);
        }
        double t1 = now_ns();
        for (long i = 0; i < calls; i++) {
            int k = i & (HOT - 1);
            k = k < nhot ? k : 0;
            sink += arb_avc_has_perm(avc, hot[k].s, hot[k].t, hot[k].c, hot[k].p, &d,
                                     "pid=1234 comm=\"bench\"");
        }
        double t2 = now_ns();
        hit[r] = (t1 - t0) / calls;
        hit_extra[r] = (t2 - t1) / calls;
    }
    report("c arb_avc_has_perm hit", hit, runs);
    /* One triple over and over: the best case (what a tight loop on one object sees). */
    double *one = malloc(runs * sizeof *one);
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++)
            sink += arb_avc_has_perm(avc, hot[0].s, hot[0].t, hot[0].c, hot[0].p, &d, NULL);
        one[r] = (now_ns() - t0) / calls;
    }
    report("c arb_avc_has_perm hit, one triple", one, runs);
    /* The floor of any call: PLT, catch_unwind, the handle check, one atomic load. */
    double *floor_ns = malloc(runs * sizeof *floor_ns);
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        for (long i = 0; i < calls; i++)
            sink += arb_avc_getenforce(avc);
        floor_ns[r] = (now_ns() - t0) / calls;
    }
    report("c arb_avc_getenforce (call floor)", floor_ns, runs);
    report("c arb_avc_has_perm hit, audit_extra", hit_extra, runs);
    struct arb_avc_cache_stats st;
    arb_avc_cache_stats(avc, &st);
    fprintf(stderr, "bench: %d queries, %d hot triples, cache hits %llu of %llu lookups\n", nq,
            nhot, (unsigned long long)st.entry_hits, (unsigned long long)st.entry_lookups);
    arb_avc_free(avc);
    queries_close();
    free(q);
    free(aq);
    free(sq);
    return 0;
}
