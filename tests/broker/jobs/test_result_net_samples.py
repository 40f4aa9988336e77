#!/usr/bin/env python3
# Results with a network (issue 25), as result_to_json and
# result_add_network build them from hand-made proxy reports
# (result_net_samples, argv[1]): each validates against
# docs/result.schema.json, its strings are printable, the scripted model
# of tests/system/test_model.py takes the right step from its text form's
# hint (asks the user about a host the policy does not allow, makes the
# program use the proxy, stops after the sandbox failed, bounds its loops
# after a timeout), and the example of docs/results.md ("network")
# validates and carries the hint this build gives.
#
# Registered in tests/meson.build as 'result-net-samples' (TAP), with
# STOCKADE_SOURCE_ROOT. Needs python3-jsonschema.

import json
import os
import re
import subprocess
import sys

ROOT = os.environ.get("STOCKADE_SOURCE_ROOT") or \
    os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "system"))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))

# The step the scripted model must take from each sample's hint.
EXPECTED = {
    "not_allowed": "ask_user",
    "direct_connect": "use_proxy",
    "direct_and_not_allowed": "ask_user",
    "dns_lookup": "use_proxy",
    "private_address": "ask_user",
    "sni_mismatch": "fix_server_name",
    "budget": "ask_user",
    "bad_request": "fix_url",
    "unreachable": "fix_url",
    "ok_with_refusal": "ask_user",
    "proxy_failed": "tell_user",
    "proxy_failed_ok": "tell_user",
    "timeout_with_refusal": "bound_loops",
    "resolve_failure": "use_proxy",
    "hostile_host": "ask_user",
    "ok_clean": "done",
}
PRINTABLE = re.compile(r"^[!-~]*$")


def samples(exe):
    out = subprocess.run([exe], check=True, stdout=subprocess.PIPE,
                         timeout=60).stdout.decode("utf-8")
    return [json.loads(line) for line in out.splitlines() if line]


def docs_example():
    """The json block under docs/results.md's network section."""
    with open(os.path.join(ROOT, "docs", "results.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## `network`.*?^```json\n(.*?)^```", text, re.M | re.S)
    if not m:
        raise AssertionError("docs/results.md: no json block under ## `network`")
    return json.loads(m.group(1))


def checks(exe):
    """(ok, title, diagnostics) for every check."""
    import jsonschema
    import test_model
    with open(os.path.join(ROOT, "docs", "result.schema.json"),
              encoding="utf-8") as f:
        schema = json.load(f)
    v = jsonschema.Draft202012Validator(schema)
    got = samples(exe)
    out = [(sorted(s["name"] for s in got) == sorted(EXPECTED),
            f"{len(got)} samples, one per expected step", [])]
    by_name = {}
    for s in got:
        name, result = s["name"], s["result"]
        by_name[name] = s
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}"
                  for e in v.iter_errors(result)]
        net = result.get("network", {})
        strings = [e[k] for lst in ("connections", "refusals")
                   for e in net.get(lst, []) for k in ("host", "detail", "address")
                   if k in e]
        bad = [x for x in strings if not PRINTABLE.match(x)]
        out.append((not errors and "network" in result and not bad,
                    f"{name}: valid against the schema, strings printable",
                    errors + [f"not printable: {x!r}" for x in bad]))
        try:
            action = test_model.read_hint(test_model.hint_line(s["text"]))[0]
        except test_model.Confused as exc:
            action = f"confused ({exc})"
        out.append((action == EXPECTED.get(name),
                    f"{name}: the scripted model's step is "
                    f"{EXPECTED.get(name)}", [f"got {action}",
                                              result["hint"]]))
        model = test_model.ScriptedModel({"language": "sh", "code": "x"}, {})
        model.start()
        if EXPECTED.get(name) in ("ask_user", "tell_user"):
            try:
                stops = model.react(s["text"]) is None
            except test_model.Confused as exc:
                stops = f"confused ({exc})"
            out.append((stops is True,
                        f"{name}: the model sends nothing more",
                        [f"got {stops}"]))
    # A result that breaks the network schema is refused: the check bites.
    broken = json.loads(json.dumps(by_name["not_allowed"]["result"]))
    broken["network"]["refusals"][0]["host"] = "a b\n"
    broken["network"]["refusals"][0]["reason"] = "because"
    out.append((len(list(v.iter_errors(broken))) == 2,
                "a space, a newline or an unknown reason is refused", []))
    doc = docs_example()
    errors = [e.message[:300] for e in v.iter_errors(doc)]
    want = by_name["not_allowed"]["result"]["hint"]
    out.append((not errors and doc.get("hint") == want,
                "docs/results.md's network example validates and has this "
                "build's hint", errors + [f"want hint {want!r}",
                                          f"doc hint {doc.get('hint')!r}"]))
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: test_result_net_samples.py RESULT_NET_SAMPLES",
              file=sys.stderr)
        return 64
    try:
        lines = checks(sys.argv[1])
    except (AssertionError, OSError, ValueError, ImportError,
            subprocess.SubprocessError) as exc:
        print("1..1")
        print(f"not ok 1 - samples checked ({exc})")
        return 1
    print(f"1..{len(lines)}")
    failed = 0
    for i, (ok, title, diag) in enumerate(lines, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {title}")
        if not ok:
            for d in diag:
                for line in str(d).splitlines():
                    print(f"# {line}")
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
