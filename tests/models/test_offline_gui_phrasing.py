"""The offline GUI planner reads common phrasings of its intents, and nothing more."""

from __future__ import annotations

from roundhouse.models.offline.gui import Op, parse_request


def kinds(request: str) -> list[tuple[str, str]]:
    ops, unknown = parse_request(request)
    assert unknown == [], unknown
    return [(op.kind, op.text) for op in ops]


def test_launch_write_and_save_the_document_to() -> None:
    request = (
        "Launch the text editor, write 'groceries: milk, eggs' and save the document to "
        "/tmp/x/groceries.txt"
    )
    assert kinds(request) == [
        ("open", "text editor"),
        ("type", "groceries: milk, eggs"),
        ("save_as", "/tmp/x/groceries.txt"),
    ]


def test_a_quoted_text_is_never_split_even_when_it_holds_a_verb() -> None:
    assert kinds('open the editor and type "a, then save it" then save it as /tmp/a.txt') == [
        ("open", "text editor"),  # as the launcher knows the kind
        ("type", "a, then save it"),
        ("save_as", "/tmp/a.txt"),
    ]


def test_writing_in_the_editor_is_typing_into_the_window_not_into_a_field() -> None:
    ops, _ = parse_request("start gedit and write Dear Ada in the editor")
    assert ops[1] == Op("type", "write Dear Ada in the editor", text="Dear Ada")


def test_save_to_in_and_as_name_a_path() -> None:
    for verb in ("as", "to", "in", "under"):
        assert kinds(f"save it {verb} /tmp/n.txt") == [("save_as", "/tmp/n.txt")]


def test_what_it_does_not_understand_is_said() -> None:
    ops, unknown = parse_request("open gedit, then paint a sunset")
    assert [op.kind for op in ops] == ["open"] and unknown == ["paint a sunset"]
    assert kinds("type milk, eggs and bread") == [("type", "milk, eggs and bread")]
