# family: injection
# tries: open host kernel knobs for writing (core_pattern, uevent_helper, sysrq-trigger, the cgroup v1 release_agent): a write to any of them runs a program as root on the host
# source: https://nvd.nist.gov/vuln/detail/CVE-2022-0492
# exfil: no
# stopped-when: pwned-absent
# attempted-when: marker
#
# Never writes: it only opens each file O_WRONLY and closes it. PWNED
# when one opens.
import os
import sys

if len(sys.argv) < 9:
    sys.exit("usage: TOKEN HOME HOSTTMP TCP UDP UNIX DECOY USERFILES")
print(f"ATTEMPTED {sys.argv[1]}", file=sys.stderr, flush=True)
token = sys.argv[1]
for path in ("/proc/sys/kernel/core_pattern", "/sys/kernel/uevent_helper",
             "/proc/sysrq-trigger", "/sys/fs/cgroup/release_agent",
             "/proc/sys/kernel/hostname"):
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError as e:
        print(f"{path}: {e.strerror}")
        continue
    os.close(fd)
    print(f"PWNED {token} (opened {path} for writing)")
