"""The `dali-migrate` command line. Subcommands hang off `main` (``@main.command()``)."""

from __future__ import annotations

import contextlib
import re
import sys
from pathlib import Path
from typing import Callable, Iterator, Optional

import click

from dali_migrate import __version__, report, runner, walk
from dali_migrate.config import NATIVE_NDD, Config

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}
_DOTTED_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


@click.group(context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="dali-migrate")
def main() -> None:
    """Move NVIDIA DALI pipeline-mode code to dynamic mode (ndd)."""


def _check_module_name(ctx, param, value: str) -> str:
    if not _DOTTED_NAME.match(value):
        raise click.BadParameter(f"{value!r} is not a dotted module name")
    return value


@main.command()
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
@click.option("--ndd-module", default=NATIVE_NDD, show_default=True, callback=_check_module_name,
              help="Module the converted code imports as ndd.")
@click.pass_context
def convert(ctx, paths, diff, check, report_path, exclude, jobs, quiet, ndd_module) -> None:
    """Convert PATH... (files or directories) in place."""
    files = walk.find_files(paths, exclude)
    write = not (diff or check)
    options = runner.Options(
        config=Config(ndd_module=ndd_module),
        write=write,
        diff=diff,
        # Lets tests put a fake codemod in place, also in worker processes (it is pickled).
        convert=(ctx.obj or {}).get("convert"),
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


def _say(message: str, quiet: bool) -> None:
    if not quiet:
        click.echo(message, err=True)


def _print_summary(results, *, written: bool, quiet: bool) -> None:
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
