#!/usr/bin/env bash
# The MiniZinc IDE's parameter table for fzn-gpu, as a user sees it (docs/ide_parameters.png):
# Debian's minizinc-ide (2.6.3) under Xvfb (a display only this user's processes may reach), fzn-gpu chosen, the configuration editor shown,
# "Add all known parameters". Needs: apt-get install minizinc-ide xvfb xauth xdotool imagemagick, and
# fzn-gpu's solver configuration installed (`fzn-gpu install-solver-config`).
# Usage: bash scripts/ide_screenshot.sh [OUT.png]   (the clicks are at this layout's places)
set -euo pipefail
out=${1:-docs/ide_parameters.png}
export DISPLAY=:97
work=$(mktemp -d)   # this user's own folder: no predictable path in /tmp
# a display for this run alone: no TCP, and only this user's processes admitted (its own cookie)
xauth -f "$work/auth" add "$DISPLAY" . "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export XAUTHORITY="$work/auth"
Xvfb $DISPLAY -screen 0 1600x1000x24 -nolisten tcp -auth "$work/auth" >/dev/null 2>&1 & xvfb=$!
ide=""
trap 'kill $ide $xvfb 2>/dev/null || true; rm -rf "$work"' EXIT
sleep 2
QT_QPA_PLATFORM=xcb minizinc-ide models/nqueens.mzn >/dev/null 2>&1 & ide=$!
sleep 8
if xdotool search --name "Automatic check for updates" >/dev/null 2>&1; then
  xdotool mousemove 885 525 click 1; sleep 2   # "No" to the update check
fi
win=$(xdotool search --onlyvisible --name "nqueens.mzn" | head -1)
xdotool windowmove "$win" 0 0 windowsize "$win" 1600 1000; sleep 1
xdotool mousemove 743 67 click 1; sleep 1       # the solver configuration list
xdotool mousemove 720 43 click 1; sleep 1       # fzn-gpu
xdotool mousemove 1342 58 click 1; sleep 2      # Show configuration editor
xdotool mousemove 1300 700; for _ in $(seq 15); do xdotool click 5; done; sleep 1
xdotool mousemove 1360 911 click 1; sleep 1     # Add parameter
xdotool mousemove 1439 847 click 1; sleep 1     # Add all known parameters
xdotool mousemove 1300 700; for _ in $(seq 30); do xdotool click 5; done; sleep 1
xdotool mousemove 1093 500; sleep 0.3; xdotool mousedown 1; sleep 0.3   # the editor wider
for x in 1080 1050 1000 950 900 850 800 750 700; do xdotool mousemove $x 500; sleep 0.1; done
xdotool mouseup 1; sleep 1
import -window root "$work/full.png"
convert "$work/full.png" -crop 900x880+700+95 +repage "$out"
echo "wrote $out"
