#!/usr/bin/env python3
"""Tests of the mutation runner (mutants_with_workspace_tests.py): no process that a test
command starts outlives its verdict. Run by `.ci/run`:

    python3 .cargo/test_mutants_with_workspace_tests.py
"""
import difflib
import json
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutants_with_workspace_tests as runner  # noqa: E402

RUNNER = Path(runner.__file__).resolve()


def running(pid):
    """Whether the process `pid` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def running_with(token):
    """The PIDs of running processes whose command line holds `token`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if token.encode() in cmdline and running(int(entry)):
            found.append(int(entry))
    return found


class RunCommand(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.pidfile = Path(self.dir.name) / "pid"

    def tearDown(self):
        self.dir.cleanup()

    def test_a_timeout_ends_the_sleeping_grandchild(self):
        # bash -c (the child) starts bash -c (the grandchild), which starts sleep.
        command = f"bash -c 'sleep 77 & echo $! > {self.pidfile}; wait'"
        start = time.time()
        returncode, _ = runner.run_command(command, limit=1)
        self.assertIsNone(returncode, "a run past the limit has no exit status")
        self.assertLess(time.time() - start, 1 + runner.GROUP_EXIT_SECONDS)
        sleeper = int(self.pidfile.read_text())
        self.assertFalse(running(sleeper), f"sleep (pid {sleeper}) outlived the timeout")

    def test_a_background_process_is_ended_after_a_normal_exit(self):
        command = f"sleep 77 > /dev/null 2>&1 & echo $! > {self.pidfile}; echo done"
        returncode, output = runner.run_command(command, limit=30)
        self.assertEqual((returncode, output), (0, "done\n"))
        sleeper = int(self.pidfile.read_text())
        self.assertFalse(running(sleeper), f"sleep (pid {sleeper}) outlived its command")

    def test_exit_status_and_output_come_back(self):
        self.assertEqual(runner.run_command("echo out; echo err >&2; exit 3", 30),
                         (3, "out\nerr\n"))

    def test_verdicts(self):
        self.assertEqual(runner.verdict(None, ""), "caught (timeout)")
        self.assertEqual(runner.verdict(0, ""), "missed")
        self.assertEqual(runner.verdict(101, "error[E0308]: mismatched types"), "unviable")
        self.assertEqual(runner.verdict(101, "test x ... FAILED"), "caught")


class WholeRun(unittest.TestCase):
    def test_a_looping_mutant_leaves_no_process_behind(self):
        with tempfile.TemporaryDirectory() as tree:
            tree = Path(tree)
            # A token of this run's own, so no other process on the machine matches it.
            script = f"loop_{os.getpid()}_{time.time_ns()}.sh"
            source = "n=0\nwhile [ $n -lt 3 ]; do n=$((n + 1)); done\n"
            (tree / script).write_text(source)
            git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tree)]
            subprocess.run(git + ["init", "-q"], check=True)
            subprocess.run(git + ["add", script], check=True)
            subprocess.run(git + ["commit", "-qm", "loop"], check=True)

            def mutant(name, old, new):
                diff = "".join(difflib.unified_diff(
                    source.splitlines(True), source.replace(old, new).splitlines(True),
                    f"a/{script}", f"b/{script}"))
                return {"name": name, "file": script, "diff": diff}

            mutants = [
                mutant("endless", "$((n + 1))", "$((n - 1))"),
                mutant("shorter", "-lt 3", "-lt 2"),
            ]
            (tree / "mutants.json").write_text(json.dumps(mutants))
            # The test command's test binary is a grandchild of the runner, as under cargo
            # (each `; true` keeps a bash from replacing itself with its last command).
            command = f"bash -c 'bash {script}; true'; true"
            subprocess.run(
                [sys.executable, str(RUNNER), "mutants.json", "log.jsonl", command, "2"],
                cwd=tree, check=True, capture_output=True, timeout=120,
            )
            self.assertEqual(running_with(script), [], "the looping mutant's shell survived")
            outcomes = [json.loads(line)["outcome"]
                        for line in (tree / "log.jsonl").read_text().splitlines()]
            self.assertEqual(outcomes, ["caught (timeout)", "missed"])
            self.assertEqual((tree / script).read_text(), source, "the file was not restored")


if __name__ == "__main__":
    unittest.main(verbosity=2)
