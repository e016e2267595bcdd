"""Corpus: PolicyChecker (sechecker's checks) with configurations built from the policy's
own names, and refused configurations (exception class and message).

Normalised, as setools' own output varies there: the start/end time lines, and the order
inside runs of "Expected rule with source/target ... not found." lines (a Python set in
setools). MODE ``sample`` (Debian's policies) leaves ro_execs out: setools needs minutes to
an hour for it there.
"""

import io
import os
import sys
import tempfile

import setools
from setools.checker import PolicyChecker
from setools.exception import InvalidCheckerConfig

p = setools.SELinuxPolicy(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else "full"


def normalise(text):
    out, run, kind = [], [], None
    for line in text.splitlines():
        k = None
        for side in ("source", "target"):
            if line.startswith('    * Expected rule with {} "'.format(side)):
                k = side
        if k != kind:
            out += sorted(run)
            run, kind = [], k
        if k:
            run.append(line)
        elif line.startswith(("Start time: ", "End time: ")):
            out.append(line.split(":")[0] + ": <time>")
        else:
            out.append(line)
    return "\n".join(out + sorted(run))


types = sorted(str(t) for t in p.types())
attrs = sorted(str(a) for a in p.typeattributes())
roles = sorted(str(r) for r in p.roles())
classes = sorted((c for c in p.classes() if c.perms), key=str)
cls = classes[len(classes) // 2]
perm = sorted(cls.perms)[0]

sections = [
    "[te_class]\ncheck_type = assert_te\ntclass = {}\nexempt_source = {} nosuch_t\n"
    "expect_target = {}\n".format(cls, types[0], types[-1]),
    "[te_source]\ncheck_type = assert_te\ndesc = rules of %(source)s\nsource = {}\n"
    "perms = {}\nexempt_target = {}\n".format(types[1], perm, types[2]),
    "[rbac]\ncheck_type = assert_rbac\nsource = {}\nexpect_target = {}\n"
    "exempt_target = {}\n".format(roles[0], roles[-1], roles[len(roles) // 2]),
    "[attr_missing]\ncheck_type = empty_typeattr\nattr = nosuch_attr\nmissing_ok = yes\n",
    "[off]\ncheck_type = empty_typeattr\nattr = nosuch_attr\nmissing_ok = 1\ndisable = not now\n",
]
if attrs:
    sections.append("[attr]\ncheck_type = empty_typeattr\nattr = {}\n".format(attrs[0]))
if mode == "full":
    sections += [
        "[ro]\ncheck_type = ro_execs\n",
        "[ro_exempt]\ncheck_type = ro_execs\nexempt_file = {}\nexempt_write_domain = {}\n"
        "exempt_exec_domain = {}\n".format(types[3], attrs[-1] if attrs else types[4], types[5]),
    ]

BAD = [
    "",
    "[a]\ndesc = x\n",
    "[a]\ncheck_type = nosuch\n",
    "[a]\ncheck_type = ro_execs\nattr = x\n",
    "[a]\ncheck_type = assert_te\nsource = nosuch_t\n",
    "[a]\ncheck_type = assert_te\nperms = nosuchperm\n",
    "[a]\ncheck_type = assert_te\nexempt_source = {}\n".format(types[0]),
    "[a]\ncheck_type = assert_rbac\nexpect_source = nosuch_r\nsource = {}\n".format(roles[0]),
    "[a]\ncheck_type = empty_typeattr\nattr = {}\n".format(types[0]),
    "[a]\ncheck_type = ro_execs\n[a]\ncheck_type = ro_execs\n",
    "[a]\ncheck_type = ro_execs\ndesc = 100% sure\n",
]

with tempfile.TemporaryDirectory() as tmp:
    os.chdir(tmp)
    with open("checks.ini", "w") as f:
        f.write("\n".join(sections))
    pc = PolicyChecker(p, "checks.ini")
    print("config", pc.config)
    print("checks", [(c.checkname, c.check_type, c.desc, c.disable) for c in pc.checks])
    out = io.StringIO()
    failures = pc.run(output=out)
    print("failures", failures)
    print(normalise(out.getvalue()))
    for i, text in enumerate(BAD):
        name = "bad{}.ini".format(i)
        with open(name, "w") as f:
            f.write(text)
        try:
            PolicyChecker(p, name)
            print(name, "accepted")
        except InvalidCheckerConfig as e:
            print(name, type(e).__name__, e)
        except Exception as e:  # interpolation: a configparser error in both
            print(name, "other", isinstance(e, InvalidCheckerConfig), e)
    try:
        PolicyChecker(p, "does_not_exist.ini")
    except InvalidCheckerConfig as e:
        print("missing", type(e).__name__, e)
