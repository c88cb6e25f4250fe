#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# tests/svg_screenshot.sh FLAMEGRAPH.svg [OUT.png] - how a flame graph of
# the tools looks in a browser: headless Chromium opens it (its script
# runs, as in a browser window) and saves a 1400x900 screenshot (default:
# the SVG's name with .png). tests/test_outputs.py uses it; run it by hand
# to look at a flame graph, e.g.
#
#   sudo build/tools/pyprofile -p PID -o cpu.svg --format svg 5
#   tests/svg_screenshot.sh cpu.svg && xdg-open cpu.png
#
# Needs chromium (apt-get install chromium).
set -eu
svg=${1:?usage: svg_screenshot.sh FLAMEGRAPH.svg [OUT.png]}
png=${2:-${svg%.svg}.png}
case $svg in /*) ;; *) svg=$PWD/$svg ;; esac
case $png in /*) ;; *) png=$PWD/$png ;; esac
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "svg_screenshot: no chromium (apt-get install chromium)" >&2; exit 3; }
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
# a profile of its own; root needs --no-sandbox
HOME=$home timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$home" --window-size=1400,900 --screenshot="$png" "file://$svg" \
    >/dev/null 2>&1
[ -s "$png" ] || { echo "svg_screenshot: chromium wrote no $png" >&2; exit 1; }
echo "$png"
