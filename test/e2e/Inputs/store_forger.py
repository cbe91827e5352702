"""Sets one key in partition-run's store, as a forger who knows the token.

usage: store_forger.py KIND RANK (MASTER_ADDR, MASTER_PORT and
PARTITION_STORE_TOKEN from the environment)

Joins the job as rank RANK and sets result/RANK to a forged rank record:
KIND "huge" claims 2^60 mesh coordinates; "shape" is well formed but holds
output "y" as f32[1] at mesh coordinates [1, 1].
"""

import os
import socket
import struct
import sys
import time


def request(sock, op, key, arg, payload=b""):
    sock.sendall(struct.pack("<BI", op, len(key)) + key +
                 struct.pack("<Q", arg) + payload)
    code, size = struct.unpack("<BQ", recv(sock, 9))
    return code, recv(sock, size)


def recv(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("the store closed the connection")
        data += chunk
    return data


def main():
    kind, rank = sys.argv[1], sys.argv[2]
    host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    token = os.environ["PARTITION_STORE_TOKEN"]
    q = lambda x: struct.pack("<q", x)
    d = lambda x: struct.pack("<d", x)
    if kind == "huge":
        value = b"+" + q(1 << 60)
    else:
        value = (b"+" + q(2) + q(1) + q(1) + d(0) + d(0) + q(0) + q(0) * 6 +
                 q(1) + q(1) + b"y" + q(0) + q(1) + q(1) + q(4) + d(1)[:4] +
                 q(0))
    deadline = time.monotonic() + 30
    while True:
        try:
            sock = socket.create_connection((host, port))
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    code, text = request(sock, 3, token.encode(), 1)
    assert code == 0, text
    # Join the job as a rank does, then hand over the forged result.
    code, text = request(sock, 1, f"job/joined/{rank}".encode(), 1, b"1")
    assert code == 0, text
    code, text = request(sock, 1, f"result/{rank}".encode(), len(value), value)
    assert code == 0, text
    return 0


if __name__ == "__main__":
    sys.exit(main())
