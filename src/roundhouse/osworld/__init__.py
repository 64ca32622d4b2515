"""OSWorld's language on roundhouse desktops, without VMs.

OSWorld (xlang-ai/OSWorld) describes a task as JSON: an instruction, `config` steps that set
the stage, and an `evaluator` (getters that read the system, metrics that score what they
read). This package reads those files and speaks that language with our own code:

- tasks.py: the task files and how a folder, a domain, one file or a meta file is read;
- places.py: OSWorld's placeholders and its hard-coded home folder, mapped to a desktop's;
- files.py: the local cache of the dataset's files (`--files DIR`) and fetch-files;
- env.py: an OSWorld environment on a roundhouse virtual desktop (a fresh HOME, the
  commands its steps expect, the terminal shortcut, Chromium's DevTools port);
- steps.py: the config and postconfig steps; getters.py and metrics/: the evaluator's
  parts; evaluate.py: a task's score; check.py: whether a task can run here;
- attempt.py: one task in `roundhouse batch`; a11y_xml.py + server.py: OSWorld's VM server
  routes served from a roundhouse desktop (`roundhouse serve --osworld`); provider.py: the
  provider that points OSWorld's own DesktopEnv at such a server.

No OSWorld code or task file is copied here; tests run OSWorld's own functions beside ours.
"""
