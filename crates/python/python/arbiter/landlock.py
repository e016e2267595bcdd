"""Landlock in userspace: would these layers allow an operation, and which layer denies it —
``arbiter landlock check`` as objects, on the evaluator that runs the kernel's algorithms
(Linux 6.18, ABI 7) against this machine's filesystem.

    from arbiter.landlock import Landlock
    ll = Landlock(["base.toml", "app.toml"])          # landlockconfig files, one per layer
    ev = ll.check("write /etc/passwd")
    ev.verdict, ev.errno, ev.explanation               # "denied", "EACCES", ["layer 1 denies ..."]

Operations are those of ``arbiter landlock check``: ``read|write|readwrite|readdir|exec|
mkdir|symlink|unlink|rmdir|truncate|mount PATH``, ``open PATH FLAGS``, ``mknod PATH KIND``,
``ioctl PATH CMD``, ``rename|exchange|link OLD NEW``, ``bind-tcp|connect-tcp PORT``.
"""

from ._native import Evaluation, Landlock, LandlockConfigError  # noqa: F401

__all__ = ["Evaluation", "Landlock", "LandlockConfigError"]
