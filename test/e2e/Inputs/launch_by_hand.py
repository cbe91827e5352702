"""Starts the ranks of a job as a launcher would, with its variables.

usage: launch_by_hand.py LAUNCHER WORLD [options] -- COMMAND...

LAUNCHER is torchrun, slurm or openmpi: each rank gets that launcher's
rank, size and local rank variables, MASTER_ADDR (--addr ADDR, default
127.0.0.1; --addr host: this host's address on its default route, or
127.0.0.1 when it has none), MASTER_PORT (a free port, or --port TEXT) and a shared
PARTITION_STORE_TOKEN (--token-of-rank R=TOKEN gives rank R another one;
--no-token sets none). Other launchers' variables are removed.

  --kill-rank R=S       SIGKILL rank R after S seconds and print how long the
                        other ranks took to exit
  --listen              print the IPv4 addresses the ranks listen on (the
                        store and Gloo), sampled while they run, with
                        MASTER_ADDR's written as "MASTER_ADDR"
  --delay-rank R=S      start rank R S seconds after the others (so that
                        they wait, listening, in Gloo's rendezvous)
  --forge-rank R=KIND   instead of running rank R, forge its result in the
                        store (store_forger.py KIND R)

Prints every rank's stderr, rank 0's stdout, then "rank R: exit CODE" per
rank; every rank must end within 60 s.
"""

import os
import signal
import socket
import subprocess
import sys
import time

VARIABLES = {
    "torchrun": ("RANK", "WORLD_SIZE", "LOCAL_RANK"),
    "slurm": ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
    "openmpi": ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                "OMPI_COMM_WORLD_LOCAL_RANK"),
}


def listening(pids):
    """IPv4 addresses of the listening TCP sockets of `pids`."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            pass
    addresses = set()
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:
                ip = bytes.fromhex(local.split(":")[0])[::-1]
                addresses.add(socket.inet_ntoa(ip))
    return addresses


def main():
    launcher, world = sys.argv[1], int(sys.argv[2])
    split = sys.argv.index("--")
    options, command = sys.argv[3:split], sys.argv[split + 1:]
    addr, port, kill_after, kill_rank, listen = "127.0.0.1", None, None, 0, False
    tokens, no_token, delays, forged = {}, False, {}, {}
    i = 0
    while i < len(options):
        if options[i] == "--addr":
            addr = options[i + 1]
            i += 1
        elif options[i] == "--port":
            port = options[i + 1]
            i += 1
        elif options[i] == "--kill-rank":
            r, t = options[i + 1].split("=", 1)
            kill_rank, kill_after = int(r), float(t)
            i += 1
        elif options[i] == "--token-of-rank":
            r, t = options[i + 1].split("=", 1)
            tokens[int(r)] = t
            i += 1
        elif options[i] == "--delay-rank":
            r, t = options[i + 1].split("=", 1)
            delays[int(r)] = float(t)
            i += 1
        elif options[i] == "--forge-rank":
            r, kind = options[i + 1].split("=", 1)
            forged[int(r)] = kind
            i += 1
        elif options[i] == "--no-token":
            no_token = True
        elif options[i] == "--listen":
            listen = True
        i += 1
    if addr == "host":
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect(("203.0.113.1", 9))
                addr = s.getsockname()[0]
        except OSError:
            addr = "127.0.0.1"
    if port is None:
        with socket.socket() as s:
            s.bind((addr, 0))
            port = str(s.getsockname()[1])
    base = {k: v for k, v in os.environ.items()
            if not any(k in names for names in VARIABLES.values())
            and k not in ("MASTER_ADDR", "MASTER_PORT",
                          "PARTITION_STORE_TOKEN", "GLOO_SOCKET_IFNAME")}
    base["MASTER_ADDR"], base["MASTER_PORT"] = addr, port
    token = os.urandom(16).hex()
    procs = [None] * world
    envs = []
    for rank in range(world):
        env = dict(base)
        name_rank, name_size, name_local = VARIABLES[launcher]
        env[name_rank], env[name_size] = str(rank), str(world)
        env[name_local] = str(rank)
        if not no_token:
            env["PARTITION_STORE_TOKEN"] = tokens.get(rank, token)
        envs.append(env)
    start = time.monotonic()
    seen = set()
    killed_at = None
    while any(p is None or p.poll() is None for p in procs):
        now = time.monotonic()
        for rank in range(world):
            if procs[rank] is None and now - start >= delays.get(rank, 0):
                forger = [sys.executable,
                          os.path.join(os.path.dirname(__file__),
                                       "store_forger.py"),
                          forged.get(rank, ""), str(rank)]
                procs[rank] = subprocess.Popen(forger if rank in forged
                                               else command, env=envs[rank],
                                               stdout=subprocess.PIPE,
                                               stderr=subprocess.PIPE)
        if listen:
            seen |= listening([p.pid for p in procs
                               if p is not None and p.poll() is None])
        if kill_after is not None and killed_at is None and \
                now - start >= kill_after:
            procs[kill_rank].kill()
            killed_at = now
        if now - start > 60:
            for p in procs:
                if p is not None:
                    p.kill()
            print("the ranks did not end within 60 s")
            return 1
        time.sleep(0.005)
    ended = time.monotonic()
    outputs = [p.communicate() for p in procs]
    for rank, (_, err) in enumerate(outputs):
        sys.stdout.write(err.decode())
    sys.stdout.write(outputs[0][0].decode())
    if listen:
        print("listen addresses:", " ".join(
            sorted("MASTER_ADDR" if a == addr else a for a in seen)))
    if killed_at is not None:
        print(f"the others exited within {ended - killed_at:.0f} s of rank "
              f"{kill_rank}")
    for rank, p in enumerate(procs):
        print(f"rank {rank}: exit {p.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
