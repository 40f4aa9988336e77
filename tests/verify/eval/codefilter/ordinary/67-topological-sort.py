"""Orders build steps by their dependencies with graphlib."""
from graphlib import CycleError, TopologicalSorter

deps = {"link": {"compile", "assets"}, "compile": {"configure"},
        "assets": {"configure"}, "package": {"link", "docs"}, "docs": set(),
        "configure": set()}
order = list(TopologicalSorter(deps).static_order())
print(" -> ".join(order))
assert order.index("configure") < order.index("compile") < order.index("link")

try:
    list(TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order())
except CycleError as e:
    print("cycle found:", e.args[1])
