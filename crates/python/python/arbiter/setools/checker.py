"""setools 4.4.1's ``PolicyChecker`` (``setools.checker``): sechecker's configuration-driven
checks (assert_te, assert_rbac, empty_typeattr, ro_execs) on arbiter's engine.

The configuration is parsed and validated in Rust (``arbiter_analysis::checker``) when the
checker is made or its ``config`` is set; ``run()`` writes sechecker's report to ``output``.
Known differences: the "Expected rule ... not found." lines are sorted by name (setools
prints them in Python set order, which changes from run to run); interpolation errors are
raised as ``configparser.Error`` with configparser's message (setools raises its
subclasses); ``checks`` holds light check records (name, type, description, disable
reason), not setools' checker module objects.
"""

import configparser
import os
import sys
from datetime import datetime, timezone

from .. import _native
from .exception import (
    InvalidCheckerConfig,
    InvalidCheckerModule,
    InvalidCheckOption,
    InvalidCheckValue,
)

SECTION_SEPARATOR = "---------------------------------------------------------\n\n"

_ERRORS = {
    "config": InvalidCheckerConfig,
    "module": InvalidCheckerModule,
    "option": InvalidCheckOption,
    "value": InvalidCheckValue,
}


class Check:
    """One configured check: ``checkname``, ``check_type``, ``desc``, ``disable``."""

    def __init__(self, policy, checkname, check_type, desc, disable):
        self.policy = policy
        self.checkname = checkname
        self.check_type = check_type
        self.desc = desc
        self.disable = disable

    def __repr__(self):
        return "<Check {!r} ({})>".format(self.checkname, self.check_type)


def _policy_source(policy):
    """What the native checker reads the policy from: its file, else its image."""
    db = policy._db
    if db.path is not None:
        return os.fspath(db.path)
    return bytes(db.image())


class PolicyChecker:
    """Configuration file-driven automated policy analysis checks."""

    def __init__(self, policy, configpath):
        self.policy = policy
        self.checks = []
        self.config = configpath

    @property
    def config(self):
        return self._configpath

    @config.setter
    def config(self, configpath):
        try:
            db = _native.CheckerDb(_policy_source(self.policy), os.fspath(configpath))
        except ValueError as e:
            if len(e.args) != 3 or e.args[0] not in (*_ERRORS, "interpolation", "policy"):
                raise
            kind, message, _location = e.args
            if kind == "interpolation":
                raise configparser.Error(message) from None
            if kind == "policy":
                raise InvalidCheckerConfig(message) from None
            raise _ERRORS[kind](message) from None
        self._db = db
        self._configpath = configpath
        self.checks = [Check(self.policy, n, t, d, x) for n, t, d, x in db.checks()]

    def run(self, output=sys.stdout):
        """Run all configured checks and print the report to the file-like ``output``;
        returns the number of failures."""
        output.write(SECTION_SEPARATOR)
        output.write("Policy check configuration: {}\n".format(self.config))
        output.write("Policy being checked: {}\n".format(self.policy))
        output.write("Start time: {}\n\n".format(datetime.now(timezone.utc)))
        body, failures = self._db.run(str(self.config), str(self.policy))
        output.write(body)
        output.write("Policy check configuration: {}\n".format(self.config))
        output.write("Policy being checked: {}\n".format(self.policy))
        output.write("End time: {}\n".format(datetime.now(timezone.utc)))
        return failures
