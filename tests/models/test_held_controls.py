"""A recorded answer names its control by number; replayed where the window numbers its
controls otherwise (another browser version's toolbar, a root-only notice), it still acts
on the same control."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from roundhouse.agents.responses import check_control
from roundhouse.core.messages import Message
from roundhouse.devices.contract import Control, Rect, WindowInfo
from roundhouse.models.base import REFUSAL, ModelRequest
from roundhouse.models.held_controls import (
    HeldControl,
    HeldWindow,
    hold_control,
    hold_window,
    point_at,
    point_at_window,
)
from roundhouse.models.observation import AppObservation, HostObservation
from roundhouse.models.recording import RecordingModel
from roundhouse.models.replay import ReplayModel
from roundhouse.testing.function_model import FunctionModel

WINDOW = WindowInfo(
    xid=7,
    title="Sign-up form - Chromium",
    application="Chromium",
    pid=1,
    rect=Rect(left=0, top=0, right=800, bottom=600),
    active=True,
)


def controls(*named: tuple[str, str]) -> tuple[Control, ...]:
    return tuple(
        Control(
            label=number,
            id=f":1.2/obj/{number}",
            role=role,
            name=name,
            rect=Rect(left=0, top=number * 10, right=100, bottom=number * 10 + 9),
        )
        for number, (role, name) in enumerate(named, 1)
    )


def seen(*named: tuple[str, str]) -> AppObservation:
    return AppObservation(
        board="Request: r",
        subtask="s",
        application="Chromium",
        window=WINDOW,
        controls=controls(*named),
    )


def typing(label: int, name: str) -> str:
    return json.dumps(
        {
            "observation": "o",
            "thought": "t",
            "action": {
                "function": "type_text",
                "arguments": {"id": label, "name": name, "text": "Ada"},
                "status": "CONTINUE",
            },
            "result": "",
        }
    )


def label_of(answer: str) -> int:
    return int(json.loads(answer)["action"]["arguments"]["id"])


PAGE = (("entry", "Address and search bar"), ("entry", "Name"), ("push button", "Close"))
ROOT_NOTICE = (
    ("static", "You are using an unsupported command-line flag"),
    ("push button", "Close"),
)


def test_the_control_is_held_by_role_name_and_rank() -> None:
    observation = seen(*PAGE, ("push button", "Close"))
    assert hold_control(typing(2, "Name"), observation) == HeldControl(role="entry", name="Name")
    assert hold_control(typing(4, "Close"), observation) == HeldControl(
        role="push button", name="Close", nth=2
    )
    assert hold_control(typing(9, "Gone"), observation) is None  # no such number: nothing
    no_control = json.dumps({"action": {"function": None, "arguments": {}}})
    assert hold_control(no_control, observation) is None


def test_replayed_elsewhere_the_answer_points_at_the_same_control() -> None:
    held = HeldControl(role="entry", name="Name")
    elsewhere = seen(*ROOT_NOTICE, *PAGE)  # two controls more above the page's
    assert label_of(point_at(typing(2, "Name"), elsewhere, held)) == 4
    same = seen(*PAGE)  # where the number still fits, nothing changes
    assert point_at(typing(2, "Name"), same, held) == typing(2, "Name")
    second_close = HeldControl(role="push button", name="Close", nth=2)
    assert label_of(point_at(typing(3, "Close"), elsewhere, second_close)) == 5
    nothing_alike = seen(("entry", "Email"))  # the answer stays, and is refused as it is
    assert point_at(typing(2, "Name"), nothing_alike, held) == typing(2, "Name")


def test_a_nameless_control_or_another_kind_of_window_is_left_as_recorded() -> None:
    """A dialog's nameless field (Thunar's New Folder name) is not looked for in the main
    window, whose nameless fields are others: a dialog still opening is looked at again."""
    field = HeldControl(role="text", name="", dialog=True)
    main = seen(("text", ""), ("text", ""), ("menu", "File"))
    assert point_at(typing(3, ""), main, field) == typing(3, "")
    in_the_dialog = HeldControl(role="entry", name="Name", dialog=True)
    assert point_at(typing(1, "Name"), seen(*ROOT_NOTICE, *PAGE), in_the_dialog) == typing(
        1, "Name"
    )


def test_a_dialogs_nameless_field_named_in_the_next_version_is_found() -> None:
    """Nautilus 43's Select Items Matching field has no name; 48 names it "Pattern", in a
    dialog drawn inside the window, after the window's own controls. Its one text is the
    one; with two texts, or outside a dialog, the answer stays as recorded."""
    field = HeldControl(role="text", name="", dialog=True)
    nautilus_48 = dataclasses.replace(
        seen(("push button", "Back"), ("table", "Content View"), ("text", "Pattern")),
        in_dialog=True,
    )
    assert point_at(typing(3, ""), nautilus_48, field) == typing(3, "Pattern")
    moved = dataclasses.replace(
        seen(("push button", "Back"), ("push button", "Forward"), ("text", "Pattern")),
        in_dialog=True,
    )
    assert point_at(typing(1, ""), moved, field) == typing(3, "Pattern")
    two = dataclasses.replace(seen(("text", "Pattern"), ("text", "Location")), in_dialog=True)
    assert point_at(typing(1, ""), two, field) == typing(1, "")
    assert point_at(typing(1, ""), seen(("push button", "Back"), ("text", "Pattern")), field) == (
        typing(1, "")
    )


def test_a_windows_one_nameless_control_is_found_where_its_number_moved() -> None:
    """gedit's text is its one nameless text: 9 under X11's title buttons (Minimize,
    Maximize), 7 on sway, which has none. Among two nameless texts, which one cannot be told."""
    text = HeldControl(role="text", name="")
    x11 = (("push button", "Minimize"), ("push button", "Maximize"), ("push button", "Close"))
    sway = seen(("push button", "Close"), ("text", ""))
    assert hold_control(typing(4, ""), seen(*x11, ("text", ""))) == text
    assert label_of(point_at(typing(4, ""), sway, text)) == 2
    two = seen(("push button", "Close"), ("text", ""), ("text", ""))
    assert point_at(typing(4, ""), two, text) == typing(4, "")
    second = HeldControl(role="text", name="", nth=2)
    assert point_at(typing(4, ""), sway, second) == typing(4, "")


def clicking(label: int, name: str) -> str:
    return json.dumps(
        {"action": {"function": "click_control", "arguments": {"id": label, "name": name}}}
    )


def arguments_of(answer: str) -> dict[str, object]:
    return dict(json.loads(answer)["action"]["arguments"])


def in_dialog(*named: tuple[str, str]) -> AppObservation:
    return dataclasses.replace(seen(*named), in_dialog=True)


# LibreOffice's "Keep current format" question, as 7.4 (Debian 12) and 25.2 (Debian 13) word
# its button that keeps the format asked for.
WORD_2007 = "Use Word 2007–365 Format!"
WORD_2010 = "Use Word 2010–365 Document Format!"
ODF = "Use ODF Format!"


def test_a_button_the_next_version_rewords_is_found_by_what_it_says() -> None:
    for recorded, here in ((WORD_2007, WORD_2010), (WORD_2010, WORD_2007)):
        held = HeldControl(role="push button", name=recorded, dialog=True)
        for order in ((here, ODF), (ODF, here)):
            dialog = in_dialog(
                ("label", "Keep current format?"), *(("push button", n) for n in order)
            )
            label = 2 + order.index(here)
            for answered in (clicking(2, recorded), clicking(3, recorded)):
                assert arguments_of(point_at(answered, dialog, held)) == {"id": label, "name": here}
    # the rank still counts among the controls of the new name
    second = HeldControl(role="push button", name=WORD_2007, nth=2, dialog=True)
    twice = in_dialog(("push button", WORD_2010), ("push button", ODF), ("push button", WORD_2010))
    assert arguments_of(point_at(clicking(1, WORD_2007), twice, second))["id"] == 3


def test_a_reworded_match_never_takes_another_meaning() -> None:
    """A name that says only part of the other's, a tie, or another role: left as recorded,
    to be refused as it is."""
    for held_name, here in (
        ("Save", ("Don't Save", "Cancel")),  # "save" is one word of three
        ("Save to Folder", ("Folder", "Cancel")),
        ("Use Word 2007–365 Format!", ("Use Word 2010–365!", "Use Word 2013–365!")),  # a tie
        ("Use Word 2007–365 Format!", ("Use ODF Format!",)),  # two words of five
    ):
        held = HeldControl(role="push button", name=held_name, dialog=True)
        dialog = in_dialog(*(("push button", n) for n in here))
        assert point_at(clicking(1, held_name), dialog, held) == clicking(1, held_name)
    held = HeldControl(role="push button", name=WORD_2007, dialog=True)
    as_a_label = in_dialog(("label", WORD_2010), ("push button", ODF))
    assert point_at(clicking(2, WORD_2007), as_a_label, held) == clicking(2, WORD_2007)


async def test_a_recording_from_libreoffice_7_replays_on_25(tmp_path: Path) -> None:
    """Recorded where the button said 2007, replayed where it says 2010: the answer the
    agent checks names the button by the id and the name it has here."""
    recorded = tmp_path / "r.json"
    on_7 = in_dialog(("push button", "Help"), ("push button", WORD_2007), ("push button", ODF))
    recorder = RecordingModel(FunctionModel(lambda _: clicking(2, WORD_2007)), recorded, ())
    await recorder.complete(ModelRequest(agent="app", messages=(), observation=on_7))

    on_25 = in_dialog(("push button", "Help"), ("push button", ODF), ("push button", WORD_2010))
    answered = await ReplayModel(recorded).complete(
        ModelRequest(agent="app", messages=(), observation=on_25)
    )
    arguments = arguments_of(answered.text)
    assert arguments == {"id": 3, "name": WORD_2010}
    check_control(arguments, [(c.label, c.name) for c in on_25.controls])


async def test_a_recording_replays_where_the_numbers_differ(tmp_path: Path) -> None:
    recorded = tmp_path / "r.json"
    recorder = RecordingModel(FunctionModel(lambda _: typing(2, "Name")), recorded, ())
    await recorder.complete(ModelRequest(agent="app", messages=(), observation=seen(*PAGE)))
    [item] = json.loads(recorded.read_text())
    assert item["control"] == {"role": "entry", "name": "Name", "nth": 1, "dialog": False}

    replay = ReplayModel(recorded)
    elsewhere = seen(*ROOT_NOTICE, *PAGE)
    answered = await replay.complete(ModelRequest(agent="app", messages=(), observation=elsewhere))
    assert json.loads(answered.text)["action"]["arguments"] == {
        "id": 4,
        "name": "Name",
        "text": "Ada",
    }


def refusing(observation: AppObservation) -> ModelRequest:
    """The request that sends the last answer back as invalid, with the view it was
    checked against."""
    refusal = Message("user", f"{REFUSAL} there is no control 2 'Name'")
    return ModelRequest(agent="app", messages=(refusal,), observation=observation)


async def test_an_answer_refused_here_is_given_again_for_the_fresh_view(tmp_path: Path) -> None:
    """Chromium draws a form before it exposes the form's fields: the recorded answer
    for the Name field is refused until they show, and the recording's next answer (the
    next step's) must not be spent on that refusal."""
    recorded = tmp_path / "r.json"
    held = {"role": "entry", "name": "Name", "nth": 1, "dialog": False}
    later = typing(3, "Close")
    recorded.write_text(json.dumps([{"answer": typing(2, "Name"), "control": held}, later]))
    replay = ReplayModel(recorded)
    toolbar_only = seen(("entry", "Address and search bar"))
    first = await replay.complete(ModelRequest(agent="app", messages=(), observation=toolbar_only))
    assert first.text == typing(2, "Name")
    again = await replay.complete(refusing(seen(*ROOT_NOTICE, *PAGE)))
    assert label_of(again.text) == 4 and json.loads(again.text)["action"]["arguments"]["name"] == (
        "Name"
    )
    following = await replay.complete(ModelRequest(agent="app", messages=(), observation=None))
    assert following.text == later and replay.remaining == 0


