"""Runs a command that writes into a FIFO while reading the FIFO.

usage: read_fifo.py FIFO OUT -- COMMAND...

Opens FIFO for reading (without blocking, so the command's writer can open
it), runs COMMAND, copies everything read from the FIFO to OUT and exits
with the command's status. A command that replaces the FIFO instead of
writing into it leaves OUT empty.
"""
import os
import select
import subprocess
import sys


def main():
    fifo, out = sys.argv[1], sys.argv[2]
    command = sys.argv[sys.argv.index("--") + 1:]
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    data = bytearray()

    def drain():
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                return
            data.extend(chunk)

    proc = subprocess.Popen(command)
    while proc.poll() is None:
        select.select([fd], [], [], 0.05)
        drain()
    drain()
    os.close(fd)
    with open(out, "wb") as f:
        f.write(data)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()
