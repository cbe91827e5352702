"""Loads an HTML page in headless Chromium and reports what a test checks.

    browser.py PAGE.html [--screenshot OUT.png] [--eval EXPR]...

Speaks the DevTools protocol over --remote-debugging-pipe (no websocket, no
package beyond the standard library): opens the page from a file URL, waits
for its load event, prints each console message, exception and log entry
the page produced as "console: ..." and fails when there is any, prints
"EXPR => VALUE" (VALUE as JSON) for each --eval so that FileCheck can check
the DOM, and writes a full-page screenshot that must not be blank (more than
a handful of distinct colours). Exit status 0 when clean, 1 on a console
error, a failed --eval, a blank screenshot or a page that did not load; 77
(skipped) when chromium is not installed.
"""

import argparse
import fcntl
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib


class Browser:
    def __init__(self, exe, profile):
        # fd 3: commands to the browser; fd 4: its replies and events.
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        # Above 3 and 4, so that placing them there overwrites neither.
        child_r = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10)
        child_w = fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
        os.close(to_r)
        os.close(from_w)

        def child_fds():
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--remote-debugging-pipe",
             "--user-data-dir=" + profile, "about:blank"],
            pass_fds=(3, 4), preexec_fn=child_fds,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(child_r)
        os.close(child_w)
        self.out = os.fdopen(to_w, "wb", buffering=0)
        self.inp = os.fdopen(from_r, "rb", buffering=0)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _read_message(self, deadline):
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                raise TimeoutError("no reply from chromium")
            chunk = self.inp.read(65536)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method,
                   "params": params or {}}
        if session:
            message["sessionId"] = session
        self.out.write(json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, timeout=60):
        deadline = time.time() + timeout
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)


def png_colours(data, limit=64):
    """Distinct colours of a PNG (8-bit RGB or RGBA), up to `limit`."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type = header[:4]
    if depth != 8 or colour_type not in (2, 6):
        raise ValueError("unexpected PNG format %d/%d" % (depth, colour_type))
    bpp = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    previous = bytearray(stride)
    colours = set()
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        row = bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):
            a = row[x - bpp] if x >= bpp else 0
            b = previous[x]
            c = previous[x - bpp] if x >= bpp else 0
            if kind == 1:
                row[x] = (row[x] + a) & 255
            elif kind == 2:
                row[x] = (row[x] + b) & 255
            elif kind == 3:
                row[x] = (row[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                row[x] = (row[x] + pred) & 255
        if y % 4 == 0:
            for x in range(0, stride, bpp * 3):
                colours.add(bytes(row[x:x + 3]))
                if len(colours) >= limit:
                    return colours
        previous = row
    return colours


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("page")
    parser.add_argument("--screenshot")
    parser.add_argument("--eval", action="append", default=[])
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args()

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("skipped: chromium is not installed (scripts/setup.sh "
              "installs it)")
        return 77
    url = "file://" + os.path.abspath(args.page)
    profile = tempfile.mkdtemp(prefix="partition-browser-")
    browser = Browser(exe, profile)
    failures = 0
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})
        session = browser.send("Target.attachToTarget",
                               {"targetId": target["targetId"],
                                "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(domain + ".enable", session=session)
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": args.width, "height": 900,
                      "deviceScaleFactor": 1, "mobile": False},
                     session=session)
        nav = browser.send("Page.navigate", {"url": url}, session=session)
        if nav.get("errorText"):
            print("page did not load: %s" % nav["errorText"])
            return 1
        browser.wait_for("Page.loadEventFired")
        # Let late console messages arrive.
        browser.send("Runtime.evaluate", {"expression": "1"}, session=session)

        for expr in args.eval:
            result = browser.send(
                "Runtime.evaluate",
                {"expression": expr, "returnByValue": True},
                session=session)
            if "exceptionDetails" in result:
                text = result["exceptionDetails"].get("exception", {}).get(
                    "description", result["exceptionDetails"].get("text"))
                print("%s => error: %s" % (expr, text))
                failures += 1
            else:
                print("%s => %s" % (
                    expr, json.dumps(result["result"].get("value"))))

        if args.screenshot:
            height = browser.send(
                "Runtime.evaluate",
                {"expression": "document.documentElement.scrollHeight",
                 "returnByValue": True}, session=session)["result"]["value"]
            browser.send("Emulation.setDeviceMetricsOverride",
                         {"width": args.width, "height": min(height, 12000),
                          "deviceScaleFactor": 1, "mobile": False},
                         session=session)
            shot = browser.send("Page.captureScreenshot", {"format": "png"},
                                session=session)
            import base64
            data = base64.b64decode(shot["data"])
            with open(args.screenshot, "wb") as f:
                f.write(data)
            colours = len(png_colours(data))
            print("screenshot: %dx%d, %s colours" % (
                args.width, min(height, 12000),
                ">=64" if colours >= 64 else colours))
            if colours < 8:
                print("screenshot is blank")
                failures += 1

        for event in browser.events:
            method = event.get("method")
            params = event.get("params", {})
            if method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", "")))
                                for a in params.get("args", []))
                print("console: %s: %s" % (params.get("type"), text))
                failures += 1
            elif method == "Runtime.exceptionThrown":
                print("console: exception: %s" %
                      params["exceptionDetails"].get("text"))
                failures += 1
            elif method == "Log.entryAdded":
                entry = params["entry"]
                print("console: %s: %s (%s)" % (
                    entry.get("level"), entry.get("text"), entry.get("url")))
                failures += 1
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    if failures:
        print("FAILED: %d problem(s)" % failures)
        return 1
    print("ok: no console errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
