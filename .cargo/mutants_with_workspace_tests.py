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
"""
import json
import subprocess
import sys
import time
from pathlib import Path


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
            try:
                run = subprocess.run(
                    ["bash", "-c", command], capture_output=True, text=True, timeout=limit
                )
                output = run.stdout + run.stderr
                if run.returncode == 0:
                    outcome = "missed"
                elif "could not compile" in output or "error[E" in output:
                    outcome = "unviable"
                else:
                    outcome = "caught"
                detail = "\n".join(
                    line for line in output.splitlines()
                    if "FAILED" in line or "panicked" in line or line.startswith("error")
                )[:2000]
            except subprocess.TimeoutExpired:
                outcome, detail = "caught (timeout)", ""
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
