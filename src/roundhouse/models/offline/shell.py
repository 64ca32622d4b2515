"""The offline planner's shell half: simple requests answered from real command output.

For a shell request (read by intents.py into a ShellIntent: COMMANDS below says what each
intent runs) it runs real commands one by one, reads their real output, and FINISHes with
an answer built from that output. Pure logic: no I/O.

Its answers quote the commands' output as it is (`df -h`'s "78G", `uname -r`'s line), and
say exactly what they quote (references.py), so a recorded answer replays on any machine.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from roundhouse.devices.contract import ToolName
from roundhouse.models.observation import PastStep, ShellObservation
from roundhouse.models.references import HELD_RESULT, Said, StepOutput, joined, said

UNDERSTOOD = (
    "list the files in DIR; what is in PATH; how much disk space is free (on PATH); "
    "how much memory is free; "
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

Answer = Callable[[list[StepOutput]], Said]  # what the commands printed → the final answer


@dataclass(frozen=True)
class ShellIntent:
    commands: tuple[str, ...]
    answer: Answer


def plan_shell(observation: ShellObservation, intent: ShellIntent) -> dict[str, Any]:
    """Run the intent's commands (one by one, or several to an answer where the agent
    allows it), then answer from what they printed."""
    ran = [
        (number, step)
        for number, step in enumerate(observation.history, 1)
        if step.function == ToolName.RUN_SHELL and step.ran
    ]
    outputs: list[StepOutput] = []
    for number, step in ran:
        problem = _problem(step)
        if problem:
            return fail(f"`{step.arguments.get('command')}` did not succeed.", problem)
        outputs.append(StepOutput(number, str(step.output.get("stdout", ""))))
    if len(ran) < len(intent.commands):
        # The commands do not read each other's output: as many as one answer may hold
        # (a list stops at a command that fails).
        left = intent.commands[len(ran) :]
        now = left[: observation.max_actions]
        said = answer(
            "CONTINUE",
            "Running " + ", ".join(f"`{command}`" for command in now) + ".",
            thought="Run the next command and read its output.",
            function=ToolName.RUN_SHELL,
            arguments={"command": now[0]},
            plan=[f"run `{c}`" for c in left] + ["answer from the output"],
        )
        if len(now) > 1:
            said["action"] = [
                {"function": ToolName.RUN_SHELL, "arguments": {"command": c}, "status": "CONTINUE"}
                for c in now
            ]
        return said
    spoken = intent.answer(outputs)
    return answer(
        "FINISH",
        "The commands ran.",
        thought="Answer from the output.",
        result=spoken.text,
        held_result=spoken.held,
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
    held_result: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An answer in the JSON every agent parses, as a language model would give it;
    `held_result` is the result with its quotes held (the model takes it out of the JSON)."""
    held = {HELD_RESULT: held_result} if held_result is not None else {}
    return {
        "observation": observation,
        "thought": thought,
        "action": {"function": function, "arguments": arguments or {}, "status": status},
        "plan": plan or [],
        "comment": comment,
        "result": result,
        **extra,
        **held,
    }


def fail(observation: str, reason: str) -> dict[str, Any]:
    return answer("FAIL", observation, "I cannot do this.", result=reason)


# --- what each intent runs, and how it answers --------------------------------------------


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


def combined(intents: list[ShellIntent]) -> ShellIntent:
    """Several questions asked at once: every intent's commands in turn, their answers
    joined."""
    if len(intents) == 1:
        return intents[0]
    counts = [len(intent.commands) for intent in intents]

    def answer(out: list[StepOutput]) -> Said:
        parts, start = [], 0
        for intent, count in zip(intents, counts, strict=True):
            parts.append(intent.answer(out[start : start + count]))
            start += count
        # Answers of one line go on one line; an answer of several lines (a file's) apart.
        separator = "\n" if any("\n" in p.text for p in parts) else " "
        return Said(separator.join(p.text for p in parts), separator.join(p.held for p in parts))

    return ShellIntent(tuple(c for intent in intents for c in intent.commands), answer)


def _list_files(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args.get("path", "."))

    def answer(out: list[StepOutput]) -> Said:
        names = [out[0].line(n) for n, line in enumerate(out[0].lines, 1) if line.strip()]
        if not names:
            return said(f"{path} is empty.")
        shown = joined(names[:MAX_NAMES], ", ")
        more = f", and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else ""
        return said(f"{len(names)} entries in {path}: ", *shown, f"{more}.")

    return ShellIntent((f"ls -A1 -- {quote_path(path)}",), answer)


