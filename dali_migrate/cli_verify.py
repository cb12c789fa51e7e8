"""``dali-migrate verify``: the command-line face of dali_migrate.verify (imported lazily, since it
needs DALI and the codemod's own commands must not)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import click


def _parse_set(values) -> dict:
    params = {}
    for item in values:
        key, sep, raw = item.partition("=")
        if not sep or not key.isidentifier():
            raise click.BadParameter(f"{item!r}: expected PARAM=VALUE", param_hint="--set")
        try:
            params[key] = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            params[key] = raw  # a plain string, such as a path
    return params


@click.command("verify")
@click.argument("target", metavar="ORIGINAL.py[::NAME]")
@click.option("--against", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Converted file to check (default: convert ORIGINAL in memory).")
@click.option("--iterations", type=int, help="Iterations to compare (default: one epoch plus two).")
@click.option("--batch-size", type=int, help="Batch size for both sides (default: the pipeline's).")
@click.option("--seed", type=int, help="Pipeline seed for both sides (default: 1234).")
@click.option("--device", type=click.Choice(["cpu", "gpu"]), default="cpu", show_default=True, help="cpu: move every operator to the CPU on both sides.")
@click.option("--set", "sets", multiple=True, metavar="PARAM=VALUE", help="A parameter of the pipeline function (Python literal or plain string).")
@click.option("--rtol", type=float, default=0.0, show_default=True, help="Relative tolerance for floating-point outputs.")
@click.option("--atol", type=float, default=0.0, show_default=True, help="Absolute tolerance for floating-point outputs.")
def verify_command(target, against, iterations, batch_size, seed, device, sets, rtol, atol):
    """Run ORIGINAL's pipeline and the converted code on the same data; compare every output.

    Exit status: 0 all outputs equal, 1 a difference (described), 2 the check could not run.
    Only what the named pipeline needs is executed from the file, not its top-level code.
    """
    path_text, _, name = target.partition("::")
    path = Path(path_text)
    if not path.is_file():
        click.echo(f"error: {path}: no such file", err=True)
        sys.exit(2)
    params = _parse_set(sets)
    try:
        from dali_migrate.verify import Options, VerifyError, verify
    except ImportError as e:
        click.echo(f"error: verify needs DALI and numpy (pip install 'dali-migrate[runtime]'): {e}", err=True)
        sys.exit(2)
    opts = Options(
        original=path, name=name or None, against=against, iterations=iterations, batch_size=batch_size,
        seed=seed, device=device, params=params, rtol=rtol, atol=atol,
    )
    try:
        verdict = verify(opts)
    except VerifyError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(verdict.describe())
    sys.exit(0 if verdict.equal else 1)
