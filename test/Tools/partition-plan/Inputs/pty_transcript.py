"""Runs a command on a pseudo-terminal (its stdin, stdout and stderr) and
prints what it wrote with the terminal's control characters made visible:
carriage return as "\\r", escape as "\\e", one line per newline written
(the terminal's "\\r\\n" printed as a plain line end).

usage: pty_transcript.py COMMAND...    (exits with the command's status)
"""
import os
import pty
import sys


def main():
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
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
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    sys.stdout.write(text.replace("\r", "\\r").replace("\x1b", "\\e"))
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
