"""Runs a partition-run training command on a pseudo-terminal (stdout and
stderr both) and checks that the progress is one bar redrawn in place.

usage: progress_bar.py STEPS COMMAND...

The transcript must hold, for each step K of STEPS, the bar
"\r\033[K[###...---] [K/STEPS] loss ..." (never a progress line of its own,
that is "[K/STEPS]" right after a newline), the bar taken off the line
("\r\033[K") before every loss line and before the summary, and the summary;
the command must succeed.
"""
import os
import pty
import re
import sys


def main():
    steps = int(sys.argv[1])
    command = sys.argv[2:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode("utf-8", "replace")
    errors = []
    if os.waitstatus_to_exitcode(status) != 0:
        errors.append(f"exit status {os.waitstatus_to_exitcode(status)}")
    clear = "\r\x1b[K"
    for k in range(1, steps + 1):
        bar = re.escape(clear) + r"\[[#-]{20}\] " + re.escape(f"[{k}/{steps}] loss ")
        if not re.search(bar, text):
            errors.append(f"no bar for step {k}")
    if re.search(r"\n\[\d+/\d+\]", text):
        errors.append("a progress line of its own on a terminal")
    if f"[{'#' * 20}] [{steps}/{steps}]" not in text:
        errors.append("the last bar is not full")
    for m in re.finditer(r"(step \d+: loss|summary: )", text):
        before = text[max(0, m.start() - len(clear)):m.start()]
        # A line that follows a newline never had the bar on it.
        if before not in ("", clear) and not before.endswith("\n"):
            errors.append(f"{m.group(1)!r} written over the bar: {before!r}")
    if "summary: " not in text:
        errors.append("no summary line")
    if errors:
        print("\n".join(errors))
        print("transcript: " + repr(text))
        sys.exit(1)
    print(f"ok: a bar redrawn in place for {steps} steps")


if __name__ == "__main__":
    main()
