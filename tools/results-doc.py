#!/usr/bin/env python3
"""Writes docs/results.md: one real result per status, from real runs.

Usage: tools/results-doc.py [STOCKADE] [OUTPUT]
  STOCKADE  the stockade binary (default: build/stockade)
  OUTPUT    the page to write (default: docs/results.md)

Each example is a short, bounded program run with `stockade run --json`
(as the invoking user, on a fresh temporary workspace), so the figures
are this machine's. Run it as an ordinary user or as root; nothing here
needs the network.
"""
import datetime
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time

# i386 getpid through `int 0x80` from a 64-bit process: the seccomp filter
# kills foreign-ABI calls with SIGSYS (policy_violation).
FOREIGN_ABI = (
    'import mmap, ctypes\n'
    'm = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE'
    ' | mmap.PROT_EXEC)\n'
    'm.write(b"\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3")\n'
    'f = ctypes.CFUNCTYPE(ctypes.c_int)'
    '(ctypes.addressof(ctypes.c_char.from_buffer(m)))\n'
    'print(f())\n')

FORK_LOOP = (
    'import os, time\n'
    'kids = 0\n'
    'end = time.time() + 8\n'
    'while time.time() < end and kids < 40:\n'
    '    try:\n'
    '        if os.fork() == 0:\n'
    '            time.sleep(8)\n'
    '            os._exit(0)\n'
    '        kids += 1\n'
    '    except OSError:\n'
    '        time.sleep(0.01)\n')

# (status, what the program does, flags, argv, policy text or None[,
# the section's title when it is not the status alone])
FORK_REFUSED = '''import os, sys, time
kids = []
for _ in range(30):
    try:
        pid = os.fork()
    except BlockingIOError:
        print("Cannot fork", file=sys.stderr)
        continue
    if pid == 0:
        time.sleep(1)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print(len(kids), "children")
'''
FORK_POOL = '''import os, time
buf = bytearray(100 << 20)
for i in range(0, len(buf), 4096):
    buf[i] = 1
kids = []
for _ in range(6):
    pid = os.fork()
    if pid == 0:
        mine = b"w" * (8 << 20)
        time.sleep(1.5)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print("pool done")
'''

CASES = [
    ('ok', 'prints 42', [], ['python3', '-c', 'print(6 * 7)'], None),
    ('exit_nonzero', 'reports an error and exits 3', [],
     ['sh', '-c', 'echo "input.csv: no such file" >&2; exit 3'], None),
    ('timeout', 'loops forever under a 1 s wall-clock limit',
     ['--timeout', '1'], ['python3', '-c', 'while True: pass'], None),
    ('cpu_limit', 'spins in two processes under 1 s of CPU time',
     ['--cpu-time', '1', '--timeout', '10'],
     ['sh', '-c', 'for i in 1 2; do (while :; do :; done) & done; wait'],
     None),
    ('memory_limit', 'keeps 8 MiB buffers, up to 800 MiB, under 64 MiB',
     ['--memory', '64'],
     ['python3', '-c', 'a = [bytearray(8 << 20) for _ in range(100)]'],
     None),
    ('process_limit', 'forks up to 40 sleepers under a limit of 8',
     ['--processes', '8', '--timeout', '10'],
     ['python3', '-c', FORK_LOOP], None),
    ('ok', 'asks for 30 sleepers under a limit of 8, says "Cannot fork" '
     'for each fork refused and exits 0: `limits_reached` names the limit '
     'and how often it was reached, and the hint says the output may be '
     'incomplete', ['--processes', '8', '--timeout', '10'],
     ['python3', '-c', FORK_REFUSED], None, '`ok`, a limit reached'),
    ('ok', 'is a pool: the parent touches 100 MiB, then forks 6 workers '
     'that each touch 8 MiB of their own and sleep on the parent\'s pages, '
     'under 192 MiB: 7 x ~110 MiB of resident sets summed, ~170 MiB '
     'really held; past the limit by the resident sum, the monitor counts '
     'each shared page once, and the peak says so (`memory_measure` '
     'pss_sum)', ['--memory', '192', '--timeout', '10'],
     ['python3', '-c', FORK_POOL], None, '`ok`, a forked pool'),
    ('ok', 'prints a million lines under a 4 KiB cap: by default it runs '
     'to its end, the first and last 2 KiB are kept around a marker, '
     '`stdout_truncated` is true and `stdout_bytes` counts every byte',
     ['--output', '4'],
     ['python3', '-c', 'for i in range(10**6): print("line", i)'], None,
     '`ok`, output truncated'),
    ('output_limit', 'prints a million lines under a 4 KiB cap, and the '
     'policy kills a job for its output',
     ['--output', '4'],
     ['python3', '-c', 'for i in range(10**6): print("line", i)'],
     '[limits]\non_output_limit = kill\n'),
    ('file_size_limit', 'writes a 2 MiB file under a 1 MiB limit',
     ['--file-size', '1'],
     ['dd', 'if=/dev/zero', 'of=/work/big', 'bs=1M', 'count=2'], None),
    ('disk_full', 'writes 8 MiB into a 4 MiB /tmp', ['--tmp-size', '4'],
     ['python3', '-c', 'open("/tmp/f", "wb").write(bytes(8 << 20))'], None),
    ('disk_full', 'writes 24 MiB into /work, whose stage (the job\'s '
     'allowance: issue 26) is 16 MiB', [],
     ['python3', '-c', 'open("/work/f", "wb").write(bytes(24 << 20))'],
     '[files]\nworkspace_mb = 16\n', '`disk_full`, the job\'s stage'),
    ('ok', 'writes app.py and a new git hook, .git/hooks/pre-commit: the '
     'default [writeback] rules refuse the hook, app.py is written back '
     '(`workspace`)', [],
     ['sh', '-c', 'mkdir -p .git/hooks && printf "#!/bin/sh\\n" > '
      '.git/hooks/pre-commit && echo "print(1)" > app.py'], None,
     '`ok`, a change held back'),
    ('crash', 'reads address 0', [],
     ['python3', '-c', 'import ctypes; ctypes.string_at(0)'], None),
    ('policy_violation', 'makes an i386 system call (int 0x80)', [],
     ['python3', '-c', FOREIGN_ABI], None),
    ('sandbox_error', 'is any at all; the policy demands cgroup2 '
     'enforcement on a host without a delegated cgroup v2', [],
     ['true'], '[limits]\nenforcement = cgroup2\n'),
    ('cancelled', 'prints a line, then sleeps; one second in, stockade '
     'gets SIGINT, as from Ctrl-C', [],
     ['python3', '-c', 'import time; print("step 1", flush=True); '
      'time.sleep(30)'], None),
]
# The statuses whose run is interrupted: SIGINT this many seconds in.
INTERRUPT_AFTER = {'cancelled': 1.0}


