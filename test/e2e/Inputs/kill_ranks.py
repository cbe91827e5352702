"""Kills ranks of `partition-run --processes` runs at random times.

usage: kill_ranks.py SEED TRIALS TIMEOUT -- PARTITION-RUN ARGS...

Each trial starts the command (which must run for longer than the kills
take, e.g. many --steps) in a session of its own, waits a random time,
then does one of:
  kill  SIGKILL a random rank: the run must fail within 2 * TIMEOUT with
        "rank R was killed by signal 9";
  stop  SIGSTOP a random rank: the run must fail within 2 * TIMEOUT with
        "rank R was stopped by signal 19";
  term  SIGTERM partition-run itself: every rank must be gone within 20 s
        (at once in practice).
After each trial no process of the session may be left. Prints one line per
trial, then "trials: N ok"; exits 1 at the first failure.
"""

import os
import random
import signal
import subprocess
import sys
import time


def session_processes(sid):
    """The pids of live processes whose session id is `sid`."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The fields after the command, which is in parentheses.
        fields = stat[stat.rindex(")") + 2:].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state not in "ZX":
            pids.append(int(entry))
    return pids


def ranks_of(sid, parent):
    """{rank: pid} of the children of `parent` that have exec'd."""
    ranks = {}
    for pid in session_processes(sid):
        if pid == parent:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        for var in env:
            if var.startswith(b"RANK="):
                ranks[int(var[5:])] = pid
    return ranks


def main():
    seed, trials, timeout = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    command = sys.argv[sys.argv.index("--") + 1:]
    rng = random.Random(seed)
    for trial in range(trials):
        action = rng.choice(["kill"] * 6 + ["stop", "term"])
        delay = rng.uniform(0.0, 1.5)
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
        sid = run.pid
        start = time.monotonic()
        time.sleep(delay)
        # Wait for every rank to exist, so that any of them may be hit.
        ranks = ranks_of(sid, run.pid)
        while len(ranks) < 4 and run.poll() is None:
            if time.monotonic() - start > 30:
                print(f"trial {trial}: the ranks did not start within 30 s")
                return 1
            time.sleep(0.01)
            ranks = ranks_of(sid, run.pid)
        if run.poll() is not None:
            print(f"trial {trial}: the run ended before the {action}: "
                  f"exit {run.returncode}: {run.stderr.read().decode()}")
            return 1
        rank = rng.choice(sorted(ranks))
        hit = time.monotonic()
        if action == "kill":
            os.kill(ranks[rank], signal.SIGKILL)
            expected = f"rank {rank} was killed by signal 9"
        elif action == "stop":
            os.kill(ranks[rank], signal.SIGSTOP)
            expected = f"rank {rank} was stopped by signal 19"
        else:
            run.send_signal(signal.SIGTERM)
            expected = None
        try:
            _, err = run.communicate(timeout=2 * timeout)
        except subprocess.TimeoutExpired:
            print(f"trial {trial}: {action} of rank {rank}: partition-run "
                  f"still runs {2 * timeout} s later")
            os.killpg(sid, signal.SIGKILL)
            return 1
        took = time.monotonic() - hit
        err = err.decode()
        if expected and (run.returncode != 1 or expected not in err):
            print(f"trial {trial}: {action} of rank {rank}: exit "
                  f"{run.returncode}, expected \"{expected}\" in:\n{err}")
            return 1
        # The ranks die with partition-run or are killed before it exits;
        # allow the kernel time to deliver a death signal (generous: a loaded
        # machine may take a while to tear a process down; a rank left
        # running would stay past any bound).
        deadline = time.monotonic() + 20
        left = session_processes(sid)
        while left and time.monotonic() < deadline:
            time.sleep(0.02)
            left = session_processes(sid)
        if left:
            print(f"trial {trial}: {action} of rank {rank}: processes "
                  f"{left} outlived the run")
            for pid in left:
                os.kill(pid, signal.SIGKILL)
            return 1
        lines = [l for l in err.splitlines() if l.startswith("partition-run")]
        for line in lines:
            if not line.startswith("partition-run: ") or "partition-run:" in line[15:]:
                print(f"trial {trial}: a torn or merged line: {line!r}")
                return 1
        print(f"trial {trial}: {action} of rank {rank} after {delay:.2f} s: "
              f"ended in {took:.2f} s")
    print(f"trials: {trials} ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
