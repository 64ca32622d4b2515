#!/usr/bin/env bash
# Runs this checkout's `make demo` and `make test` (or any command) in a Debian root of
# another release, trixie by default: made with debootstrap from the Debian registry into a
# folder, with a copy of the checkout in it and what a desktop needs mounted. As root.
#
#   scripts/debian-root.sh                        # Debian 13: make demo, then make test
#   scripts/debian-root.sh -- .venv/bin/python -m pytest tests/test_parsing.py
#   scripts/debian-root.sh --release bookworm     # a fresh Debian 12, as a new machine is
#   scripts/debian-root.sh --fresh                # the root made anew, not reused
#
# The root is kept (ROOT=DIR, default /var/tmp/roundhouse-root-RELEASE), so a second run
# neither debootstraps nor installs again; the checkout's copy in it (/root/roundhouse) is
# replaced at every run, its .venv kept. The run happens in a mount namespace and a PID
# namespace of its own: its mounts (/proc, /sys, /dev with /dev/pts and /dev/shm, an empty
# tmpfs on /run and on /tmp, as a fresh container has) are never seen outside it, and
# however it ends, every process it started ends and the mounts go with the namespace.
# The trap checks that none is left on the folder.
# MIRROR=URL overrides the Debian mirror (default: the one this machine's apt uses).
set -euo pipefail
{ # read whole before it runs: the checkout may be edited during a run of an hour

usage() { echo "usage: $0 [--release NAME] [--fresh] [-- COMMAND...]" >&2; exit 2; }
release=trixie
fresh=0
command=(bash -c 'make demo && make test')
while [ $# -gt 0 ]; do
  case "$1" in
    -r | --release) [ $# -ge 2 ] || usage; release="$2"; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --) shift; [ $# -gt 0 ] && command=("$@"); break ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
  esac
done
[[ "$release" =~ ^[a-z]+$ ]] || { echo "roundhouse: not a release name: $release" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "roundhouse: $0 needs root (debootstrap, mount, chroot)" >&2; exit 1; }
# A fresh machine has no debootstrap: installed here, as make installs what it needs.
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null ||
  { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null; } || true
for tool in debootstrap unshare setpriv chroot findmnt; do
  command -v "$tool" >/dev/null || {
    echo "roundhouse: $tool is missing (apt-get install debootstrap util-linux)" >&2
    exit 1
  }
done

checkout="$(cd "$(dirname "$0")/.." && pwd)"
root="${ROOT:-/var/tmp/roundhouse-root-$release}"
root="$(realpath -m "$root")"
case "$root" in / | /var | /var/tmp | /tmp | "$checkout"*) echo "roundhouse: not a root folder: $root" >&2; exit 2 ;; esac

# The Debian mirror this machine's apt uses (deb822 or one-line sources), else Debian's own.
mirror="${MIRROR:-$(
  grep -hoE '(URIs:|^deb)\s+https?://[^ ]+/debian/?( |$)' \
    /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
    awk '{print $2}' | head -n1 || true
)}"
mirror="${mirror:-http://deb.debian.org/debian}"
mirror="${mirror%/}"

mounts_under() { findmnt -rn -o TARGET | awk -v dir="$1" 'index($0, dir "/") == 1 || $0 == dir'; }

# Unmounts whatever is left on the folder (a run of an older script, a mount made by hand);
# the namespace leaves nothing, so this normally finds nothing to do.
cleanup() {
  local left
  left="$(mounts_under "$root")"
  [ -z "$left" ] && return 0
  echo "roundhouse: unmounting what was left under $root" >&2
  sort -r <<<"$left" | while read -r target; do umount -R "$target" 2>/dev/null || umount -l "$target"; done
}
trap cleanup EXIT

# rm -rf follows into a mount: nothing is removed while anything is mounted under it.
remove() {
  if [ -n "$(mounts_under "$1")" ]; then
    echo "roundhouse: will not remove $1, something is mounted under it:" >&2
    mounts_under "$1" >&2
    exit 1
  fi
  rm -rf --one-file-system -- "$1"
}

