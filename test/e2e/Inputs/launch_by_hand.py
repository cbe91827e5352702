"""Starts the ranks of a job as a launcher would, with its variables.

usage: launch_by_hand.py LAUNCHER WORLD [options] -- COMMAND...

LAUNCHER is torchrun, slurm or openmpi: each rank gets that launcher's
rank, size and local rank variables, MASTER_ADDR (--addr ADDR, default
127.0.0.1; --addr host: this host's address on its default route, or
127.0.0.1 when it has none), MASTER_PORT (a free port, or --port TEXT) and a shared
PARTITION_STORE_TOKEN (--token-of-rank R=TOKEN gives rank R another one;
--no-token sets none). Other launchers' variables are removed.

A free port is one outside the kernel's ephemeral range that nothing was
bound to a moment ago; should another process take it before rank 0 serves
on it (rank 0 says "cannot serve the store"), the whole job is started
again on another port.

  --kill-rank R=WHEN    SIGKILL rank R and print how long the other ranks
                        took to exit. WHEN is "joined" (once every rank has
                        joined the job: the store holds its verdict) or a
                        number of seconds after the start
  --stop-rank R=WHEN    SIGSTOP rank R instead (WHEN as above); once the
                        others have exited, it is killed
  --absent-rank R       never start rank R
  --flood N             start rank 0 alone, then hold N idle connections to
                        its store (a stranger's, without the token; each
                        one the store closes is opened again) while the
                        other ranks start and run
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
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import store_forger  # noqa: E402

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


def free_port(addr):
    """A port below the ephemeral range (so that no outgoing connection
    takes it) that can be bound on `addr` now."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    low = max(low, 2048)
    for _ in range(1000):
        port = random.randrange(1024, low)
        with socket.socket() as s:
            try:
                s.bind((addr, port))
                return str(port)
            except OSError:
                continue
    with socket.socket() as s:
        s.bind((addr, 0))
        return str(s.getsockname()[1])


def wait_for_verdict(addr, port, token, ready, stop):
    """Sets `ready` once the store holds the ranks' join verdict."""
    while not stop.is_set():
        try:
            with socket.create_connection((addr, int(port)), timeout=5) as s:
                s.settimeout(None)
                store_forger.request(s, 3, token.encode(), 1)
                code, _ = store_forger.request(s, 2, b"job/joined", 60000)
                if code == 0:
                    ready.set()
                    return
        except (OSError, ConnectionError, ValueError):
            pass
        time.sleep(0.05)


def flood(addr, port, count, opened, stop):
    """Holds `count` idle connections to addr:port, reopening closed ones;
    `opened` gets the number opened so far."""
    held = []
    while not stop.is_set():
        for s in list(held):
            try:
                if s.recv(1) == b"":
                    raise ConnectionError
            except BlockingIOError:
                continue
            except OSError:
                pass
            s.close()
            held.remove(s)
        if len(held) < count:
            try:
                s = socket.create_connection((addr, int(port)), timeout=5)
                s.setblocking(False)
                held.append(s)
                opened[0] += 1
            except OSError:
                time.sleep(0.01)
        else:
            time.sleep(0.005)
    for s in held:
        s.close()


def parse(options):
    o = {"addr": "127.0.0.1", "port": None, "action": None, "tokens": {},
         "no_token": False, "delays": {}, "forged": {}, "listen": False,
         "absent": set(), "flood": 0}
    i = 0
    while i < len(options):
        name = options[i]
        value = options[i + 1] if i + 1 < len(options) else ""
        if name in ("--kill-rank", "--stop-rank"):
            r, when = value.split("=", 1)
            o["action"] = (name[2:6], int(r), when)
        elif name == "--addr":
            o["addr"] = value
        elif name == "--port":
            o["port"] = value
        elif name == "--token-of-rank":
            r, t = value.split("=", 1)
            o["tokens"][int(r)] = t
        elif name == "--delay-rank":
            r, t = value.split("=", 1)
            o["delays"][int(r)] = float(t)
        elif name == "--forge-rank":
            r, kind = value.split("=", 1)
            o["forged"][int(r)] = kind
        elif name == "--absent-rank":
            o["absent"].add(int(value))
        elif name == "--flood":
            o["flood"] = int(value)
        else:
            o[name[2:].replace("-", "_")] = True
            i -= 1
        i += 2
    return o


