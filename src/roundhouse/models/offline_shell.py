"""The offline planner's shell half: simple requests answered from real command output.

For a shell request it runs real commands one by one, reads their real output, and
FINISHes with an answer built from that output. What it does not understand it FAILs,
saying what it does understand and how to configure a real model. Pure logic: no I/O.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from roundhouse.observation import PastStep, ShellObservation

UNDERSTOOD = (
    "list the files in DIR; how much disk space is free; how much memory is free; "
    "what is the kernel version; which operating system is this; what is the hostname; "
    "who am i; what time is it; what is the uptime; how many CPUs are there; "
    "create a file NAME containing TEXT; show the first N lines of FILE; "
    "show the contents of FILE; count the lines of FILE; does PATH exist"
)
REAL_MODEL_HINT = (
    "For anything else configure a real model: --model openai:<name> "
    "(OpenAI, Azure, vLLM, Ollama, LM Studio; see docs/models.md)."
)

MAX_NAMES = 400  # names listed in an answer; the rest are counted

Answer = Callable[[list[str]], str]  # the commands' stdout, in order → the final answer


@dataclass(frozen=True)
class ShellIntent:
    commands: tuple[str, ...]
    answer: Answer


def plan_shell(observation: ShellObservation) -> dict[str, Any]:
    intent = understand(observation.request)
    if intent is None:
        return fail(
            "I do not understand this request.",
            f"The offline model understands: {UNDERSTOOD}. {REAL_MODEL_HINT}",
        )
    ran = [step for step in observation.history if step.function == "run_shell"]
    outputs: list[str] = []
    for step in ran:
        problem = _problem(step)
        if problem:
            return fail(f"`{step.arguments.get('command')}` did not succeed.", problem)
        outputs.append(str(step.output.get("stdout", "")))
    if len(ran) < len(intent.commands):
        command = intent.commands[len(ran)]
        return answer(
            "CONTINUE",
            f"Running `{command}`.",
            thought="Run the next command and read its output.",
            function="run_shell",
            arguments={"command": command},
            plan=[f"run `{c}`" for c in intent.commands[len(ran) :]] + ["answer from the output"],
        )
    return answer(
        "FINISH",
        "The commands ran.",
        thought="Answer from the output.",
        result=intent.answer(outputs),
    )


def _problem(step: PastStep) -> str | None:
    if step.result_status != "success":
        return step.error or f"the step ended {step.result_status}"
    output = step.output if isinstance(step.output, dict) else {}
    if output.get("exit_code") != 0:
        stderr = str(output.get("stderr", "")).strip()
        return f"exit code {output.get('exit_code')}: {stderr or 'no error output'}"
    return None


def answer(
    status: str,
    observation: str,
    thought: str,
    *,
    function: str | None = None,
    arguments: dict[str, Any] | None = None,
    plan: list[str] | None = None,
    result: str = "",
    comment: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """An answer in the JSON every agent parses, as a language model would give it."""
    return {
        "observation": observation,
        "thought": thought,
        "action": {"function": function, "arguments": arguments or {}, "status": status},
        "plan": plan or [],
        "comment": comment,
        "result": result,
        **extra,
    }


def fail(observation: str, reason: str) -> dict[str, Any]:
    return answer("FAIL", observation, "I cannot do this.", result=reason)


# --- understanding requests -------------------------------------------------------------

_PATH = r"(?P<path>'[^']+'|\"[^\"]+\"|\S+)"


def _clean(request: str) -> str:
    return re.sub(r"[\s?!.]+$", "", request.strip())


def _unquote(path: str) -> str:
    return path[1:-1] if len(path) > 1 and path[0] == path[-1] and path[0] in "'\"" else path


def quote_path(path: str) -> str:
    """Quote a path for bash, keeping ~ meaning the home folder."""
    path = _unquote(path)
    if path == "~":
        return '"$HOME"'
    if path.startswith("~/"):
        return '"$HOME"/' + shlex.quote(path[2:])
    return shlex.quote(path)


def understand(request: str) -> ShellIntent | None:
    text = _clean(request)
    for pattern, build in _INTENTS:
        match = re.fullmatch(pattern, text, flags=re.IGNORECASE)
        if match:
            return build({k: v for k, v in match.groupdict().items() if v is not None})
    return None


def _list_files(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args.get("path", "."))

    def answer(out: list[str]) -> str:
        names = [line for line in out[0].splitlines() if line]
        if not names:
            return f"{path} is empty."
        shown = ", ".join(names[:MAX_NAMES])
        more = f", and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else ""
        return f"{len(names)} entries in {path}: {shown}{more}."

    return ShellIntent((f"ls -A1 -- {quote_path(path)}",), answer)


def _disk_free(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args.get("path", "/"))

    def answer(out: list[str]) -> str:
        fields = out[0].splitlines()[-1].split()
        size, used, avail = (int(fields[i]) * 1024 for i in (1, 2, 3))
        mount = fields[5]
        # as df computes Use%: reserved blocks count neither as used nor as available
        percent = 100 * used / (used + avail) if used + avail else 0
        return (
            f"{human(avail)} free of {human(size)} on {mount} ({human(used)} used, {percent:.0f}%)."
        )

    return ShellIntent((f"df -Pk -- {quote_path(path)}",), answer)


def _memory_free(_: dict[str, str]) -> ShellIntent:
    def answer(out: list[str]) -> str:
        info = {}
        for line in out[0].splitlines():
            key, _, rest = line.partition(":")
            if rest.strip():
                info[key] = int(rest.split()[0]) * 1024
        return (
            f"{human(info['MemAvailable'])} of memory available out of {human(info['MemTotal'])} "
            f"({human(info['MemFree'])} completely unused)."
        )

    return ShellIntent(("cat /proc/meminfo",), answer)


def _one_line(command: str, template: str) -> Callable[[dict[str, str]], ShellIntent]:
    def build(_: dict[str, str]) -> ShellIntent:
        return ShellIntent((command,), lambda out: template.format(out[0].strip()))

    return build


def _os_release(_: dict[str, str]) -> ShellIntent:
    def answer(out: list[str]) -> str:
        for line in out[0].splitlines():
            if line.startswith("PRETTY_NAME="):
                return f"This is {line.partition('=')[2].strip(chr(34))}."
        return "The operating system does not name itself in /etc/os-release."

    return ShellIntent(("cat /etc/os-release",), answer)


def _uptime(_: dict[str, str]) -> ShellIntent:
    def answer(out: list[str]) -> str:
        seconds = int(float(out[0].split()[0]))
        days, rest = divmod(seconds, 86400)
        hours, rest = divmod(rest, 3600)
        return f"The machine has been up {days} days, {hours} hours and {rest // 60} minutes."

    return ShellIntent(("cat /proc/uptime",), answer)


def _create_file(args: dict[str, str]) -> ShellIntent:
    path, text = _unquote(args["path"]), _unquote(args["text"].strip())
    # set -C: never overwrite a file that exists; the user asked to create one.
    write = f"set -C; printf '%s\\n' {shlex.quote(text)} > {quote_path(path)}"
    check = f"cat -- {quote_path(path)}"
    return ShellIntent((write, check), lambda out: f"Created {path} containing: {out[1].strip()}")


def _head(args: dict[str, str]) -> ShellIntent:
    path, count = _unquote(args["path"]), int(args.get("count", "10"))
    return ShellIntent(
        (f"head -n {count} -- {quote_path(path)}",),
        lambda out: f"The first {count} lines of {path}:\n{out[0].rstrip()}",
    )


def _contents(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args["path"])
    return ShellIntent(
        (f"cat -- {quote_path(path)}",), lambda out: f"Contents of {path}:\n{out[0].rstrip()}"
    )


def _count_lines(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args["path"])
    return ShellIntent(
        (f"wc -l < {quote_path(path)}",), lambda out: f"{path} has {int(out[0].strip())} lines."
    )


def _exists(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args["path"])
    command = (
        f"if [ -e {quote_path(path)} ]; then stat -c %F -- {quote_path(path)}; else echo absent; fi"
    )

    def answer(out: list[str]) -> str:
        kind = out[0].strip()
        return f"{path} does not exist." if kind == "absent" else f"Yes, {path} exists ({kind})."

    return ShellIntent((command,), answer)


_INTENTS: tuple[tuple[str, Callable[[dict[str, str]], ShellIntent]], ...] = (
    (
        rf"(?:please )?(?:list|show)(?: me)?(?: all)? (?:the )?files"
        rf"(?: (?:in|of|under) {_PATH})?",
        _list_files,
    ),
    (rf"what files are (?:there )?in {_PATH}", _list_files),
    (rf"what is in {_PATH}", _list_files),
    (
        rf"how much (?:free )?(?:disk ?space|disk|space)(?: is)?(?: there)?"
        rf"(?: free| available| left)?(?: on {_PATH})?",
        _disk_free,
    ),
    (r"(?:show |what is the )?free disk space", _disk_free),
    (
        r"how much (?:free )?(?:memory|ram)(?: is)?(?: there)?(?: free| available| left)?"
        r"|(?:show )?free memory",
        _memory_free,
    ),
    (
        r"what(?: is|'s) the (?:linux )?kernel(?: version)?|(?:show )?(?:the )?kernel version",
        _one_line("uname -r", "The kernel version is {}."),
    ),
    (
        r"(?:which|what) (?:operating system|os|linux distribution|distribution)"
        r"(?: is this| is running| am i running)?"
        r"|what is the (?:os|operating system)(?: version)?",
        _os_release,
    ),
    (
        r"what(?: is|'s) the host ?name(?: of this machine)?|(?:show )?(?:the )?host ?name",
        _one_line("hostname", "The hostname is {}."),
    ),
    (
        r"who am i|which user am i|what(?: is|'s) the current user(?:name)?"
        r"|what is my user ?name",
        _one_line("id -un", "You are {}."),
    ),
    (
        r"what (?:time|date|day) is it(?: now)?"
        r"|what(?: is|'s) the (?:current )?(?:date|time)(?: and time)?",
        _one_line("date '+%Y-%m-%d %H:%M:%S %Z'", "It is {}."),
    ),
    (
        r"(?:what is the |show )?uptime"
        r"|how long has (?:this machine|the machine|the system) been (?:up|running)",
        _uptime,
    ),
    (
        r"how many (?:cpus|cpu cores|cores|processors)"
        r"(?: are there| does this machine have| do i have)?",
        _one_line("nproc", "There are {} CPUs."),
    ),
    (
        rf"(?:create|make|write) (?:a )?(?:new )?file (?:called |named )?{_PATH} "
        rf"(?:containing|with(?: the text)?|that says) (?P<text>.+)",
        _create_file,
    ),
    (
        rf"(?:show|print|display)(?: me)? the first (?:(?P<count>\d+) )?lines (?:of|in) {_PATH}",
        _head,
    ),
    (rf"count (?:the )?lines (?:of|in) {_PATH}", _count_lines),
    (rf"how many lines (?:are (?:there )?in|does) {_PATH}(?: have)?", _count_lines),
    (rf"(?:show|print|display|read)(?: me)? (?:the )?(?:contents? of |file ){_PATH}", _contents),
    (rf"cat {_PATH}", _contents),
    (rf"does (?:the )?(?:file |folder |directory )?{_PATH} exist", _exists),
)


def human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{size} B"
        value /= 1024
    raise AssertionError("unreachable")
