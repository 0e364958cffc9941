#!/usr/bin/env python3
# Opens N connections to a running checklistd, plaintext or TLS (completing
# each handshake), holds them idle for two ticks, and reports the server's
# RSS growth per connection and whether all are still open.
#
#   Benchmarks/tls-hold.py PORT CA_FILE N SERVER_PID tls|plain
#
# The server needs --max-connections above N, and this process's and the
# server's descriptor limits must hold N. See Benchmarks/README.md, "TLS".
import socket, ssl, sys, time
port, ca, n, pid, mode = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1]) * 1024
ctx = ssl.create_default_context(cafile=ca)
time.sleep(1.5)
before = rss()
held = []
t0 = time.time()
for i in range(n):
    s = socket.create_connection(("127.0.0.1", port))
    if mode == "tls":
        s = ctx.wrap_socket(s, server_hostname="localhost")
    held.append(s)
took = time.time() - t0
time.sleep(2.5)  # two ticks: idle receive buffers are handed back
after = rss()
# Every connection still open and served: one more handshake works, none was closed.
alive = 0
for s in held:
    s.setblocking(False)
    try:
        data = s.recv(1)
        if data == b"": continue
    except (BlockingIOError, ssl.SSLWantReadError):
        pass
    alive += 1
print(f"{mode}: {n} connections opened in {took:.1f}s ({n/took:.0f}/s, sequential), {alive} still open; "
      f"server RSS {before/2**20:.1f} -> {after/2**20:.1f} MiB, {(after-before)/n:.0f} bytes per idle connection")
