"""Shortest paths in a weighted road graph (Dijkstra with heapq)."""
import heapq

roads = {"A": {"B": 7, "C": 9, "F": 14}, "B": {"A": 7, "C": 10, "D": 15},
         "C": {"A": 9, "B": 10, "D": 11, "F": 2}, "D": {"B": 15, "C": 11, "E": 6},
         "E": {"D": 6, "F": 9}, "F": {"A": 14, "C": 2, "E": 9}}


def dijkstra(graph, start):
    dist, prev = {start: 0}, {}
    queue = [(0, start)]
    while queue:
        d, u = heapq.heappop(queue)
        if d > dist[u]:
            continue
        for v, w in graph[u].items():
            if d + w < dist.get(v, float("inf")):
                dist[v], prev[v] = d + w, u
                heapq.heappush(queue, (d + w, v))
    return dist, prev


dist, prev = dijkstra(roads, "A")
for node in sorted(dist):
    path, n = [node], node
    while n in prev:
        n = prev[n]
        path.append(n)
    print(f"{node}: {dist[node]:3d} via {'-'.join(reversed(path))}")
assert dist["E"] == 20