async def test_an_answer_refused_where_it_was_recorded_is_followed_by_its_correction(
    tmp_path: Path,
) -> None:
    recorded = tmp_path / "r.json"
    answers = iter([typing(3, "Name"), typing(2, "Name")])  # 3 is the Close button
    recorder = RecordingModel(FunctionModel(lambda _: next(answers)), recorded, ())
    await recorder.complete(ModelRequest(agent="app", messages=(), observation=seen(*PAGE)))
    await recorder.complete(refusing(seen(*PAGE)))
    first, correction = json.loads(recorded.read_text())
    assert first["refused"] is True and "refused" not in correction

    replay = ReplayModel(recorded)
    await replay.complete(ModelRequest(agent="app", messages=(), observation=seen(*PAGE)))
    corrected = await replay.complete(refusing(seen(*PAGE)))
    assert corrected.text == typing(2, "Name") and replay.remaining == 0


async def test_an_answer_naming_no_control_is_not_given_again(tmp_path: Path) -> None:
    """An invalid answer written by hand is followed by the valid one, as it always was."""
    recorded = tmp_path / "r.json"
    recorded.write_text(json.dumps(["not json", typing(2, "Name")]))
    replay = ReplayModel(recorded)
    await replay.complete(ModelRequest(agent="app", messages=(), observation=seen(*PAGE)))
    assert (await replay.complete(refusing(seen(*PAGE)))).text == typing(2, "Name")