def run(stockade, flags, argv, policy, interrupt=None):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [stockade, 'run', '--json'] + flags
        if policy is not None:
            path = os.path.join(tmp, 'policy.ini')
            with open(path, 'w', encoding='utf-8') as f:
                f.write(policy)
            os.chmod(tmp, 0o755)
            cmd += ['--policy', path]
        cmd += ['--'] + argv
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
        if interrupt is not None:
            time.sleep(interrupt)
            p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    return json.loads(out), p.returncode


def shown(flags, argv, policy):
    words = ['stockade', 'run', '--json'] + flags
    if policy is not None:
        words += ['--policy', 'P.ini']
    return ' '.join(shlex.quote(w) for w in words + ['--'] + argv)


def kept_network_section(path):
    """The section of PATH from "## `network`" on (issue 25), kept as it
    is: no run can make a job with a network here (that needs the egress
    proxy and a policy allowing a real host), so its example is built from
    a hand-made proxy report (tests/broker/jobs/result_net_samples.c,
    checked by the result-net-samples test). Empty when PATH has none."""
    try:
        with open(path, encoding='utf-8') as f:
            text = f.read()
    except OSError:
        return ''
    at = text.find('\n## `network`\n')
    return text[at:] if at >= 0 else ''


def main():
    stockade = sys.argv[1] if len(sys.argv) > 1 else 'build/stockade'
    out = sys.argv[2] if len(sys.argv) > 2 else 'docs/results.md'
    parts = [
        '# Results, one real example per status\n',
        '\nGenerated by `tools/results-doc.py` on '
        f'{datetime.date.today().isoformat()}, on {platform.machine()} '
        f'Linux {platform.release()}, as uid {os.getuid()}; every figure '
        'below is from that run. Each result validates against '
        '[result.schema.json](result.schema.json); README.md, "Result '
        'fields", says what each field means, and [tool.md](tool.md) '
        'shows the compact text form a model reads.\n',
    ]
    failed = []
    for status, what, flags, argv, policy, *title in CASES:
        result, rc = run(stockade, flags, argv, policy,
                         INTERRUPT_AFTER.get(status))
        if result['status'] != status:
            failed.append(f'{status}: got {result["status"]}')
        heading = title[0] if title else f'`{status}`'
        parts.append(f'\n## {heading}\n\nThe program {what}'
                     + (f'; the policy P.ini is `{policy.strip()}`'
                        .replace('\n', ' ') if policy else '')
                     + f'. Exit status {rc}.\n')
        if '\n' in ''.join(argv):
            parts.append('\n```sh\n' + shown(flags, argv, policy) + '\n```\n')
        else:
            parts.append(f'\n`{shown(flags, argv, policy)}`\n')
        parts.append('\n```json\n' + json.dumps(result, indent=2,
                                                  ensure_ascii=False)
                     + '\n```\n')
    parts.append(kept_network_section(out))
    with open(out, 'w', encoding='utf-8') as f:
        f.write(''.join(parts))
    for line in failed:
        print('results-doc: unexpected status:', line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
