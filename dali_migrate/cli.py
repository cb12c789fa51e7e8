"""The `dali-migrate` command line. Subcommands hang off `main` (``@main.command()``).

Importing this module stays cheap (click, pathspec): the codemod (libcst) is imported when a
command needs it, so ``--version`` and ``--help`` answer at once.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Callable, Iterator, Optional

import click

from dali_migrate import __version__, settings, walk
from dali_migrate.config import NATIVE_NDD, Config

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}
#: exit status for a bad configuration (as report.EXIT_ERROR, and click's usage errors)
_EXIT_CONFIG = 2


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="dali-migrate")
def main() -> None:
    """Move NVIDIA DALI pipeline-mode code to dynamic mode (ndd)."""


def _check_module_name(ctx, param, value: Optional[str]) -> Optional[str]:
    if value is not None and not settings.DOTTED_NAME.match(value):
        raise click.BadParameter(f"{value!r} is not a dotted module name")
    return value


def _split_rules(ctx, param, value: Optional[str]) -> Optional[tuple]:
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())


@main.command(short_help="Convert DALI pipeline-mode code in place (or --diff / --check).")
@click.argument(
    "paths", nargs=-1, required=True,
    type=click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path),
)
@click.option("--diff", is_flag=True, help="Print a unified diff to stdout; write nothing.")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 if any file would change or still has markers.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a JSON report of every file to FILE.")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Skip paths matching GLOB (gitignore syntax). Repeatable.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: all cores].")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or summary; errors only.")
@click.option("--ndd-module", default=None, callback=_check_module_name, metavar="NAME",
              help=f"Module the converted code imports as ndd [default: ndd-module in "
                   f"pyproject.toml, else {NATIVE_NDD}].")
@click.option("--rules", "rules", default=None, callback=_split_rules, metavar="ID,ID...",
              help="Run only these rules (comma-separated ids; replaces `rules` in pyproject.toml).")
@click.option("--disable-rule", "disable_rules", multiple=True, metavar="ID",
              help="Do not run rule ID (adds to `disable-rules` in pyproject.toml). Repeatable.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE",
              help="Read [tool.dali-migrate] from FILE [default: the nearest pyproject.toml "
                   "with that table, from the paths' common directory up to the repository root].")
@click.pass_context
def convert(ctx, paths, diff, check, report_path, exclude, jobs, quiet, ndd_module, rules,
            disable_rules, config_path) -> None:
    """Convert PATH... (files or directories) in place."""
    from dali_migrate import outside_users, report, runner  # the codemod itself: libcst, the rules, the catalog

    try:
        file_settings = settings.discover(paths, config_path)
        config = _config(file_settings, ndd_module=ndd_module, rules=rules, disable_rules=disable_rules)
    except settings.SettingsError as e:
        click.echo(f"dali-migrate: error: {e}", err=True)
        ctx.exit(_EXIT_CONFIG)
    for warning in _warnings(file_settings):
        _say(f"dali-migrate: warning: {warning}", quiet)
    files = walk.find_files(paths, exclude)
    selects = file_settings.selector()  # [tool.dali-migrate] include/exclude
    files = [f for f in files if selects(f)]
    write = not (diff or check)
    options = runner.Options(
        config=config,
        write=write,
        diff=diff,
        # Lets tests put a fake codemod in place, also in worker processes (it is pickled).
        convert=(ctx.obj or {}).get("convert"),
        # files of the project that import a converted file's definitions: they stay as they were
        project=outside_users.Scope(tops=tuple(str(p) for p in paths)),
    )
    if not files:
        _say("no Python files found", quiet)
        ctx.exit(report.EXIT_CLEAN)
    try:
        with _progress(len(files), enabled=not quiet) as update:
            results = runner.run(files, options, jobs=jobs, on_result=update)
    except KeyboardInterrupt:
        click.echo("\ndali-migrate: interrupted; every file is either as it was or fully converted",
                   err=True)
        ctx.exit(report.EXIT_INTERRUPTED)

    if diff:
        for r in results:
            if r.diff:
                click.echo(r.diff, nl=False)
    if report_path is not None:
        try:
            report.write_report(report_path, results, mode="diff" if diff else "check" if check else "write")
        except OSError as e:
            click.echo(f"dali-migrate: cannot write report {report_path}: {e.strerror or e}", err=True)
            ctx.exit(report.EXIT_ERROR)
    _print_summary(results, written=write, quiet=quiet)
    ctx.exit(report.exit_code(results))


def _config(fs: "settings.FileSettings", *, ndd_module, rules, disable_rules) -> Config:
    """Command-line flags over the file's settings over the defaults."""
    if rules is not None:
        settings.check_rule_ids(rules, "--rules")
    settings.check_rule_ids(disable_rules, "--disable-rule")
    enabled = rules if rules is not None else fs.rules
    disabled = set(fs.disable_rules) | set(disable_rules)
    enabled_rules = None
    if enabled is not None or disabled:
        from dali_migrate.rules import all_rules

        chosen = set(enabled) if enabled is not None else {r.id for r in all_rules()}
        enabled_rules = frozenset(chosen - disabled)
    return Config(
        ndd_module=ndd_module or fs.ndd_module or NATIVE_NDD,
        enabled_rules=enabled_rules,
        marker_prefix=fs.marker_style or Config.marker_prefix,
    )


def _warnings(fs: "settings.FileSettings") -> list:
    if fs.target_dali is None:
        return []
    from dali_migrate.catalog import load as load_catalog

    warning = settings.target_dali_warning(fs.target_dali, load_catalog().dali_version)
    return [f"{fs.path}: {warning}"] if warning else []


def _say(message: str, quiet: bool) -> None:
    if not quiet:
        click.echo(message, err=True)


def _print_summary(results, *, written: bool, quiet: bool) -> None:
    from dali_migrate import report

    # Everything but the diff goes to stderr, so `--diff > x.patch` gives a clean patch.
    if quiet:
        lines = [line for line in report.problem_lines(results) if ": error: " in line]
    else:
        lines = report.problem_lines(results) + report.summary_table(results, written=written)
    for line in lines:
        click.echo(line, err=True)


@contextlib.contextmanager
def _progress(total: int, *, enabled: bool) -> Iterator[Optional[Callable]]:
    stderr = sys.stderr
    if not (enabled and stderr.isatty()):
        yield None
        return
    with click.progressbar(length=total, label="converting", file=stderr) as bar:
        yield lambda _result: bar.update(1)


# verify needs DALI; its module imports it only when the command runs.
from dali_migrate.cli_verify import verify_command  # noqa: E402

main.add_command(verify_command)

if __name__ == "__main__":  # `python -m dali_migrate.cli ...` as well as `python -m dali_migrate ...`
    main()
