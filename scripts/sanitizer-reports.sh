# Sourced by scripts/sanitize.sh and scripts/tsan.sh: every report of every process, whether
# or not its test noticed.
#   finish_with_reports LOGS PATTERN NAME STATUS   prints the logs in LOGS that match PATTERN
#   and exits 1 if there are any (NAME says so on stderr), else with STATUS.
finish_with_reports() {
  local logs=$1 pattern=$2 name=$3 status=$4 reports r
  reports=$(grep -l -E "$pattern" "$logs"/* 2>/dev/null || true)
  for r in $reports; do
    echo "== sanitizer report: $r"
    head -n 60 "$r"
  done
  if [[ -n "$reports" ]]; then
    echo "$name: $(wc -w <<<"$reports") process(es) reported errors" >&2
    exit 1
  fi
  exit "$status"
}
