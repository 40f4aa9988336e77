"""Counts status codes and the slowest paths in an access log."""
import re
from collections import Counter

LOG = """\
10.0.0.1 - - [10/Oct/2024:13:55:36] "GET /index.html HTTP/1.1" 200 2326 0.012
10.0.0.2 - - [10/Oct/2024:13:55:37] "GET /api/items HTTP/1.1" 200 512 0.250
10.0.0.1 - - [10/Oct/2024:13:55:38] "POST /api/items HTTP/1.1" 201 64 0.301
10.0.0.3 - - [10/Oct/2024:13:55:40] "GET /missing HTTP/1.1" 404 0 0.002
10.0.0.2 - - [10/Oct/2024:13:55:41] "GET /api/items HTTP/1.1" 500 0 1.900
"""
LINE = re.compile(r'"(\w+) (\S+) [^"]*" (\d{3}) (\d+) ([\d.]+)')

status = Counter()
slow = []
for m in LINE.finditer(LOG):
    method, path, code, _size, secs = m.groups()
    status[code] += 1
    slow.append((float(secs), method, path))
print(dict(sorted(status.items())))
for secs, method, path in sorted(slow, reverse=True)[:2]:
    print(f"{secs:5.3f}s {method} {path}")