def window(xid: int, title: str, application: str) -> WindowInfo:
    return WINDOW.model_copy(update={"xid": xid, "title": title, "application": application})


def selecting(window_id: int) -> str:
    return json.dumps(
        {
            "observation": "o",
            "thought": "t",
            "action": {
                "function": "select_window",
                "arguments": {"window_id": window_id},
                "status": "ASSIGN",
            },
            "result": "",
        }
    )


def host_sees(*windows: WindowInfo) -> HostObservation:
    return HostObservation(request="r", windows=windows, applications=())


def window_of(answer: str) -> int:
    return int(json.loads(answer)["action"]["arguments"]["window_id"])


def test_a_window_is_held_by_application_title_and_rank() -> None:
    seen_here = host_sees(window(5, "a.txt - gedit", "Gedit"), window(9, "b.txt - gedit", "Gedit"))
    assert hold_window(selecting(9), seen_here) == HeldWindow(
        application="Gedit", title="b.txt - gedit", nth=2
    )
    assert hold_window(selecting(77), seen_here) is None  # no such window: nothing held
    assert hold_window(typing(2, "Name"), seen(*PAGE)) is None  # an app's answer: no window


async def test_a_recording_selects_the_same_window_where_ids_differ(tmp_path: Path) -> None:
    """X numbers a client's windows by how many clients connected before it, and a Wayland
    compositor numbers them its own way: the recorded id meant the window, not the number."""
    recorded = tmp_path / "r.json"
    there = host_sees(window(6291463, "Roundhouse Qt test", "qt_app.py"))
    recorder = RecordingModel(FunctionModel(lambda _: selecting(6291463)), recorded, ())
    await recorder.complete(ModelRequest(agent="host", messages=(), observation=there))
    [item] = json.loads(recorded.read_text())
    assert item["window"] == {"application": "qt_app.py", "title": "Roundhouse Qt test", "nth": 1}

    here = host_sees(
        window(4194311, "Untitled - gedit", "Gedit"),
        window(12582919, "Roundhouse Qt test", "qt_app.py"),
    )
    answered = await ReplayModel(recorded).complete(
        ModelRequest(agent="host", messages=(), observation=here)
    )
    assert window_of(answered.text) == 12582919


