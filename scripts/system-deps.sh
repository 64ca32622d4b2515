#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages roundhouse needs, only those that are missing.
#   base: what the venv needs;  all: base + the desktop stack the tests use.
set -euo pipefail
group="${1:-all}"

# procps: free and uptime, which the offline planner runs for memory and uptime requests.
base=(python3-venv procps)
# The virtual desktop (display, buses, AT-SPI, window manager), the two real applications
# the tests drive (gedit: GTK 3; the Qt 6 test app: PySide6 from PyPI, whose xcb platform
# plugin needs the libxcb/libxkbcommon/GL libraries below), and a font for the apps.
# xterm, vim and nano: the launcher tests' terminal emulator and terminal-only editors
# (a machine with vim installed must still open gedit for "the text editor").
# LibreOffice Calc (with its GTK 3 plug-in, else it exposes no tree) and Chromium (under
# report) are the apps that fork helpers: the reaper tests stop desktops running them.
# LibreOffice Writer and Thunar: the suite's tasks (tasks/basic) type and save a .docx in
# Writer, and make folders and rename files in a file manager (issue 10), and the benches
# read them (`roundhouse bench tree`, `bench observation`); xterm above is also the suite's
# terminal, driven from screenshots and keys alone (it has no tree).
# x11-xkb-utils: setxkbmap, which gives a virtual X desktop its keyboard layout (--layout).
desktop=(
  xvfb xauth x11-utils x11-xkb-utils dbus dbus-x11 at-spi2-core libatk-adaptor
  libatk-bridge2.0-0 openbox
  gedit xterm vim nano libreoffice-calc libreoffice-writer libreoffice-gtk3 thunar
  libdbus-1-3 libglib2.0-0 libfontconfig1 libfreetype6 libegl1 libgl1 libx11-xcb1
  libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0
  fonts-dejavu-core
  # GNOME's GTK 4 (libadwaita) apps: the default text editor of a GNOME desktop, the
  # calculator and the file manager (issue 24: the suite's gte-*, calculator-*, files-gtk4-*)
  gnome-text-editor gnome-calculator nautilus
  # mss (in-process screenshots) loads these with ctypes, next to libxcb-randr0 above
  libxcb-render0 libxcb-shm0 libxcb-xfixes0
)
# The report tests open reports in real headless Chromium through chromedriver; ffmpeg makes
# each run's video (report.html embeds it: logs/video.py) and records --record-video.
report=(chromium chromium-driver ffmpeg)
# Screen lockers, for the tests of a locked screen (issue 35: a run there FAILs naming it):
# i3lock on X11, swaylock on sway.
lockers=(i3lock swaylock)
# What the tests and the suite's tasks run besides: curl (a served task posts its form with
# it), iproute2 (`ip netns`: the Ray batch tests' hosts) and Firefox (the browser tests read
# a form in it as in Chromium; Debian 12 and 13 both call it firefox-esr).
tests=(curl iproute2 firefox-esr)
# OSWorld's tasks (docs/osworld.md): Ctrl+Alt+T opens GNOME Terminal (its terminal output is
# a getter), and their commands run `sudo -S`. Their commands `import pyautogui`, which
# imports MouseInfo, which ends the process when Python has no Tk (Debian's python3 has it
# from python3-tk): every command and OSWorld's own getters then read nothing.
# The applications of OSWorld's gimp, libreoffice_impress, thunderbird and vlc domains (the
# same names on Debian 12 and 13), and PulseAudio with pactl (an os task reads the volume).
# VS Code has no Debian package: its tasks stay "apps" in `roundhouse osworld check`.
osworld=(gnome-terminal sudo python3-tk gimp libreoffice-impress thunderbird vlc pulseaudio
         pulseaudio-utils)
# The headless Wayland desktops (--session sway|gnome|kde) and their tests: sway; GNOME
# Shell with PipeWire and WirePlumber (Mutter's remote desktop needs them) and GStreamer's
# PipeWire source (GNOME's screen, read from that screen cast); KWin; and libxkbcommon with
# its layouts (the keymaps of the Wayland input backends). The same names on Debian 12 and 13.
wayland=(
  sway gnome-shell pipewire wireplumber kwin-wayland libxkbcommon0 xkb-data
  gstreamer1.0-pipewire gstreamer1.0-tools gstreamer1.0-plugins-base
)
# Packages some releases have and others lack, installed where apt knows them: labwc (a
# wlroots compositor without an IPC of its own: --session labwc; Debian 13, not 12), with
# wlr-randr, which sets its headless output's size, and swaybg, which paints its background.
optional_wayland=(labwc wlr-randr swaybg)
# npm, for the JS MCP Inspector the tests drive (make mcp-inspector), where no Node.js is
# installed at all (a Node.js of another source brings its own npm: never both).
npm=(npm)
# Only for `make bench`: OSWorld's way of reading the tree, with the system Python (and, for
# `bench osworld --osworld-server`, the Tk its server's pyautogui imports).
bench=(python3-pyatspi python3-tk)
optional=()
case "$group" in
  base) wanted=("${base[@]}") ;;
  all)
    wanted=("${base[@]}" "${desktop[@]}" "${report[@]}" "${tests[@]}" "${lockers[@]}" "${osworld[@]}" "${wayland[@]}")
    optional=("${optional_wayland[@]}")
    ;;
  report) wanted=("${report[@]}") ;;
  bench) wanted=("${bench[@]}") ;;
  npm) wanted=("${npm[@]}") ;;
  osworld) wanted=("${osworld[@]}") ;;
  wayland) wanted=("${wayland[@]}"); optional=("${optional_wayland[@]}") ;;
  *) echo "usage: $0 base|all|report|osworld|wayland|bench|npm" >&2; exit 2 ;;
esac

# A package counts as present under its own name or a name it provides: Debian 13 renamed
# libraries for 64-bit time (libglib2.0-0t64 provides libglib2.0-0), and apt installs the
# one provider of such a name when asked for it.
declare -A present=()
while IFS='|' read -r status name provides; do
  [[ "$status" == ii* ]] || continue
  present["$name"]=1
  IFS=',' read -ra provided <<<"$provides"
  for entry in "${provided[@]}"; do
    read -r entry _ <<<"$entry"  # "libglib2.0-0 (= 2.84.4-3)": the name alone
    [ -n "$entry" ] && present["$entry"]=1
  done
done < <(dpkg-query -W -f='${db:Status-Abbrev}|${Package}|${Provides}\n' 2>/dev/null || true)
missing=()
for pkg in "${wanted[@]}"; do
  [ -n "${present[$pkg]:-}" ] || missing+=("$pkg")
done
# An optional package is missing only where this release has it (apt knows it).
known() { apt-cache show "$1" >/dev/null 2>&1; }
for pkg in "${optional[@]}"; do
  [ -n "${present[$pkg]:-}" ] || ! known "$pkg" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "roundhouse: missing packages ${missing[*]} and no apt-get to install them" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "roundhouse: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# A fresh machine's apt knew no package before the update: add the optional ones it knows now.
for pkg in "${optional[@]}"; do
  [ -n "${present[$pkg]:-}" ] || [[ " ${missing[*]} " == *" $pkg "* ]] || ! known "$pkg" ||
    missing+=("$pkg")
done
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
