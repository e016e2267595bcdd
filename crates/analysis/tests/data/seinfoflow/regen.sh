#!/bin/sh
# Regenerates the recorded seinfoflow 4.4.1 outputs on Debian's default policy that
# seinfoflow_oracle.rs compares against (seinfoflow takes ≈30 s a query there, too slow
# for every CI run). Each NAME.args holds the arguments, POLICY standing for the policy.
set -eu
cd "$(dirname "$0")"
policy=/etc/selinux/default/policy/policy.33
for a in *.args; do
    n=${a%.args}
    # shellcheck disable=SC2046
    set +e
    PYTHONHASHSEED=1 seinfoflow $(sed "s|POLICY|$policy|" "$a") > "$n.out"
    echo $? > "$n.rc"
    set -e
done
