"""The controls of a window the way OSWorld reads them: a pyatspi walk that asks every node
for its states, attributes, extents, text, value and actions, then filters.

Runs under Debian's /usr/bin/python3 with python3-pyatspi (pyatspi is not on PyPI), started
by `roundhouse bench tree` with the desktop's environment. It prints one JSON object:
{"ms": [per-run milliseconds], "nodes": N, "controls": [[role, name, [l, t, r, b]], ...]}.
The filter is the same as roundhouse's (atspi_tree.is_control), written out again here
because the system Python has none of roundhouse's dependencies.

It never lists the children of a container that claims more than 2,000 (as roundhouse's
atspi_node.MAX_CHILDREN): Calc's sheet would build its 2^34 cells (OSWorld's server has a
special case for Calc that reads the cells in view one by one; it is not reproduced here).
Smaller containers that manage their descendants (Qt's lists) are listed, as OSWorld does.
"""

import argparse
import json
import sys
import time

import pyatspi

OFFSCREEN = -2147483648
INTERACTIVE = {
    "push button", "push button menu", "toggle button", "check box", "radio button",
    "menu item", "check menu item", "radio menu item", "tearoff menu item", "menu",
    "combo box", "entry", "password text", "spin button", "slider", "page tab",
    "list item", "tree item", "link",
}  # fmt: skip
CONTAINERS = {
    "application", "filler", "frame", "glass pane", "internal frame", "layered pane",
    "menu bar", "page tab list", "panel", "root pane", "scroll pane", "split pane",
    "status bar", "tool bar", "viewport", "window", "dialog", "document web",
    "document frame", "document email", "form", "section", "grouping", "landmark", "article",
    "html container", "info bar", "block quote", "description list",
}  # fmt: skip
TEXT_ROLES = {"label", "static", "text", "heading", "paragraph", "caption"}
READ_ROLES = {"label", "static", "heading", "caption", "alert", "notification", "status bar",
              "text"}  # fmt: skip
TYPED = {"entry", "password text", "text", "spin button"}
NEVER_CONTROLS = {"separator", "file chooser", "font chooser", "color chooser"}
VALUE_ROLES = {"entry", "password text", "spin button", "slider", "combo box", "text",
               "table cell"}  # fmt: skip
SCROLLING = {"scroll pane", "viewport", "list", "list box", "table", "tree", "tree table"}
MAX_CHILDREN = 2000  # as roundhouse's atspi_node.MAX_CHILDREN


def read(node):
    """Everything OSWorld reads about one node, and its children, one call at a time."""
    states = [pyatspi.stateToString(state) for state in node.getState().getStates()]
    info = {
        "role": node.getRoleName(),
        "name": node.name or "",
        "description": node.description or "",
        "states": set(states),
        "attributes": node.getAttributes(),
        "rect": None,
        "actions": [],
        "text": None,
    }
    try:
        x, y, width, height = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
        if x != OFFSCREEN and y != OFFSCREEN:
            info["rect"] = [x, y, x + width, y + height]
    except NotImplementedError:
        pass  # no Component interface
    try:
        text = node.queryText()
        info["text"] = text.getText(0, text.characterCount)
    except NotImplementedError:
        pass  # no Text interface
    try:
        info["value"] = node.queryValue().currentValue
    except NotImplementedError:
        pass  # no Value interface
    try:
        action = node.queryAction()
        info["actions"] = [action.getName(index) for index in range(action.nActions)]
    except NotImplementedError:
        pass  # no Action interface
    if not readable(info["name"], 1):
        info["name"] = labelled_by(node)
    count = node.childCount
    if not 0 <= count <= MAX_CHILDREN:
        info["children"] = []
    else:
        info["children"] = [read(child) for child in node if child is not None]
    return info


def labelled_by(node):
    """The names of the labels a nameless control is labelled by, as roundhouse names it."""
    names = []
    for relation in node.getRelationSet():
        if relation.getRelationType() == pyatspi.RELATION_LABELLED_BY:
            for index in range(min(relation.getNTargets(), 3)):
                name = readable(relation.getTarget(index).name, 200)
                if name:
                    names.append(name)
    return " ".join(names)


