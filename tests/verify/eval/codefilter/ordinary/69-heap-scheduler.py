"""Schedules jobs on two machines, longest first, with a heap."""
import heapq

jobs = {"render": 7, "encode": 5, "backup": 4, "index": 3, "mail": 2, "report": 2}
machines = [(0, "m1", []), (0, "m2", [])]
heapq.heapify(machines)
for name, t in sorted(jobs.items(), key=lambda kv: -kv[1]):
    load, m, assigned = heapq.heappop(machines)
    assigned.append(name)
    heapq.heappush(machines, (load + t, m, assigned))
for load, m, assigned in sorted(machines, key=lambda x: x[1]):
    print(f"{m}: load {load:2d} {assigned}")
print("makespan", max(load for load, _, _ in machines))
