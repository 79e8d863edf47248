#!/usr/bin/env python3
"""HSA_HOTSWAP_LOG=syslog: the tool's lines reach the local syslog socket, with
the severity of their level, and none reach the application's stderr.

Usage: syslog_check.py COMMAND...  (runs COMMAND with the environment it is given)

A datagram socket at /dev/log plays the local syslog daemon. If /dev/log already
exists (a real daemon), the check cannot read what it receives: it skips with a
reason, except in CI (CI=true), where a fresh machine has none and a skip would
hide a failure.
"""
import os
import re
import socket
import subprocess
import sys
import threading

DEV_LOG = "/dev/log"


def main() -> int:
    command = sys.argv[1:]
    if os.path.exists(DEV_LOG):
        if os.environ.get("CI", "").lower() in ("1", "true", "yes", "on"):
            print(f"FAIL: {DEV_LOG} exists on a CI machine; cannot observe syslog")
            return 1
        print(f"SKIP: {DEV_LOG} exists (a syslog daemon owns it); nothing to observe")
        return 0
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(DEV_LOG)
        os.chmod(DEV_LOG, 0o666)
        messages = []
        done = threading.Event()

        def drain():  # a full socket queue would block the sender
            sock.settimeout(0.1)
            while not done.is_set():
                try:
                    messages.append(sock.recv(65536).decode(errors="replace"))
                except socket.timeout:
                    continue

        reader = threading.Thread(target=drain)
        reader.start()
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=120)
        finally:
            done.set()
            reader.join()
    finally:
        sock.close()
        os.unlink(DEV_LOG)
    sys.stdout.write(run.stdout)
    failures = []
    if run.returncode != 0:
        failures.append(f"the program exited with {run.returncode}")
    if "hotswap:" in run.stderr:
        failures.append("tool lines on stderr:\n" + run.stderr)
    # RFC 3164 as the tool sends it: <PRI>timestamp ident[pid]: hotswap: text;
    # PRI = facility user (1) * 8 + severity (debug 7).
    debug = [m for m in messages if re.match(r"<15>.*hotswap\[\d+\]: hotswap: load reader .* rewrite ", m)]
    if not debug:
        failures.append(f"no debug-level decision line among {len(messages)} syslog message(s)")
    for m in messages[:3]:
        print("syslog:", m)
    print(f"syslog: {len(messages)} message(s), {len(debug)} debug decision line(s)")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
