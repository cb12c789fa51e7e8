"""``pipe.start_py_workers()`` is removed.

DALI 2.4's ``Pipeline.start_py_workers()`` builds the pipeline's Python graph (what ``build()``
does first) and forks the worker processes that run ``parallel=True`` external sources' callbacks.
A converted pipeline calls its sources in this process (``rules/external_source.py``), one batch
per ``next()``: there are no workers to start, and the batches, their order and the epochs are
the ones the workers gave. What the call decided besides is when a graph error is raised, which the
first ``next()`` raises now, as for ``build()`` (``rules/pipe_build.py``).
"""

from dali_migrate.rules.base import CallSiteRule

RULE = CallSiteRule(
    id="pipe-start-py-workers",
    summary="pipe.start_py_workers() is removed",
    receiver="pipeline",
    methods=("start_py_workers",),
    rewrite=lambda call, receiver, site: None,
)