def readable(text, limit):
    flat = " ".join((text or "").replace("\ufffc", " ").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "\u2026"


def is_control(info, area):
    states, role, rect = info["states"], info["role"], info["rect"]
    if role == "table cell" and any(c["role"] == "table cell" for c in info["children"]):
        return False  # a GTK list's row: its cells are what shows
    usable = (
        "showing" in states
        and "visible" in states
        and ("enabled" in states or "focusable" in states or "editable" in states)
    )
    if role in INTERACTIVE:
        operable = True
    elif role in CONTAINERS or role in NEVER_CONTROLS:
        operable = False
    elif role in TEXT_ROLES or role in READ_ROLES:
        operable = "editable" in states
    else:
        operable = bool(info["actions"]) or "focusable" in states or "editable" in states
    return (
        usable
        and operable
        and rect is not None
        and rect[2] > rect[0]
        and rect[3] > rect[1]
        and rect[0] < area[2]
        and area[0] < rect[2]
        and rect[1] < area[3]
        and area[1] < rect[3]
    )


def inner_name(info, depth):
    """A control's text from its showing descendants, as roundhouse names unnamed controls."""
    named = list(named_descendants(info, depth))
    for child in named:
        if child["role"] in TEXT_ROLES:
            return child["name"]
    return named[0]["name"] if named else ""


def named_descendants(info, depth):
    if depth == 0:
        return
    for child in info["children"]:
        if "showing" not in child["states"]:
            continue
        if readable(child["name"], 80):
            yield child
        yield from named_descendants(child, depth - 1)


def controls(info, area, found):
    if is_control(info, area):
        role, states = info["role"], info["states"]
        typed_into = role in TYPED or "editable" in states
        own_text = "" if role in VALUE_ROLES or "editable" in states else info["text"]
        inner = "" if typed_into else inner_name(info, 6)
        candidates = (info["name"], inner, own_text, info["description"])
        name = next((readable(c, 80) for c in candidates if readable(c, 80)), "")
        if not blank_cell(info, name):
            found.append([role, name, info["rect"]])
    if info["role"] in SCROLLING and info["rect"] is not None:
        rect = info["rect"]
        area = [max(area[0], rect[0]), max(area[1], rect[1]), min(area[2], rect[2]),
                min(area[3], rect[3])]  # fmt: skip
    collapsed = (
        info["role"] == "combo box"
        and "expandable" in info["states"]
        and ("expanded" not in info["states"])
    )
    for child in [] if collapsed else info["children"]:
        controls(child, area, found)
    return found


def blank_cell(info, name):
    """A cell with nothing to read or act on, as roundhouse leaves it out."""
    states = info["states"]
    shows_state = bool(
        {"focused", "selected", "checkable", "checked", "expandable", "editable"} & states
    ) or not ({"enabled", "sensitive"} & states)
    return (
        info["role"] == "table cell"
        and not name
        and not readable(info["text"], 1)
        and not shows_state
    )


def count(info):
    return 1 + sum(count(child) for child in info["children"])


def find_frame(pid, title):
    desktop = pyatspi.Registry.getDesktop(0)
    for app in desktop:
        if app is None or app.get_process_id() != pid:
            continue
        frames = [child for child in app if child is not None]
        for frame in frames:
            if frame.name == title:
                return frame
        if frames:
            return frames[0]
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--title", required=True)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--screen", type=int, nargs=2, default=[1280, 800])
    options = parser.parse_args()
    frame = find_frame(options.pid, options.title)
    if frame is None:
        print(json.dumps({"error": f"no accessible window for pid {options.pid}"}))
        return 1
    times, found, nodes = [], [], 0
    for run in range(options.runs + 1):  # the first run warms up, as for the other methods
        start = time.perf_counter()
        info = read(frame)
        screen = [0, 0, options.screen[0], options.screen[1]]
        window = info["rect"] or screen
        area = [max(screen[0], window[0]), max(screen[1], window[1]),
                min(screen[2], window[2]), min(screen[3], window[3])]  # fmt: skip
        found = controls(info, area, [])
        elapsed = (time.perf_counter() - start) * 1000
        if run:
            times.append(elapsed)
        nodes = count(info)
    print(json.dumps({"ms": times, "nodes": nodes, "controls": found}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
