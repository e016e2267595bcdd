/*
 * Differential test from C: arb_compute_av against libsepol's sepol_compute_av on random
 * queries of one policy (queries.h): every (allowed, auditallow, auditdeny) must match,
 * and the two must agree on which contexts are valid and on class numbering.
 *
 * Half the queries run under the policy's boolean defaults, the other half in ROUNDS
 * rounds, each under booleans set at random in both engines.
 *
 * Usage: sepol_diff POLICY [QUERIES] [SEED] [ROUNDS]
 */
#define _GNU_SOURCE
#include "queries.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s POLICY [QUERIES] [SEED] [ROUNDS]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    long queries = argc > 2 ? atol(argv[2]) : 100000;
    uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x5eed0c0ffee;
    long rounds = argc > 4 ? atol(argv[4]) : 5;
    if (queries_open(path, seed) != 0)
        return 1;

    long mismatches = 0;
    for (uint32_t c = 1; c <= nclasses; c++) {
        const char *name = pdb->p_class_val_to_name[c - 1];
        if (name && arb_string_to_class(srv, name) != c && mismatches++ < 10)
            fprintf(stderr, "MISMATCH class %s: libsepol %u, arbiter %u\n", name, c,
                    arb_string_to_class(srv, name));
    }

    /* Half the queries under the policy's boolean defaults, then ROUNDS rounds under
     * random booleans. */
    long nonzero = 0, kinds[3] = {0, 0, 0};
    long per_round = rounds ? queries / 2 / rounds : 0;
    for (long i = 0; i < queries; i++) {
        if (per_round && i >= queries - per_round * rounds &&
            (i - (queries - per_round * rounds)) % per_round == 0) {
            long on = queries_flip_booleans();
            if (on < 0)
                return 1;
            printf("sepol_diff: booleans set at random (%ld of %u true) from query %ld\n", on,
                   pdb->p_bools.nprim, i);
        }
        struct query q;
        next_query(&q);
        kinds[q.kind]++;
        struct arb_av_decision a;
        struct sepol_av_decision o;
        int ra = arb_compute_av(srv, q.s->arb, q.t->arb, (arb_class)q.cls, &a);
        int ro = sepol_compute_av(q.s->sepol, q.t->sepol, (sepol_security_class_t)q.cls, ~0u, &o);
        if (ra != 0 || ro != 0 || a.allowed != o.allowed || a.auditallow != o.auditallow ||
            a.auditdeny != o.auditdeny) {
            if (mismatches++ < 10) {
                char *sc = NULL, *tc = NULL;
                arb_sid_to_context(srv, q.s->arb, &sc);
                arb_sid_to_context(srv, q.t->arb, &tc);
                fprintf(stderr,
                        "MISMATCH %s %s %s: arbiter rc %d %08x %08x %08x, libsepol rc %d "
                        "%08x %08x %08x\n",
                        sc, tc, pdb->p_class_val_to_name[q.cls - 1], ra, a.allowed,
                        a.auditallow, a.auditdeny, ro, o.allowed, o.auditallow, o.auditdeny);
                arb_freecon(sc);
                arb_freecon(tc);
            }
        }
        nonzero += ra == 0 && a.allowed != 0;
    }
    mismatches += validity_mismatches;
    printf("sepol_diff: %s: %ld queries (%ld rule keys, %ld subject x type, %ld subject x "
           "subject; %ld with some permission allowed), %u subject contexts, %ld contexts "
           "refused by both, %ld validity disagreements, %ld mismatches\n",
           path, queries, kinds[0], kinds[1], kinds[2], nonzero, nsubjects, invalid_both,
           validity_mismatches, mismatches);
    queries_close();
    return mismatches ? 1 : 0;
}
