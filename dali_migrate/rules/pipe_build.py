"""``pipe.build()`` is removed: a converted pipeline is ready when made.

Left to a person: a ``build()`` inside the body of a ``try`` with handlers. Building is where a
pipeline checks what it was given (a reader's files exist, arguments are valid), and the handler
catches that (``except RuntimeError: print("bad data directory"); sys.exit(0)``); converted, the
same errors come at the first ``next()``, outside the handler."""

import libcst as cst

from dali_migrate.rules.base import CallSiteRule


def _blocker(call, site):
    parents = getattr(site, "parents", None)
    if parents is None:
        return None
    node, up = call, parents.of(call)
    while up is not None and not isinstance(up, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(up, cst.Try) and up.handlers and node is up.body:
            return ("pipe.build() inside a `try` with handlers: building is where a pipeline checks its reader's files and "
                    "arguments, which the handler catches; converted, such errors come at the first next(), outside it: "
                    "convert by hand")
        node, up = up, parents.of(up)
    return None


RULE = CallSiteRule(
    id="pipe-build",
    summary="pipe.build() is removed (not inside a try with handlers)",
    receiver="pipeline",
    methods=("build",),
    rewrite=lambda call, receiver, site: None,
    blocker=_blocker,
)