def run(launcher, world, o, command, port):
    """Runs the job once; None when rank 0 could not serve on `port`."""
    addr = o["addr"]
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
        if not o["no_token"]:
            env["PARTITION_STORE_TOKEN"] = o["tokens"].get(rank, token)
        envs.append(env)
    stop = threading.Event()
    joined = threading.Event()
    threads = []
    action = o["action"]
    if action and action[2] == "joined":
        threads.append(threading.Thread(
            target=wait_for_verdict, args=(addr, port, token, joined, stop)))
    opened = [0]
    if o["flood"]:
        threads.append(threading.Thread(
            target=flood, args=(addr, port, o["flood"], opened, stop)))
    start = time.monotonic()
    # With --flood, the other ranks start once the stranger has opened its
    # connections.
    flooded = not o["flood"]
    seen = set()
    hit_at = None
    stopped = None

    def live(rank):
        return (procs[rank] is not None and procs[rank].poll() is None
                and rank != stopped)

    # Files, not pipes: a rank that prints a line per step must never block
    # on a pipe nobody reads until the end.
    files = [(tempfile.TemporaryFile(), tempfile.TemporaryFile())
             for _ in range(world)]

    def start_rank(rank):
        forger = [sys.executable,
                  os.path.join(os.path.dirname(__file__), "store_forger.py"),
                  o["forged"].get(rank, ""), str(rank)]
        procs[rank] = subprocess.Popen(
            forger if rank in o["forged"] else command, env=envs[rank],
            stdout=files[rank][0], stderr=files[rank][1])

    def output(rank):
        out, err = files[rank]
        out.seek(0)
        err.seek(0)
        return out.read(), err.read()

    def cannot_serve():
        err = output(0)[1]
        return b"cannot serve the store" in err and b"in use" in err

    start_rank(0)
    for t in threads:
        t.start()
    try:
        while any(live(r) or (procs[r] is None and r not in o["absent"])
                  for r in range(world)):
            now = time.monotonic()
            if not flooded and opened[0] >= o["flood"]:
                flooded, start = True, now
            for rank in range(world):
                if (procs[rank] is None and rank not in o["absent"]
                        and flooded
                        and now - start >= o["delays"].get(rank, 0)):
                    start_rank(rank)
            if o["listen"]:
                seen |= listening([p.pid for p in procs
                                   if p is not None and p.poll() is None])
            if action and hit_at is None and procs[action[1]] is not None:
                kind, rank, when = action
                due = joined.is_set() if when == "joined" else \
                    now - start >= float(when)
                if due:
                    if kind == "kill":
                        procs[rank].kill()
                    else:
                        procs[rank].send_signal(signal.SIGSTOP)
                        stopped = rank
                    hit_at = now
            if now - start > 60:
                print("the ranks did not end within 60 s")
                return 1
            if procs[0].poll() is not None and cannot_serve():
                break  # The others would wait for a store that is not there.
            time.sleep(0.005)
    finally:
        stop.set()
        for p in procs:
            if p is not None and p.poll() is None:
                p.kill()
        for t in threads:
            t.join()
    ended = time.monotonic()
    for p in procs:
        if p is not None:
            p.wait()
    if cannot_serve():
        return None
    outputs = [output(rank) for rank in range(world)]
    for rank, (_, err) in enumerate(outputs):
        sys.stdout.write(err.decode())
    sys.stdout.write(outputs[0][0].decode())
    if o["listen"]:
        print("listen addresses:", " ".join(
            sorted("MASTER_ADDR" if a == addr else a for a in seen)))
    if hit_at is not None:
        verb = "killing" if action[0] == "kill" else "stopping"
        print(f"the others exited within {ended - hit_at:.0f} s of {verb} "
              f"rank {action[1]}")
    for rank, p in enumerate(procs):
        if p is None:
            print(f"rank {rank}: not started")
        else:
            print(f"rank {rank}: exit {p.returncode}")
    return 0


def main():
    launcher, world = sys.argv[1], int(sys.argv[2])
    split = sys.argv.index("--")
    o = parse(sys.argv[3:split])
    command = sys.argv[split + 1:]
    if o["addr"] == "host":
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect(("203.0.113.1", 9))
                o["addr"] = s.getsockname()[0]
        except OSError:
            o["addr"] = "127.0.0.1"
    for _ in range(10):
        port = o["port"] or free_port(o["addr"])
        code = run(launcher, world, o, command, port)
        if code is not None:
            return code
    print("no port could be served in 10 tries")
    return 1


if __name__ == "__main__":
    sys.exit(main())
