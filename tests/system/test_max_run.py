#!/usr/bin/python3
# The largest job the broker accepts runs (shared/proto.h PROTO_MAX_MSG,
# shared/wire.h WIRE_MAX_MSG): `stockade run` refuses a command line whose
# RUN would not fit in PROTO_MAX_MSG, and every RUN it sends must reach
# the jail whole. The launcher forwards the RUN bytes to its zygote behind
# a header of their own, so a wire capped at PROTO_MAX_MSG refused the
# last 8 bytes of room (sandbox_error "the zygote is gone or broken").
# Finds the longest last argument that the broker takes (by halving) and
# runs it; the next byte must be refused as too long, not fail.
import json
import os
import subprocess
import sys

STOCKADE = os.environ["STOCKADE_BIN"]
FILL = ["x" * 16000] * 8


def run(extra):
    """(status or None, stderr) of `stockade run --json -- /bin/true
    FILL... y*EXTRA`."""
    p = subprocess.run([STOCKADE, "run", "--json", "--", "/bin/true"] + FILL
                       + ["y" * extra], capture_output=True, text=True,
                       timeout=60)
    try:
        return json.loads(p.stdout)["status"], p.stderr
    except (ValueError, KeyError):
        return None, p.stderr


def main():
    print("1..3")
    lo, hi = 0, 16000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if run(mid)[0] is None:
            hi = mid - 1
        else:
            lo = mid
    status, err = run(lo)
    ok1 = lo > 0
    print(f"{'ok' if ok1 else 'not ok'} 1 - the broker takes a command line "
          f"of 8 x 16000 + {lo} bytes")
    ok2 = status == "ok"
    print(f"{'ok' if ok2 else 'not ok'} 2 - the largest RUN runs: {status}")
    if not ok2:
        print("# " + err.strip().replace("\n", "\n# "))
    status, err = run(lo + 1)
    ok3 = status is None and "too long" in err
    print(f"{'ok' if ok3 else 'not ok'} 3 - one byte more is refused as too "
          "long")
    if not ok3:
        print("# " + err.strip().replace("\n", "\n# "))
    return 0 if ok1 and ok2 and ok3 else 1


if __name__ == "__main__":
    sys.exit(main())