def _disk_free(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args.get("path", "/"))

    def answer(out: list[StepOutput]) -> Said:
        # df -hP's last line: Filesystem Size Used Avail Capacity Mounted-on.
        size, used, avail, percent, mount = (out[0].word(-1, n) for n in (2, 3, 4, 5, 6))
        return said(avail, " free of ", size, " on ", mount, " (", used, " used, ", percent, ").")

    return ShellIntent((f"df -hP -- {quote_path(path)}",), answer)


def _memory_free(_: dict[str, str]) -> ShellIntent:
    def answer(out: list[StepOutput]) -> Said:
        # free -h: "Mem: total used free shared buff/cache available".
        row = next(n for n, line in enumerate(out[0].lines, 1) if line.startswith("Mem:"))
        total, free, available = (out[0].word(row, n) for n in (2, 4, 7))
        return said(
            available, " of memory available out of ", total, " (", free, " completely unused)."
        )

    return ShellIntent(("free -h",), answer)


def _one_line(command: str, before: str, after: str) -> Callable[[dict[str, str]], ShellIntent]:
    """A request answered by the one line a command prints: `before` LINE `after`."""

    def build(_: dict[str, str]) -> ShellIntent:
        return ShellIntent((command,), lambda out: said(before, out[0].line(1), after))

    return build


def _create_file(args: dict[str, str]) -> ShellIntent:
    path, text = _unquote(args["path"]), _unquote(args["text"].strip())
    # set -C: never overwrite a file that exists; the user asked to create one.
    write = f"set -C; printf '%s\\n' {shlex.quote(text)} > {quote_path(path)}"
    check = f"cat -- {quote_path(path)}"
    return ShellIntent(
        (write, check), lambda out: said(f"Created {path} containing: ", out[1].line(1))
    )


def _head(args: dict[str, str]) -> ShellIntent:
    path, count = _unquote(args["path"]), int(args.get("count", "10"))
    return ShellIntent(
        (f"head -n {count} -- {quote_path(path)}",),
        lambda out: said(f"The first {count} lines of {path}:\n", *out[0].every_line()),
    )


def _contents(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args["path"])
    return ShellIntent(
        (f"cat -- {quote_path(path)}",),
        lambda out: said(f"Contents of {path}:\n", *out[0].every_line()),
    )


def _count_lines(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args["path"])
    return ShellIntent(
        (f"wc -l < {quote_path(path)}",),
        lambda out: said(f"{path} has ", out[0].line(1), " lines."),
    )


def _exists(args: dict[str, str]) -> ShellIntent:
    path = _unquote(args["path"])
    command = (
        f"if [ -e {quote_path(path)} ]; then stat -c %F -- {quote_path(path)}; else echo absent; fi"
    )

    def answer(out: list[StepOutput]) -> Said:
        kind = out[0].line(1)
        if kind.value == "absent":
            return said(f"{path} does not exist.")
        return said(f"Yes, {path} exists (", kind, ").")

    return ShellIntent((command,), answer)


def _inside(args: dict[str, str]) -> ShellIntent:
    """What is inside a path: a folder's names, or a file's lines."""
    path = _unquote(args["path"])
    quoted = quote_path(path)
    show = f"if [ -d {quoted} ]; then ls -A1 -- {quoted}; else cat -- {quoted}; fi"
    listing, contents = _list_files(args).answer, _contents(args).answer

    def answer(out: list[StepOutput]) -> Said:
        folder = out[0].line(1).value == "directory"
        return listing(out[1:]) if folder else contents(out[1:])

    return ShellIntent((f"stat -L -c %F -- {quoted}", show), answer)


# What each shell intent of the table (intents.py) runs, by its name.
ShellName = Literal[
    "list_files",
    "inside",
    "contents",
    "head",
    "count_lines",
    "exists",
    "create_file",
    "disk_free",
    "memory_free",
    "kernel",
    "os",
    "hostname",
    "user",
    "time",
    "uptime",
    "cpus",
]
COMMANDS: dict[ShellName, Callable[[dict[str, str]], ShellIntent]] = {
    "list_files": _list_files,
    "inside": _inside,
    "contents": _contents,
    "head": _head,
    "count_lines": _count_lines,
    "exists": _exists,
    "create_file": _create_file,
    "disk_free": _disk_free,
    "memory_free": _memory_free,
    "kernel": _one_line("uname -r", "The kernel version is ", "."),
    "os": _one_line('. /etc/os-release && echo "$PRETTY_NAME"', "This is ", "."),
    "hostname": _one_line("hostname", "The hostname is ", "."),
    "user": _one_line("id -un", "You are ", "."),
    "time": _one_line("date '+%Y-%m-%d %H:%M:%S %Z'", "It is ", "."),
    # uptime -p says it as people do: "up 2 days, 3 hours, 4 minutes"
    "uptime": _one_line("uptime -p", "The machine has been ", "."),
    "cpus": _one_line("nproc", "There are ", " CPUs."),
}
