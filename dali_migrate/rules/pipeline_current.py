"""``Pipeline.current().device_id`` / ``.batch_size`` / ``.max_batch_size`` inside a pipeline -> the
converted function's setting of that name.

DALI's multi-GPU examples shard readers with ``shard_id=Pipeline.current().device_id``: while the
graph is defined, the pipeline being built is the current one and these attributes are the
settings it was made with (``device_id`` None when none was given, as the converted function's
default). The converted function takes the same settings as parameters, so the attribute becomes
the parameter. Other uses of ``Pipeline.current()`` (keeping the object, other attributes) stop
the conversion, as does a pipeline that binds the setting's name itself other than as
``device_id = Pipeline.current().device_id``.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from dali_migrate.dali_imports import PIPELINE_CLASS
from dali_migrate.rules.base import Rule

#: attribute of the current pipeline -> the converted function's setting
SETTING_OF = {"device_id": "device_id", "batch_size": "batch_size", "max_batch_size": "batch_size"}


def current_call(node, names) -> bool:
    """``node`` is ``Pipeline.current()`` (the class as the file imports it)."""
    return (
        type(node) is cst.Call and not node.args and type(node.func) is cst.Attribute
        and node.func.attr.value == "current" and names.qualify(node.func.value) in PIPELINE_CLASS
    )


def setting_read(node, names) -> Optional[str]:
    """The setting ``node`` reads when it is ``Pipeline.current().<attribute>`` of SETTING_OF."""
    if type(node) is cst.Attribute and node.attr.value in SETTING_OF and current_call(node.value, names):
        return SETTING_OF[node.attr.value]
    return None


def reads_itself(stmt, current: set) -> bool:
    """``stmt`` is ``<setting> = <a read of ``current``, the ids of Pipeline.current().<setting>
    attributes>``, as ``device_id = Pipeline.current().device_id``: in the converted function the
    setting's parameter holds that value already, and the statement goes."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return False
    assign = stmt.body[0]
    return (len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) and id(assign.value) in current
            and SETTING_OF.get(assign.value.attr.value) == assign.targets[0].target.value)


def self_read_names(info) -> set:
    """The names ``info``'s statements bind as ``device_id = Pipeline.current().device_id`` does,
    which hold the setting of the converted function (:func:`reads_itself`)."""
    return {info.statements[i].body[0].targets[0].target.value for i in info.self_reads}


def blocker(info, reads: list) -> Optional[str]:
    """Why the reads (``[(Attribute, setting)]``) of ``info``'s pipeline cannot become its settings."""
    from dali_migrate.pipeline_analysis import _assigned_names

    for _, setting in reads:
        if setting in info.computed_settings:
            return f"Pipeline.current().{setting} where the setting is computed from the class's arguments: convert by hand"
        name = info.setting(setting)
        for i, stmt in enumerate(info.statements):
            if name not in _assigned_names(stmt):
                continue
            if i not in info.self_reads or name != setting:
                return (f"the pipeline binds `{name}` itself and reads Pipeline.current().{setting}: the converted "
                        f"function's `{name}` would be that value; convert by hand")
    return None


def replacements(info, reads: list) -> dict:
    """{id(Attribute as written): the name of the setting in the converted function}."""
    return {id(node): cst.Name(info.setting(setting)) for node, setting in reads}


RULE = Rule(
    id="pipeline-current",
    summary="Pipeline.current().device_id / .batch_size in a pipeline become the converted function's settings",
    order=96,
)
