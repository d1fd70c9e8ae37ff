# Independent runs, as many at a time as the machine has CPUs, each into files of its own,
# for `.ci/same-bits` and `.ci/aarch64` (sourced, not run). A script adds its runs with
# `add_run`, calls `run_all`, and then reads each run's results in the order it added them:
#
#   add_run "chapter 4's tour on 1 thread" "ENGINE_NUM_THREADS=1 target/debug/chapter04"
#   run_all
#   cat "$(run_out 0)"; [ "$(run_status 0)" = 0 ]
#
# Runs that need others to have ended first are added after a `run_all`, and a second
# `run_all` runs them.
#
# SAME_BITS_JOBS sets how many run at a time (default: the CPUs, `nproc`).

# Where cargo builds (target/ unless CARGO_TARGET_DIR or a config says otherwise).
target_dir=$(cargo metadata --format-version 1 --no-deps --locked \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

run_dir=$(mktemp -d)
trap 'rm -rf "$run_dir"' EXIT

# What each run is: run_labels[i] says what it checks, run_commands[i] is run with
# `bash -o pipefail -c`.
run_labels=()
run_commands=()
# The first run that `run_all` has not run yet.
run_next=0

# add_run LABEL COMMAND: adds a run; its number is the count of runs added before it.
add_run() {
    run_labels+=("$1")
    run_commands+=("$2")
}

# The files of run i: its standard output, standard error, exit status and wall seconds.
run_out() { echo "$run_dir/$1.out"; }
run_err() { echo "$run_dir/$1.err"; }
run_status() { cat "$run_dir/$1.status"; }
run_seconds() { cat "$run_dir/$1.seconds"; }

# Runs run i into its files.
run_one() {
    local i=$1 start=$SECONDS status=0
    bash -o pipefail -c "${run_commands[$i]}" > "$(run_out "$i")" 2> "$(run_err "$i")" \
        || status=$?
    echo "$status" > "$run_dir/$i.status"
    echo $((SECONDS - start)) > "$run_dir/$i.seconds"
}

# Runs every run added since the last `run_all`, in the order added, as many at a time as
# there are CPUs, and returns when all have ended: add long runs first, so that the last
# ones to end are short.
run_all() {
    local jobs=${SAME_BITS_JOBS:-$(nproc)} running=0 start=$SECONDS i
    echo "$((${#run_labels[@]} - run_next)) runs, $jobs at a time"
    for ((i = run_next; i < ${#run_labels[@]}; i++)); do
        if ((running >= jobs)); then
            wait -n
            running=$((running - 1))
        fi
        run_one "$i" &
        running=$((running + 1))
    done
    wait
    run_next=${#run_labels[@]}
    echo "all runs ended in $((SECONDS - start)) s"
}

# Says that run i failed, with its exit status and the last lines of its output and errors.
run_failure() {
    echo "FAILED (exit status $(run_status "$1")); its last lines, then its last errors:"
    tail -n 20 "$(run_out "$1")"
    tail -n 20 "$(run_err "$1")"
}

# compare_run I REFERENCE SAME: prints "LABEL: SAME (seconds)" when runs I and REFERENCE
# passed and printed the same bytes, else why not, and returns 1.
compare_run() {
    local i=$1 reference=$2 same=$3
    if [ "$(run_status "$reference")" != 0 ]; then
        echo "${run_labels[$reference]}:"
        run_failure "$reference"
        return 1
    fi
    if [ "$(run_status "$i")" != 0 ]; then
        echo "${run_labels[$i]}:"
        run_failure "$i"
        return 1
    fi
    if ! cmp -s "$(run_out "$reference")" "$(run_out "$i")"; then
        echo "${run_labels[$i]}: DIFFERENT from ${run_labels[$reference]}:"
        diff "$(run_out "$reference")" "$(run_out "$i")" | head -20 || true
        return 1
    fi
    echo "${run_labels[$i]}: $same ($(run_seconds "$i") s)"
}
