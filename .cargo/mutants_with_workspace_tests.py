#!/usr/bin/env python3
"""Mutation testing with the workspace package's tests, which `cargo mutants -p engine`
does not run (see mutants.toml). Applies each mutant of a list, runs a test command in the
same tree, and records it as caught, missed or unviable (it did not compile); a test run
past the time limit counts as caught, as cargo-mutants counts it.

    cargo mutants --no-config -p engine --file engine/src/optim/grad_scaler.rs \\
        --list --json --diff > /tmp/grad_scaler.json
    python3 .cargo/mutants_with_workspace_tests.py /tmp/grad_scaler.json \\
        /tmp/grad_scaler.jsonl 'cargo test --locked --test engine -q'

Run it in a worktree of its own (`git worktree add`): it edits the sources in place and
restores each file with `git checkout` after its mutant. A log that exists is resumed.

Each test command runs in a process group of its own, and the whole group is ended when
the command ends or runs past the limit: a mutant that makes a loop endless would
otherwise leave its test binary (a grandchild of the runner, under cargo) running on after
its verdict. `test_mutants_with_workspace_tests.py` beside this file tests that.
"""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# How long the processes of a killed group get to disappear before the runner gives up.
GROUP_EXIT_SECONDS = 10


def end_group(pgid):
    """Ends every process of the group `pgid` (SIGKILL) and waits until none is left,
    zombies aside (a process whose parent died is reaped by init, not by us). Returns
    True when none is left."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return True
    deadline = time.time() + GROUP_EXIT_SECONDS
    while time.time() < deadline:
        if not live_members(pgid):
            return True
        time.sleep(0.05)
    return False


def live_members(pgid):
    """The PIDs of the group `pgid` that are still running (not zombies), from /proc."""
    live = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name (field 2) is in parentheses and may hold spaces.
        fields = stat[stat.rindex(")") + 2:].split()
        state, group = fields[0], int(fields[2])
        if group == pgid and state not in ("Z", "X"):
            live.append(int(entry))
    return live


def run_command(command, limit):
    """Runs `command` with `bash -c` in a process group of its own, for at most `limit`
    seconds. Returns `(returncode, output)`, with `returncode` None when it ran past the
    limit; either way no process of its group is left running afterwards."""
    process = subprocess.Popen(
        ["bash", "-c", command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=limit)
        returncode = process.returncode
    except subprocess.TimeoutExpired:
        returncode = None
    # The group's id is its leader's PID. Ended after a normal exit too: a background
    # process that the command left behind must not outlive its verdict either.
    if not end_group(process.pid):
        sys.exit(f"processes of the test command's group {process.pid} survived SIGKILL")
    if returncode is None:
        # Every writer of the pipe is gone now, so this returns at once.
        output, _ = process.communicate()
    return returncode, output


def verdict(returncode, output):
    """A mutant's outcome from its test command's exit status and output."""
    if returncode is None:
        return "caught (timeout)"
    if returncode == 0:
        return "missed"
    if "could not compile" in output or "error[E" in output:
        return "unviable"
    return "caught"


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    mutants = json.loads(Path(sys.argv[1]).read_text())
    log = Path(sys.argv[2])
    command = sys.argv[3]
    limit = int(sys.argv[4]) if len(sys.argv) == 5 else 300
    done = set()
    if log.exists():
        done = {json.loads(line)["name"] for line in log.read_text().splitlines()}
    for mutant in mutants:
        if mutant["name"] in done:
            continue
        start = time.time()
        patched = subprocess.run(
            ["patch", "-p0", "--quiet", mutant["file"]],
            input=mutant["diff"], text=True, capture_output=True,
        )
        if patched.returncode != 0:
            outcome, detail = "patch-failed", patched.stdout + patched.stderr
        else:
            returncode, output = run_command(command, limit)
            outcome = verdict(returncode, output)
            detail = "\n".join(
                line for line in output.splitlines()
                if "FAILED" in line or "panicked" in line or line.startswith("error")
            )[:2000]
            subprocess.run(["git", "checkout", "--", mutant["file"]], check=True)
        record = {
            "name": mutant["name"],
            "outcome": outcome,
            "seconds": round(time.time() - start, 1),
            "detail": detail,
        }
        with log.open("a") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        print(outcome, mutant["name"], record["seconds"], flush=True)


if __name__ == "__main__":
    main()
