#!/usr/bin/env bash
# The distribution packages the sandbox needs besides its pinned builds: Redis, for Argo CD; and
# the tests': Chromium, which opens the HTML reports (tests/acceptance/test_html_report.py).
# `make test` and `make demo` run this; it installs what is missing when it may (as root, or
# with passwordless sudo, as on CI runners) and otherwise says what to install.
set -euo pipefail

missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v chromium >/dev/null || command -v google-chrome >/dev/null || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0

as_root=""
if [ "$(id -u)" -eq 0 ]; then as_root="env"; elif sudo -n true 2>/dev/null; then as_root="sudo -n"; fi
if command -v apt-get >/dev/null && [ -n "$as_root" ]; then
  echo "installing the distribution's ${missing[*]} (Argo CD keeps its cache in Redis; the tests open the HTML reports in Chromium)" >&2
  install() { $as_root DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
  install || { $as_root apt-get update >/dev/null && install; }
  exit 0
fi
echo "the sandbox's Argo CD and the tests need ${missing[*]}: install them from the distribution's" \
  "packages (Debian/Ubuntu: sudo apt-get install redis-server chromium; Fedora: sudo dnf install redis chromium)" >&2
exit 1
