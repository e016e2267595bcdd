"""setools' Python API, timed from inside: open a policy, then each Query class's
results() a few times (median), and a policycoreutils-style pass over every type's rules.

Run the same file under both implementations, in the same session, side by side:

    /usr/bin/python3 crates/python/bench/setools_api.py POLICY            # the real setools
    python3 -m arbiter.setools crates/python/bench/setools_api.py POLICY  # arbiter.setools

Prints one JSON object: {"impl", "open_s", "queries": {name: [median_s, results]},
"per_type_s", "rss_kb"}. Resident memory is read from /proc/self/status (VmHWM) at the
end, after every query ran.
"""

import json
import statistics
import sys
import time

import setools

QUERIES = {
    "TERuleQuery allow -s httpd_t": lambda p: setools.TERuleQuery(
        p, ruletype=["allow"], source="httpd_t"),
    "TERuleQuery -t shadow_t file": lambda p: setools.TERuleQuery(
        p, target="shadow_t", tclass=["file"]),
    "TERuleQuery perms write,append": lambda p: setools.TERuleQuery(
        p, ruletype=["allow"], perms={"write", "append"}, tclass=["file"]),
    "TERuleQuery type_transition": lambda p: setools.TERuleQuery(
        p, ruletype=["type_transition"]),
    "TERuleQuery bool regex": lambda p: setools.TERuleQuery(
        p, boolean="^httpd_", boolean_regex=True),
    "TypeQuery attrs domain": lambda p: setools.TypeQuery(p, attrs=["domain"]),
    "TypeQuery name regex": lambda p: setools.TypeQuery(p, name="_exec_t$", name_regex=True),
    "TypeAttributeQuery types": lambda p: setools.TypeAttributeQuery(p, types=["httpd_t"]),
    "RoleQuery types": lambda p: setools.RoleQuery(p, types=["httpd_t"]),
    "UserQuery roles": lambda p: setools.UserQuery(p, roles=["system_r"]),
    "BoolQuery default": lambda p: setools.BoolQuery(p, default=True),
    "ObjClassQuery perms": lambda p: setools.ObjClassQuery(p, perms={"read"}),
    "CommonQuery perms": lambda p: setools.CommonQuery(p, perms={"ioctl"}),
    "PolCapQuery": lambda p: setools.PolCapQuery(p),
    "UserQuery range subset": lambda p: setools.UserQuery(p, range_="s0", range_subset=True),
    "SensitivityQuery dom": lambda p: setools.SensitivityQuery(p, sens="s0", sens_dom=True),
    "CategoryQuery regex": lambda p: setools.CategoryQuery(p, name="^c1", name_regex=True),
    "MLSRuleQuery process": lambda p: setools.MLSRuleQuery(p, tclass=["process"]),
    "ConstraintQuery mlsconstrain": lambda p: setools.ConstraintQuery(
        p, ruletype=["mlsconstrain"]),
    "ConstraintQuery type_": lambda p: setools.ConstraintQuery(p, type_="domain"),
    "DefaultQuery": lambda p: setools.DefaultQuery(p),
    "InitialSIDQuery type_": lambda p: setools.InitialSIDQuery(p, type_="kernel_t"),
    "FSUseQuery fs": lambda p: setools.FSUseQuery(p, fs="ext4"),
    "GenfsconQuery fs": lambda p: setools.GenfsconQuery(p, fs="proc"),
    "PortconQuery ports": lambda p: setools.PortconQuery(p, ports=(80, 80)),
    "PortconQuery overlap": lambda p: setools.PortconQuery(
        p, ports=(1, 1024), ports_overlap=True),
    "NetifconQuery": lambda p: setools.NetifconQuery(p),
    "NodeconQuery": lambda p: setools.NodeconQuery(p, ip_version="ipv4"),
}


def rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def main():
    path = sys.argv[1]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    t = time.perf_counter()
    policy = setools.SELinuxPolicy(path)
    open_s = time.perf_counter() - t
    out = {"impl": setools.__name__, "open_s": open_s, "queries": {}}
    for name, make in QUERIES.items():
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            n = sum(1 for _ in make(policy).results())
            times.append(time.perf_counter() - t)
        out["queries"][name] = [statistics.median(times), n]
    # policycoreutils-style: for each of 5 domains, its allow rules on files, read field
    # by field.
    domains = [t for t in setools.TypeQuery(policy, attrs=["domain"]).results()][:5]
    t = time.perf_counter()
    for d in domains:
        for r in setools.TERuleQuery(policy, ruletype=["allow"], source=d,
                                     tclass=["file"]).results():
            (str(r.source), str(r.target), sorted(r.perms))
    out["per_type_s"] = time.perf_counter() - t
    out["rss_kb"] = rss_kb()
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
