"""The definitions a conversion adds to a file (the emitted iterator classes and the like) are
printed as text in place of a stand-in line (engine._add_definition): the file must come out
exactly as if they had been printed from their nodes as part of the tree."""

from pathlib import Path

import pytest

from dali_migrate import engine

GOLDEN = Path(__file__).parent / "golden"
# a pipeline handed to DALIGenericIterator: its conversion adds the DaliTorchIterator class
SOURCE = (GOLDEN / "dali_generic_iterator.py").read_text()


def _printed_from_nodes(monkeypatch, source: str) -> str:
    add = engine._add_definition
    with monkeypatch.context() as mp:
        mp.setattr(engine, "_add_definition", lambda module, text, placed=None: add(module, text, None))
        return engine.convert_source(source).output


def _variants():
    tabs = SOURCE.replace("    ", "\t")
    yield "spaces, LF", SOURCE
    yield "tabs, LF", tabs
    yield "spaces, CRLF", SOURCE.replace("\n", "\r\n")
    yield "tabs, CRLF", tabs.replace("\n", "\r\n")


@pytest.mark.parametrize("name,source", list(_variants()), ids=[n for n, _ in _variants()])
def test_same_output_as_printing_the_nodes(monkeypatch, name, source):
    out = engine.convert_source(source).output
    assert "class DaliTorchIterator" in out and engine._STAND_IN.format(0) not in out
    assert out == _printed_from_nodes(monkeypatch, source)
    if "CRLF" in name:  # the added class takes the file's line ends, as its nodes would (not
        # inside its multi-line strings, whose text libcst prints as it is)
        assert "class DaliTorchIterator:\r\n" in out
    if "tabs" in name:
        body = out[out.index("class DaliTorchIterator"):]
        assert "\n\tdef " in body.replace("\r\n", "\n") and "\n    def " not in body.replace("\r\n", "\n")


def test_a_file_that_spells_the_stand_in_gets_the_nodes(monkeypatch):
    # the stand-in's name ending a line of the file itself: its text cannot be told apart, so the
    # definitions go in as nodes, and the file's own line is left as it is
    source = SOURCE + "\n\nSEEN = __dali_migrate_definition_0__\n"
    out = engine.convert_source(source).output
    assert out.count("class DaliTorchIterator") == 1
    assert out.endswith("SEEN = __dali_migrate_definition_0__\n")
    assert out == _printed_from_nodes(monkeypatch, source)


def test_several_definitions_in_their_order(monkeypatch):
    # a second pipeline whose run() is caught converts with a second added class
    source = SOURCE + (
        "\n\ndef probe(root):\n"
        "    pipe = torch_pipe(root)\n"
        "    pipe.build()\n"
        "    try:\n"
        "        out = pipe.run()\n"
        "    except RuntimeError:\n"
        "        out = None\n"
        "    return out\n"
    )
    out = engine.convert_source(source).output
    assert out == _printed_from_nodes(monkeypatch, source)
