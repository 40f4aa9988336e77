#!/bin/sh
# bench/warm-trace.sh OUT STOCKADE: traces one paced warm job with ftrace
# (docs/benchmarks.md, "A warm job: where the time goes"). Starts
# `STOCKADE serve` on a fresh workspace (owned by 65534, as root runs
# jobs as nobody), runs 8 `exec ["true"]` 100 ms apart so that the pool
# is full, waits 300 ms, then traces exactly one more: sched_process_*,
# sched_switch, sched_wakeup and the entry and exit of the system calls
# that mark the steps, in a private tracefs instance (warm27), into OUT.
# Prints the job's latency. Root only; bench/warm-steps.py reads OUT.
set -eu
out=$1
st=$2
T=/sys/kernel/tracing/instances/warm27
[ -d $T ] || mkdir $T
echo 0 >$T/tracing_on
echo 32768 >$T/buffer_size_kb
echo mono >$T/trace_clock
echo >$T/set_event
for e in sched:sched_process_fork sched:sched_process_exec \
	sched:sched_process_exit sched:sched_switch sched:sched_wakeup; do
	echo $e >>$T/set_event
done
for s in execve clone clone3 sendmsg recvmsg waitid exit_group poll \
	ppoll read write openat close; do
	echo "syscalls:sys_enter_$s" >>$T/set_event
	echo "syscalls:sys_exit_$s" >>$T/set_event
done
ws=$(mktemp -d)
chown 65534:65534 "$ws"
python3 - "$T" "$st" "$ws" <<'PY'
import json, subprocess, sys, time
T, st, ws = sys.argv[1:]
p = subprocess.Popen([st, "serve", "--workspace", ws], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True, bufsize=1)
def call(i):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "exec",
                              "params": {"argv": ["true"]}}) + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())
for i in range(8):
    call(i)
    time.sleep(0.1)
time.sleep(0.3)
open(T + "/trace", "w").write("")
open(T + "/tracing_on", "w").write("1")
t = time.perf_counter()
call(99)
lat = (time.perf_counter() - t) * 1000
time.sleep(0.05)
open(T + "/tracing_on", "w").write("0")
print(f"latency {lat:.2f} ms")
p.stdin.close()
p.wait()
PY
cat $T/trace >"$out"
echo 0 >$T/events/enable
rm -rf "$ws"
