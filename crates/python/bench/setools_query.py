"""setools' answer to "may S do P to T of class C?": the allow rules that would grant it
(TERuleQuery with indirect source/target matching, i.e. attributes included).

Run under the interpreter that has setools (Debian: /usr/bin/python3 with python3-setools).
Reads {"policy": path, "queries": [[stype, ttype, class, perm], ...], "repeats": n} on
stdin; prints {"load_s": ..., "query_s": [per-query median seconds], "granted": [bool]}.
"""

import json
import statistics
import sys
import time

import setools


def main() -> None:
    job = json.load(sys.stdin)
    t0 = time.perf_counter()
    policy = setools.SELinuxPolicy(job["policy"])
    load_s = time.perf_counter() - t0
    medians, granted = [], []
    for stype, ttype, tclass, perm in job["queries"]:
        times = []
        for _ in range(job.get("repeats", 3)):
            t = time.perf_counter()
            q = setools.TERuleQuery(policy, ruletype=["allow"], source=stype, target=ttype,
                                    tclass=[tclass], perms={perm}, perms_subset=True)
            rules = list(q.results())
            times.append(time.perf_counter() - t)
        medians.append(statistics.median(times))
        granted.append(bool(rules))
    json.dump({"load_s": load_s, "query_s": medians, "granted": granted}, sys.stdout)


if __name__ == "__main__":
    main()