def test_a_window_is_found_by_title_among_its_applications_then_by_rank() -> None:
    held = HeldWindow(application="Gedit", title="b.txt - gedit", nth=2)
    reordered = host_sees(window(1, "b.txt - gedit", "Gedit"), window(2, "a.txt - gedit", "Gedit"))
    assert window_of(point_at_window(selecting(50), reordered, held)) == 1
    retitled = host_sees(window(1, "x - gedit", "Gedit"), window(2, "y - gedit", "Gedit"))
    assert window_of(point_at_window(selecting(50), retitled, held)) == 2
    # An id that still names a window of that application is left as it is.
    assert point_at_window(selecting(2), reordered, held) == selecting(2)
    # Nothing of that application here: the answer stays, and is refused as it is.
    elsewhere = host_sees(window(3, "Calc", "soffice"))
    assert point_at_window(selecting(50), elsewhere, held) == selecting(50)


def test_a_window_of_an_application_named_otherwise_here_is_found_by_its_title() -> None:
    """X11 names a Qt script by its WM_CLASS ("qt_app.py"), a Wayland compositor by its app
    id ("python"): the one window with the recorded title is the one meant."""
    held = HeldWindow(application="qt_app.py", title="Roundhouse Qt test", nth=1)
    on_wayland = host_sees(
        window(4, "Untitled - gedit", "gedit"), window(5, "Roundhouse Qt test", "python")
    )
    assert window_of(point_at_window(selecting(12582919), on_wayland, held)) == 5
    # Two windows of that title: which one is not known, and the answer stays.
    twice = host_sees(
        window(5, "Roundhouse Qt test", "python"), window(6, "Roundhouse Qt test", "x")
    )
    assert point_at_window(selecting(12582919), twice, held) == selecting(12582919)


