"""Opt-in switch: make `import nvidia.dali.experimental.dynamic as ndd` give this runtime.

`install()` puts the runtime (and its submodules) into sys.modules under the native names; code
imported afterwards gets the runtime. `uninstall()` restores what was there. `install_from_env()`
does it when DALI_MIGRATE_RUNTIME=1 (the CLI and test fixtures call it).
"""

import contextlib
import os
import sys

NATIVE = "nvidia.dali.experimental.dynamic"
_saved = None


def _runtime_modules():
    root = sys.modules[__name__.rsplit(".", 1)[0]]
    prefix = root.__name__
    return {NATIVE + name[len(prefix):]: mod for name, mod in list(sys.modules.items())
            if name == prefix or name.startswith(prefix + ".")
            and not name.rsplit(".", 1)[1].startswith("_")}


def install():
    """Route `nvidia.dali.experimental.dynamic` (and its submodules) to the runtime."""
    global _saved
    if _saved is not None:
        return
    mods = _runtime_modules()
    _saved = {name: sys.modules.get(name) for name in mods}
    # also hide native submodules not shadowed by ours, so nothing half-native is picked up
    for name in [n for n in sys.modules if n.startswith(NATIVE + ".") and n not in mods]:
        _saved[name] = sys.modules.pop(name)
    sys.modules.update(mods)
    # the parent package must be real and carry the attribute: `import a.b.c as x` binds
    # through getattr on the parents
    import importlib

    experimental = importlib.import_module("nvidia.dali.experimental")
    _saved["__attr__"] = experimental.__dict__.get("dynamic")
    experimental.dynamic = mods[NATIVE]


def uninstall():
    global _saved
    if _saved is None:
        return
    attr = _saved.pop("__attr__", None)
    for name, mod in _saved.items():
        if mod is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = mod
    experimental = sys.modules.get("nvidia.dali.experimental")
    if experimental is not None:
        if attr is None:
            if hasattr(experimental, "dynamic"):
                delattr(experimental, "dynamic")
        else:
            experimental.dynamic = attr
    _saved = None


def installed():
    return _saved is not None


def install_from_env(environ=None):
    """install() if DALI_MIGRATE_RUNTIME is set to 1/true/yes; returns whether it is on."""
    val = (environ if environ is not None else os.environ).get("DALI_MIGRATE_RUNTIME", "")
    if val.strip().lower() in ("1", "true", "yes", "on"):
        install()
    return installed()


@contextlib.contextmanager
def installed_runtime():
    """Context manager form of install()/uninstall()."""
    was = installed()
    install()
    try:
        yield sys.modules[NATIVE]
    finally:
        if not was:
            uninstall()
