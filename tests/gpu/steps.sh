# The step runner of tests/gpu/run.sh and bench/gpu.sh (POSIX sh; sourced, not run).
# A step fails when its command exits non-zero (a timeout's 124 and a test's SKIP 77
# included: on the GPU machine a skipped GPU test is a failed one) or when its log has a
# line that starts with FAIL.  steps_finish prints the failed steps last and returns 1
# when there is any, so that a GPU run that went wrong cannot end with exit 0.
# tests/gpu/steps_test.sh checks this without a GPU.
STEPS_RUN=0
STEPS_FAILED=0
STEPS_FAILED_LIST=""

_step_record_failure() {
  STEPS_FAILED=$((STEPS_FAILED + 1))
  STEPS_FAILED_LIST="$STEPS_FAILED_LIST
  $1: $2"
}

# step_failed NAME REASON: a failed check done outside run_step (a program missing, an
# output compared after the run), counted as a step of its own.
step_failed() {
  STEPS_RUN=$((STEPS_RUN + 1))
  _step_record_failure "$1" "$2"
}

# run_step NAME LOG CMD [ARG...]: run CMD with stdout and stderr into LOG, record the
# result; returns CMD's exit status.
run_step() {
  _name=$1 _log=$2
  shift 2
  "$@" > "$_log" 2>&1
  _rc=$?
  STEPS_RUN=$((STEPS_RUN + 1))
  if [ "$_rc" != 0 ]; then
    _why="exit $_rc"
    [ "$_rc" = 124 ] && _why="exit 124 (timed out)"
    [ "$_rc" = 77 ] && _why="exit 77 (skipped: no GPU?)"
    _step_record_failure "$_name" "$_why, log $_log"
  elif grep -q '^FAIL' "$_log" 2>/dev/null; then
    _step_record_failure "$_name" "$(grep -c '^FAIL' "$_log") FAIL line(s), log $_log"
  fi
  return "$_rc"
}

# steps_finish: the failed steps, last; 0 when none failed, else 1.
steps_finish() {
  if [ "$STEPS_FAILED" = 0 ]; then
    echo "==== all $STEPS_RUN steps passed ===="
    return 0
  fi
  echo "==== FAILED: $STEPS_FAILED of $STEPS_RUN steps ====$STEPS_FAILED_LIST"
  return 1
}
