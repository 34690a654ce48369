# Sourced by the device scripts that run the suite's optimisation instances (device_lns.sh,
# device_compare.sh, device_profile.sh).

# opt_setup OUT [REGEX]: the output folder OUT, a scratch folder ($work) and, with REGEX, the
# instances whose data file matches it ($cases, opt_cases).
opt_setup() {
  mkdir -p "$1"
  work=$(mktemp -d)
  [ $# -lt 2 ] || opt_cases "$2"
}

# table_start FILE COLUMN...: a Markdown table's header and rule, into FILE and on stdout.
table_start() {
  local file=$1 head="|" rule="|"; shift
  for c in "$@"; do head+=" $c |"; rule+="---|"; done
  printf '%s\n%s\n' "$head" "$rule" | tee "$file"
}

# opt_cases REGEX: fills the array `cases` with MODEL:DATA of every optimisation instance of
# models/bench/suite.json whose data file matches REGEX.
opt_cases() {
  mapfile -t cases < <(python3 - "$1" <<'PY'
import json, re, sys
for i in json.load(open("models/bench/suite.json"))["instances"]:
    if i["mode"] == "opt" and re.search(sys.argv[1], i.get("data", "")):
        print(i["model"] + ":" + i.get("data", ""))
PY
)
}

# compile_case MODEL:DATA: prints the path of its FlatZinc, compiled with fzn-gpu's library;
# with FZN_DIR, the one compiled beforehand there (DATA's name, .fzn) where it is (a call whose
# carry has no room for MiniZinc's tarball beside PoCL's).
compile_case() {
  local model=${1%%:*} data=${1##*:}
  local f="$work/${data%.dzn}.fzn"
  if [ -n "${FZN_DIR:-}" ] && [ -f "$FZN_DIR/${data%.dzn}.fzn" ]; then echo "$FZN_DIR/${data%.dzn}.fzn"; return; fi
  minizinc -c --solver gpu-fzn "models/bench/$model" "models/bench/data/$data" --fzn "$f" \
    --ozn "$work/x.ozn" >/dev/null && echo "$f"
}

# timed COMMAND...: runs it, writing each line of its output to $work/run.txt after the
# seconds since the start; best, first and last then read that file.
timed() {
  local t0=$EPOCHREALTIME
  "$@" 2>&1 | while IFS= read -r line; do
    printf '%s %s\n' "$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $t0}")" "$line"; done > "$work/run.txt"
}
best() { grep -oE "objective=[0-9-]+" "$work/run.txt" | tail -1 | cut -d= -f2; }
first() { grep -E " ----------$" "$work/run.txt" | head -1 | cut -d' ' -f1; }
last() { grep -E " ----------$" "$work/run.txt" | tail -1 | cut -d' ' -f1; }
