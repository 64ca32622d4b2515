"""Presentations and LibreOffice settings of our own making, for the agreement of Impress's
metrics with OSWorld's (test_metrics_agree_apps.py runs them)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image

Case = tuple[str, list[Any], dict[str, Any]]
XCU = ('<?xml version="1.0" encoding="UTF-8"?><oor:items xmlns:oor="http://openoffice.org/'
       '2001/registry">{}</oor:items>')  # fmt: skip


def deck(folder: Path, name: str, **spec: Any) -> str:
    """A .pptx: `slides` is a list of lists of text boxes (text, or (text, style)); options:
    background (rgb of every slide), notes, portrait, table, picture (size), moved (offset of
    the first box), bullets, align."""
    from pptx import Presentation
    from pptx.dml.color import RGBColor
    from pptx.enum.text import PP_ALIGN
    from pptx.util import Emu, Pt

    presentation = Presentation()
    if spec.get("portrait"):
        presentation.slide_width, presentation.slide_height = Emu(6858000), Emu(9144000)
    blank = presentation.slide_layouts[6]
    for index, boxes in enumerate(spec.get("slides", [["Hello"]])):
        slide = presentation.slides.add_slide(blank)
        if "background" in spec:
            slide.background.fill.solid()
            slide.background.fill.fore_color.rgb = RGBColor(*spec["background"])
        if "notes" in spec:
            slide.notes_slide.notes_text_frame.text = spec["notes"]
        for number, box in enumerate(boxes):
            words, style = (box, {}) if isinstance(box, str) else box
            left = 914400 + number * 100000 + (spec.get("moved", 0) if number == 0 else 0)
            shape = slide.shapes.add_textbox(Emu(left), Emu(914400), Emu(4000000), Emu(600000))
            paragraph = shape.text_frame.paragraphs[0]
            run = paragraph.add_run()
            run.text = words
            if "size" in style:
                run.font.size = Pt(style["size"])
            if "bold" in style:
                run.font.bold = style["bold"]
            if "italic" in style:
                run.font.italic = style["italic"]
            if "underline" in style:
                run.font.underline = style["underline"]
            if "font" in style:
                run.font.name = style["font"]
            if "color" in style:
                run.font.color.rgb = RGBColor(*style["color"])
            if "align" in style:
                paragraph.alignment = {"center": PP_ALIGN.CENTER, "left": PP_ALIGN.LEFT}[
                    style["align"]
                ]
            if "level" in style:
                paragraph.level = style["level"]
            if style.get("strike"):
                run.font._element.set("strike", "sngStrike")
        if "table" in spec and index == 0:
            rows = spec["table"]
            table = slide.shapes.add_table(
                len(rows), len(rows[0]), Emu(914400), Emu(3000000), Emu(4000000), Emu(800000)
            ).table
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    words, bold = (value, None) if isinstance(value, str) else value
                    cell_run = table.cell(r, c).text_frame.paragraphs[0].add_run()
                    cell_run.text = words
                    if bold is not None:
                        cell_run.font.bold = bold
        if "picture" in spec and index == 0:
            data = io.BytesIO()
            Image.new("RGB", (40, 30), spec.get("picture_color", "red")).save(data, "PNG")
            data.seek(0)
            width, height, left, top = spec["picture"]
            slide.shapes.add_picture(data, Emu(left), Emu(top), Emu(width), Emu(height))
        if "transition" in spec and index == 0:
            from lxml import etree

            p = "http://schemas.openxmlformats.org/presentationml/2006/main"
            transition = etree.SubElement(slide._element, f"{{{p}}}transition")
            etree.SubElement(transition, f"{{{p}}}{spec['transition']}")
    if "master_colors" in spec:
        from lxml import etree

        a = "http://schemas.openxmlformats.org/drawingml/2006/main"
        master = presentation.slide_masters[0]._element
        for value in spec["master_colors"]:
            fill = etree.SubElement(master, f"{{{a}}}solidFill")
            etree.SubElement(fill, f"{{{a}}}srgbClr", val=value)
    path = folder / name
    presentation.save(path)
    return str(path)


def slide_cases(tmp: Path) -> list[Case]:
    hello = deck(tmp, "hello.pptx", slides=[["Hello", "World"]])
    same = deck(tmp, "same.pptx", slides=[["Hello", "World"]])
    cases: list[Case] = []
    add = cases.append
    variants: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("other", {"slides": [["Hello", "There"]]}, {}),
        ("more", {"slides": [["Hello", "World"], ["Two"]]}, {}),
        ("more2", {"slides": [["Hello", "World"], ["Two"]]}, {"examine_number_of_slides": False}),
        ("bold", {"slides": [[("Hello", {"bold": True}), "World"]]}, {}),
        ("bold0", {"slides": [[("Hello", {"bold": False}), "World"]]}, {}),
        ("bold2", {"slides": [[("Hello", {"bold": True}), "World"]]}, {"examine_font_bold": False}),
        ("size", {"slides": [[("Hello", {"size": 30}), "World"]]}, {}),
        ("font", {"slides": [[("Hello", {"font": "Liberation Serif"}), "World"]]}, {}),
        ("ital", {"slides": [[("Hello", {"italic": True}), "World"]]}, {}),
        ("under", {"slides": [[("Hello", {"underline": True}), "World"]]}, {}),
        ("under0", {"slides": [[("Hello", {"underline": False}), "World"]]}, {}),
        ("red", {"slides": [[("Hello", {"color": (255, 0, 0)}), "World"]]}, {}),
        ("center", {"slides": [[("Hello", {"align": "center"}), "World"]]}, {}),
        ("left", {"slides": [[("Hello", {"align": "left"}), "World"]]}, {}),
        ("level", {"slides": [[("Hello", {"level": 1}), "World"]]}, {}),
        ("strike", {"slides": [[("Hello", {"strike": True}), "World"]]}, {}),
        ("moved", {"slides": [["Hello", "World"]], "moved": 3000}, {}),
        ("moved2", {"slides": [["Hello", "World"]], "moved": 500000}, {}),
        ("moved3", {"slides": [["Hello", "World"]], "moved": 500000}, {"examine_shape": False}),
        ("fewer", {"slides": [["Hello"]]}, {}),
        ("bg", {"slides": [["Hello", "World"]], "background": (0, 0, 255)}, {}),
        ("bg2", {"slides": [["Hello", "World"]], "background": (0, 0, 255)},
         {"examine_background_color": False}),
        ("notes", {"slides": [["Hello", "World"]], "notes": "say hi"}, {}),
        ("notes2", {"slides": [["Hello", "World"]], "notes": "say hi"}, {"examine_note": False}),
        ("spaced", {"slides": [["Hello ", "World"]]}, {}),
        ("table", {"slides": [["Hello", "World"]], "table": [["a", "b"], ["c", "d"]]}, {}),
        ("pic", {"slides": [["Hello", "World"]], "picture": (400000, 300000, 0, 0)},
         {"examine_image_size": True}),
    ]  # fmt: skip
    for name, spec, options in variants:
        add(("compare_pptx_files", [deck(tmp, f"{name}.pptx", **spec), hello], options))
    add(("compare_pptx_files", [hello, same], {}))
    table = deck(tmp, "t1.pptx", slides=[["x"]], table=[["a", ("b", True)], ["c", "d"]])
    for rows in ([["a", ("b", True)], ["c", "d"]], [["a", "b"], ["c", "d"]],
                 [["a", ("b", False)], ["c", "d"]], [["a", "b", "e"], ["c", "d", "f"]],
                 [["a", ("b", True)], ["c", "x"]]):  # fmt: skip
        add(("compare_pptx_files", [table, deck(tmp, f"t{len(cases)}.pptx", slides=[["x"]],
                                                table=rows)], {}))  # fmt: skip
    pic = deck(tmp, "p1.pptx", slides=[["x"]], picture=(400000, 300000, 0, 0))
    for size, options in [((400000, 300000, 0, 0), {"examine_image_size": True}),
                          ((500000, 300000, 0, 0), {"examine_image_size": True}),
                          ((500000, 300000, 0, 0), {"examine_image_size": True,
                                                    "examine_shape": False}),
                          ((400000, 300000, 9000, 0), {"examine_modify_height": True,
                                                       "examine_shape": False}),
                          ((400000, 350000, 0, 0), {"examine_modify_height": True,
                                                    "examine_shape": False})]:  # fmt: skip
        other = deck(tmp, f"p{len(cases)}.pptx", slides=[["x"]], picture=size)
        add(("compare_pptx_files", [other, pic], options))
    add(("compare_pptx_files", [str(tmp / "absent.pptx"), hello], {}))
    cases += one_deck_cases(tmp)
    return cases


def one_deck_cases(tmp: Path) -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    wide = deck(tmp, "wide.pptx")
    tall = deck(tmp, "tall.pptx", portrait=True)
    for path in [wide, tall, deck(tmp, "tall2.pptx", portrait=True, slides=[["a"], ["b"]]),
                 deck(tmp, "w2.pptx", slides=[[], ["x"]]), str(tmp / "absent.pptx"),
                 deck(tmp, "w3.pptx", slides=[]), deck(tmp, "t3.pptx", portrait=True,
                                                        background=(1, 2, 3)),
                 deck(tmp, "w4.pptx", background=(9, 9, 9)), deck(tmp, "w5.pptx", notes="n"),
                 deck(tmp, "t4.pptx", portrait=True, table=[["a"]])]:  # fmt: skip
        add(("check_slide_orientation_Portrait", [path], {}))
    # A 10x7.5 inch slide: 9144000 x 6858000 EMU.
    original = deck(tmp, "orig.pptx", slides=[["t"]], picture=(400000, 300000, 100, 100))
    for name, box in [("full", (9144000, 6858000, 0, 0)),
                      ("near", (9000000, 6800000, 72000, 29000)),
                      ("small", (400000, 300000, 100, 100)), ("off", (9144000, 6858000, 900000, 0)),
                      ("tallish", (9144000, 6000000, 0, 429000))]:  # fmt: skip
        add(("check_image_stretch_and_center",
             [deck(tmp, f"{name}.pptx", slides=[["t"]], picture=box), original], {}))  # fmt: skip
    add(("check_image_stretch_and_center", [wide, original], {}))
    add(("check_image_stretch_and_center", [wide, wide], {}))
    add(("check_image_stretch_and_center",
         [deck(tmp, "blue.pptx", slides=[["t"]], picture=(9144000, 6858000, 0, 0),
               picture_color="blue"), original], {}))  # fmt: skip
    add(("check_image_stretch_and_center", [original, original], {}))
    add(("check_image_stretch_and_center", [str(tmp / "absent.pptx"), original], {}))
    for spec, rules in [({"background": (250, 10, 10)}, {"rgb": [255, 0, 0]}),
                        ({"background": (0, 0, 0)}, {"rgb": [255, 255, 255]}),
                        ({}, {"rgb": [255, 0, 0]}),
                        ({"background": (250, 10, 10)}, {"rgb": [255, 0, 0],
                                                          "original_rgb": [250, 10, 10]}),
                        ({"background": (10, 200, 10), "slides": [["a"], ["b"]]},
                         {"rgb": [0, 255, 0]}),
                        ({"background": (1, 2, 3)}, {"rgb": [1, 2, 3], "original_rgb": [9, 9, 9]}),
                        ({"background": (128, 128, 128)}, {"rgb": [0, 0, 0]}),
                        ({"slides": [["a"]]}, {"rgb": [0, 0, 0], "original_rgb": [0, 0, 0]}),
                        ({"background": (255, 255, 0)}, {"rgb": [255, 255, 255]}),
                        ({"background": (0, 0, 255)}, {"rgb": [0, 0, 255]})]:  # fmt: skip
        path = deck(tmp, f"f{len(cases)}.pptx", **spec)
        add(("evaluate_presentation_fill_to_rgb_distance", [path, rules], {}))
    faded = deck(tmp, "fade.pptx", transition="fade")
    for path, rules in [(faded, {"slide_idx": 0, "transition_type": "fade"}),
                        (faded, {"slide_idx": 0, "transition_type": "dissolve"}),
                        (wide, {"slide_idx": 0, "transition_type": "fade"}),
                        (faded, {"slide_idx": 3, "transition_type": "fade"}),
                        (deck(tmp, "dis.pptx", transition="dissolve", slides=[["a"], ["b"]]),
                         {"slide_idx": 0, "transition_type": "dissolve"}),
                        (deck(tmp, "dis2.pptx", transition="dissolve", slides=[["a"], ["b"]]),
                         {"slide_idx": 1, "transition_type": "dissolve"}),
                        (faded, {"slide_idx": 0, "transition_type": "wipe"}),
                        (deck(tmp, "wipe.pptx", transition="wipe"),
                         {"slide_idx": 0, "transition_type": "wipe"}),
                        (tall, {"slide_idx": 0, "transition_type": "fade"}),
                        (faded, {"slide_idx": -1, "transition_type": "fade"})]:  # fmt: skip
        add(("check_transition", [path, rules], {}))
    for color in ["red", "blue", "green", "black", "white"]:
        add(("check_page_number_colors", [wide, {"color": color}], {}))
    for index, (colors, wanted) in enumerate([
        (["#FF0000", "#000000"], "red"), (["#FF0000", "#000000"], "black"),
        (["#0000FF", "#000000"], "blue"), (["#00FF00", "#000000"], "green"),
        (["x0F0000", "x"], "red"), (["X00FF00", "y"], "green"), (["AABBCC", "zz"], "blue"),
        (["#101010", "#FFFFFF"], "black"), (["#FF0000", "#000000"], "white"),
        (["FF0000", "000000"], "red"),
    ]):  # fmt: skip
        path = deck(tmp, f"m{index}.pptx", master_colors=colors)
        add(("check_page_number_colors", [path, {"color": wanted}], {}))
    cases += settings_cases(tmp)
    return cases


def settings_cases(tmp: Path) -> list[Case]:
    def xcu(name: str, items: str) -> str:
        path = tmp / name
        path.write_text(XCU.format(items))
        return str(path)

    def item(path: str, prop: str, value: str) -> str:
        return (f'<item oor:path="{path}"><prop oor:name="{prop}" oor:op="fuse">'
                f"<value>{value}</value></prop></item>")  # fmt: skip

    save = "/org.openoffice.Office.Common/Save/Document"
    start = "/org.openoffice.Office.Impress/Misc/Start"
    three = xcu("three.xcu", item(save, "AutoSaveTimeIntervall", "3"))
    broken = tmp / "broken.xcu"
    broken.write_text("<oor:items")
    cases: list[Case] = []
    for path, minutes in [
        (three, 3), (three, 10), (xcu("ten.xcu", item(save, "AutoSaveTimeIntervall", "10")), 10),
        (xcu("none.xcu", item(save, "Other", "3")), 3), (str(broken), 3),
        (str(tmp / "absent.xcu"), 3), (xcu("both.xcu", item(save, "AutoSave", "true")
                                       + item(save, "AutoSaveTimeIntervall", "3")), 3),
        (xcu("elsewhere.xcu", item("/x", "AutoSaveTimeIntervall", "3")), 3),
        (xcu("empty.xcu", ""), 3), (xcu("one.xcu", item(save, "AutoSaveTimeIntervall", "1")), 1),
    ]:  # fmt: skip
        cases.append(("check_auto_saving_time", [path, {"minutes": minutes}], {}))
    for path in [xcu("off.xcu", item(start, "EnablePresenterScreen", "false")),
                 xcu("on.xcu", item(start, "EnablePresenterScreen", "true")),
                 xcu("Off.xcu", item(start, "EnablePresenterScreen", "False")),
                 xcu("no.xcu", item(start, "Other", "false")), three, str(broken),
                 str(tmp / "absent.xcu"), xcu("empty2.xcu", ""),
                 xcu("blank.xcu", item(start, "EnablePresenterScreen", "")),
                 xcu("two.xcu", item(start, "EnablePresenterScreen", "true")
                     + item(start, "EnablePresenterScreen", "false"))]:  # fmt: skip
        cases.append(("check_presenter_console_disable", [path], {}))
    trees = [
        '<desktop-frame><application name="soffice"><frame><document-frame name="Slides View"/>'
        "</frame></application></desktop-frame>",
        '<desktop-frame><application name="soffice"><frame><document-frame name="Outline"/>'
        "</frame></application></desktop-frame>",
        "<desktop-frame/>",
        '<desktop-frame><document-frame name="Slides View"/></desktop-frame>',
        '<desktop-frame><panel name="Slides View"/></desktop-frame>',
        '<desktop-frame><document-frame name="slides view"/></desktop-frame>',
        '<document-frame name="Slides View"/>',
        '<desktop-frame><document-frame name="Slides View">x</document-frame></desktop-frame>',
        "<desktop-frame><document-frame/></desktop-frame>",
        "<x><y><z/></y></x>",
    ]
    cases += [("check_left_panel", [tree], {}) for tree in trees]
    return cases