if [ "$fresh" -eq 1 ]; then remove "$root"; fi
if [ ! -e "$root/.roundhouse-root" ]; then
  # Made aside and renamed once complete: a half-made root is never taken for one.
  remove "$root"
  remove "$root.making"
  echo "roundhouse: debootstrap $release from $mirror into $root" >&2
  timeout 1800 debootstrap --variant=minbase --include=ca-certificates,make,python3 \
    "$release" "$root.making" "$mirror" >"$root.debootstrap.log" 2>&1 || {
    echo "roundhouse: debootstrap failed; its log: $root.debootstrap.log" >&2
    exit 1
  }
  {
    echo "deb $mirror $release main"
    echo "deb $mirror $release-updates main"
    [[ "$mirror" == */debian ]] && echo "deb ${mirror}-security $release-security main"
  } >"$root.making/etc/apt/sources.list"
  # No package's install starts its service in the root (dbus, for one).
  printf '#!/bin/sh\nexit 101\n' >"$root.making/usr/sbin/policy-rc.d"
  chmod +x "$root.making/usr/sbin/policy-rc.d"
  touch "$root.making/.roundhouse-root"
  mv "$root.making" "$root"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Every Debian machine has an /etc/hosts naming localhost (the installer writes it, a
# container's runtime mounts one); bookworm's debootstrap leaves none, and without it
# "localhost" does not resolve: Selenium's chromedriver Service, which waits on
# localhost:PORT, then fails with "Can not connect to the Service".
[ -f "$root/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
# The root trusts the certificate authorities this machine trusts (a proxy's, for one), so
# pip reaches PyPI from it as from here.
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /etc/ssl/certs/ca-certificates.crt "$root/usr/local/share/ca-certificates/this-machine.crt"
  chroot "$root" update-ca-certificates >/dev/null 2>&1 || echo "roundhouse: update-ca-certificates failed in $root" >&2
fi

# The checkout as it is (tracked and new files, uncommitted changes too; not what git
# ignores), over the last copy; the root's own .venv stays.
copy="$root/root/roundhouse"
mkdir -p "$copy"
find "$copy" -mindepth 1 -maxdepth 1 ! -name .venv -exec rm -rf --one-file-system {} +
if git -C "$checkout" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$checkout" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' file; do
      if [ -e "$checkout/$file" ]; then printf '%s\0' "$file"; fi  # not one deleted since
    done |
    tar -C "$checkout" --null -T - -cf - | tar -C "$copy" -xf -
else
  tar -C "$checkout" --exclude=./.venv --exclude=./.git -cf - . | tar -C "$copy" -xf -
fi

echo "roundhouse: running in $root ($release): ${command[*]}" >&2
# Inside the namespaces: mount what a desktop needs, then chroot with a clean environment.
inside='
  set -e
  root="$1"; shift
  mount --bind "$root" "$root"  # / a mount point, as on a machine: `ip netns` remounts it
  mount -t proc proc "$root/proc"
  mount --rbind /sys "$root/sys"
  mount --rbind /dev "$root/dev"
  mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$root/run"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"  # empty, as in a new container
  exec chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM="${TERM:-dumb}" CI="${CI:-}" sh -c "cd /root/roundhouse && exec \"\$@\"" sh "$@"
'
# Each link dies with the one before it (setpriv --pdeathsig, unshare --kill-child): this
# script killed, even with SIGKILL, ends everything in the namespace.
status=0
setpriv --pdeathsig KILL timeout --kill-after=30 "${RUN_TIMEOUT:-7200}" \
  setpriv --pdeathsig KILL unshare --mount --propagation private --pid --fork --kill-child \
  bash -c "$inside" bash "$root" "${command[@]}" || status=$?
echo "roundhouse: ${command[*]} in $release exited $status" >&2
exit "$status"
}