def listing(*actions: dict[str, object]) -> str:
    """An answer of several actions."""
    return json.dumps({"observation": "o", "thought": "t", "action": list(actions), "result": ""})


def typed(label: int, name: str, text: str) -> dict[str, object]:
    arguments = {"id": label, "name": name, "text": text}
    return {"function": "type_text", "arguments": arguments, "status": "CONTINUE"}


async def test_a_list_holds_each_actions_control_and_replays_where_the_numbers_differ(
    tmp_path: Path,
) -> None:
    form = (("entry", "Address and search bar"), ("entry", "Name"), ("entry", "Email"))
    answer = listing(
        typed(2, "Name", "Ada"),
        {"function": "press_keys", "arguments": {"keys": "Tab"}, "status": "CONTINUE"},
        typed(3, "Email", "ada@example.org"),
    )
    recorded = tmp_path / "r.json"
    recorder = RecordingModel(FunctionModel(lambda _: answer), recorded, ())
    await recorder.complete(ModelRequest(agent="app", messages=(), observation=seen(*form)))
    [item] = json.loads(recorded.read_text())
    assert "control" not in item
    assert item["controls"] == [
        {"role": "entry", "name": "Name", "nth": 1, "dialog": False},
        None,  # the keys name no control
        {"role": "entry", "name": "Email", "nth": 1, "dialog": False},
    ]
    elsewhere = seen(*ROOT_NOTICE, *form)
    answered = await ReplayModel(recorded).complete(
        ModelRequest(agent="app", messages=(), observation=elsewhere)
    )
    actions = json.loads(answered.text)["action"]
    assert [a["arguments"].get("id") for a in actions] == [4, None, 5]
    for action in actions:
        check_control(action["arguments"], [(c.label, c.name) for c in elsewhere.controls])


async def test_a_hosts_list_holds_the_window_it_selects(tmp_path: Path) -> None:
    shell = {"function": "run_shell", "arguments": {"command": "true"}, "status": "CONTINUE"}
    select = json.loads(selecting(6291463))["action"]
    recorded = tmp_path / "r.json"
    there = host_sees(window(6291463, "Roundhouse Qt test", "qt_app.py"))
    recorder = RecordingModel(FunctionModel(lambda _: listing(shell, select)), recorded, ())
    await recorder.complete(ModelRequest(agent="host", messages=(), observation=there))
    [item] = json.loads(recorded.read_text())
    assert item["windows"] == [
        None,
        {"application": "qt_app.py", "title": "Roundhouse Qt test", "nth": 1},
    ]
    here = host_sees(window(12582919, "Roundhouse Qt test", "qt_app.py"))
    answered = await ReplayModel(recorded).complete(
        ModelRequest(agent="host", messages=(), observation=here)
    )
    assert json.loads(answered.text)["action"][1]["arguments"]["window_id"] == 12582919
