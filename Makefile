# Two commands do all the set-up on a fresh Debian/Ubuntu machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYAUTOGUI := pyautogui==0.9.54 mouseinfo==0.1.3 pyscreeze==1.0.1 pymsgbox==2.0.1 \
	pytweening==1.2.0 pygetwindow==0.0.9 pyrect==0.2.0 pyperclip==1.11.0

.PHONY: demo test lint bench stress alone faults record system-deps venv osworld-venv mcp-inspector clean

venv: $(STAMP)

# The venv is rebuilt when the dependency list changes.
$(STAMP): pyproject.toml scripts/system-deps.sh
	bash scripts/system-deps.sh base
	$(PYTHON) scripts/check-python.py
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,ray,bench,osworld]'  # ray: CI runs the Ray batch tests
	# OSWorld's commands `import pyautogui`; its python3-xlib dependency would overwrite Xlib.
	$(BIN)/python -m pip install --quiet --no-deps $(PYAUTOGUI)
	touch $(STAMP)

system-deps:
	bash scripts/system-deps.sh all

demo: venv system-deps
	bash scripts/demo.sh

lint: venv
	$(BIN)/ruff check src tests benchmarks tasks
	$(BIN)/ruff format --check src tests benchmarks tasks
	$(BIN)/mypy

# Two workers, each taking a file at a time (its module fixtures, a desktop or an app,
# made once): most tests wait on applications and desktops, so two overlap well on two
# cores. Three were faster (647 s against ~700), but starved a headless GNOME Shell once in
# three runs (its screen cast sent no frame within 10 s). The files go out in the order
# collected, the longest first (tests/conftest.py), not xdist's by the number of tests.
# TEST_WORKERS=0 runs the suite in one process.
TEST_WORKERS ?= 2
PARALLEL := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: venv system-deps lint osworld-venv mcp-inspector
	$(BIN)/python -m pytest $(if $(filter 0,$(TEST_WORKERS)),,$(PARALLEL))

# OSWorld's own code, for the tests to run beside ours (tests/osworld): desktop-env without
# its 68 dependencies, and the light ones its controllers and metrics import. desktop-env
# goes in last, with --no-deps: pip then checks no dependencies, and prints no "ERROR: ...
# dependency conflicts" for the 68 it left out on purpose (installed first, the next
# install's check named each of them; so does the requirements' install when the venv is
# brought up to date, hence its --no-warn-conflicts).
OSWORLD_VENV := .venv-osworld
osworld-venv: $(OSWORLD_VENV)/.installed-stamp
$(OSWORLD_VENV)/.installed-stamp: tests/osworld/requirements-theirs.txt
	test -x $(OSWORLD_VENV)/bin/python || $(PYTHON) -m venv $(OSWORLD_VENV)
	$(OSWORLD_VENV)/bin/python -m pip install --quiet --upgrade pip
	grep -v '^desktop-env' tests/osworld/requirements-theirs.txt > $(OSWORLD_VENV)/requirements.txt
	$(OSWORLD_VENV)/bin/python -m pip install --quiet --no-warn-conflicts -r $(OSWORLD_VENV)/requirements.txt
	$(OSWORLD_VENV)/bin/python -m pip install --quiet --no-deps \
		$$(grep '^desktop-env' tests/osworld/requirements-theirs.txt)
	@echo "roundhouse: $(OSWORLD_VENV) holds OSWorld's desktop-env without its 68 dependencies" \
		"(torch among them), and the light ones its metrics import: for tests/osworld"
	touch $@

# The JS MCP Inspector's command line (npm), which the tests drive `serve --stdio` with, as
# a person's MCP host would start it. 0.14.3: later ones ask for Node 22, and Debian has 18/20.
INSPECTOR := .mcp-inspector
mcp-inspector: $(INSPECTOR)/.installed-stamp
$(INSPECTOR)/.installed-stamp:
	command -v npm >/dev/null || bash scripts/system-deps.sh npm
	npm install --silent --no-audit --no-fund --prefix $(INSPECTOR) @modelcontextprotocol/inspector@0.14.3
	touch $@

# Ratios measured in one run on a fresh virtual desktop (no timed tests anywhere).
bench: venv system-deps
	bash scripts/system-deps.sh bench || echo "roundhouse: could not install python3-pyatspi; the bench compares with the naive walk alone" >&2
	$(BIN)/roundhouse bench tree
	$(BIN)/roundhouse bench observation

# The model client, desktop and GUI tests RUNS times (default 20) beside LOAD (2) CPU-heavy
# processes: the flake hunt. STRESS_TESTS chooses the test files.
stress: venv system-deps
	bash scripts/stress.sh

# Every test file alone, in a random order, each on an empty /tmp (as root): what a test
# needs must not be left behind by another.
alone: venv system-deps osworld-venv
	bash scripts/alone.sh

# The fault-injection suite with its full counts, one line per fault.
faults: venv system-deps
	bash scripts/faults.sh

# Record the shipped suite's answers again with the offline planner, then replay them: after
# a change to what the agents see (how controls are listed, named or numbered). Only some
# tasks: make record TASKS="browser-form-submit writer-docx". Results in .record/.
record: venv system-deps
	rm -rf .record
	$(BIN)/roundhouse batch tasks/basic --model offline --record --out .record/offline $(foreach t,$(TASKS),--task $(t))
	$(BIN)/roundhouse batch tasks/basic --model replay --out .record/replay $(foreach t,$(TASKS),--task $(t))

clean:
	rm -rf $(VENV) $(OSWORLD_VENV) $(INSPECTOR) .mypy_cache .ruff_cache .pytest_cache .record .alone
