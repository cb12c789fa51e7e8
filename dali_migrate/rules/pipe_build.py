"""``pipe.build()`` is removed: a converted pipeline is ready when made."""

from dali_migrate.rules.base import CallSiteRule

RULE = CallSiteRule(
    id="pipe-build",
    summary="pipe.build() is removed",
    receiver="pipeline",
    methods=("build",),
    rewrite=lambda call, receiver, site: None,
)
