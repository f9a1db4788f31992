"""Standard-library scripts that talk to agentbar's server from another process (run as this
user with any Python, or as the second local user with Debian's): what a stranger on the same
machine can try. Each reads its secrets from standard input, never from its arguments.
"""

from __future__ import annotations

# Sends one GET per line of standard input ("PATH<TAB>HEADER: VALUE<TAB>..."), each on a
# connection of its own, and prints each answer's status line (or "closed" / the error).
ASK = r"""
import socket, sys
port = int(sys.argv[1])
for line in sys.stdin.read().splitlines():
    path, *headers = line.split("\t")
    head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += "".join(h + "\r\n" for h in headers) + "Connection: close\r\n\r\n"
    data = b""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            try:
                s.sendall(head.encode())
            except OSError:
                pass
            try:
                while chunk := s.recv(65536):
                    data += chunk
            except OSError:
                pass
    except OSError as exc:
        print(f"error {exc}")
        continue
    print(data.split(b"\r\n", 1)[0].decode() or "closed", flush=True)
"""

# A plain HTTP listener on a free port of 127.0.0.1: prints the port, answers one request with a
# small page, prints the request's headers as JSON and exits.
LISTEN = r"""
import json, socket, sys
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)
print(srv.getsockname()[1], flush=True)
conn, _ = srv.accept()
conn.settimeout(20)
data = b""
while b"\r\n\r\n" not in data:
    chunk = conn.recv(65536)
    if not chunk:
        break
    data += chunk
body = b"<!DOCTYPE html><title>listener</title>nothing here"
conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
             + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
conn.close()
lines = data.decode("latin-1").split("\r\n")
headers = {}
for line in lines[1:]:
    if ":" in line:
        name, value = line.split(":", 1)
        headers[name.strip().lower()] = value.strip()
print(json.dumps({"request": lines[0], "headers": headers}), flush=True)
"""

# Opens COUNT connections to PORT and holds them without a byte sent; prints
# "ready HELD FAILED", then holds them until its standard input closes.
FLOOD = r"""
import resource, socket, sys
port, count = int(sys.argv[1]), int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 256)), hard))
held, failed = [], 0
for _ in range(count):
    try:
        held.append(socket.create_connection(("127.0.0.1", port), timeout=10))
    except OSError:
        failed += 1
print(f"ready {len(held)} {failed}", flush=True)
sys.stdin.read()
"""
