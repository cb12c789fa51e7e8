import textwrap

from dali_migrate.config import Config
from dali_migrate.engine import convert_source

HEADER = "import nvidia.dali.fn as fn\nimport nvidia.dali.types as types\nfrom nvidia.dali import pipeline_def\n"


def convert(body: str, header: str = HEADER, rules=None) -> str:
    config = Config(enabled_rules=frozenset(rules)) if rules is not None else None
    src = header + textwrap.dedent(body)
    return convert_source(src, config=config).output


def unindented(text: str) -> str:
    """``text`` with every line's indentation taken off: the converted lines in order, whether the
    loop stands in the function or in a nested generator (a source made with the pipeline)."""
    return "".join(line.lstrip() for line in text.splitlines(keepends=True))


def pipeline(body: str, decorator: str = "@pipeline_def(batch_size=4)") -> str:
    """Convert a one-pipeline module whose function body is ``body``."""
    return convert(f"{decorator}\ndef p():\n" + textwrap.indent(textwrap.dedent(body), "    "))


def without_rule(src: str, rule_id: str) -> str:
    """``src`` converted with every rule but ``rule_id``."""
    from dali_migrate.rules import all_rules

    return convert(src, header="", rules=[r.id for r in all_rules() if r.id != rule_id])


def run_both(tmp_path, src: str, out: str, function: str, *args):
    """(what ``function(*args)`` of the original gives, what the converted code's gives)."""
    from _modules import load_source

    want = getattr(load_source(tmp_path, "original", src), function)(*args)
    got = getattr(load_source(tmp_path, "converted", out), function)(*args)
    return want, got


def first_marker(out: str) -> str:
    """The first `# dali-migrate:` line of a converted text (the test fails where there is none)."""
    lines = [ln for ln in out.splitlines() if "dali-migrate:" in ln]
    assert lines, out
    return lines[0]
