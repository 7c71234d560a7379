"""Runs the README's jq recipes verbatim (but for the binary's path and the capture's) and
checks their output against the same questions answered here from the NDJSON records.

Usage: check_jq.py README.md KAFKA_PCAP CAPTURE LABEL
"""

import collections
import json
import re
import subprocess
import sys


def recipes(readme):
    text = open(readme, encoding="utf-8").read()
    block = re.search(r"With \[jq\][^\n]*\n\n```sh\n(.*?)```", text, re.S).group(1)
    out = []
    for chunk in block.strip().split("\n\n"):
        lines = chunk.splitlines()
        title = lines[0].lstrip("# ").strip()
        command = "\n".join(l for l in lines if not l.startswith("#"))
        if command.strip():
            out.append((title, command))
    return out


def run(command, binary, capture):
    cmd = command.replace("kafka-pcap", binary).replace("broker.pcap", capture)
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"recipe failed ({r.returncode}): {cmd}\n{r.stderr}")
    return r.stdout


def records(binary, capture, *args):
    r = subprocess.run([binary, *args, capture], capture_output=True, text=True, check=True)
    return [json.loads(l) for l in r.stdout.splitlines()]


def lines_of(objs):
    return "".join(json.dumps(o, separators=(",", ":")) + "\n" for o in objs)


def main():
    readme, binary, capture, label = sys.argv[1:5]
    recs = records(binary, capture)
    txns = records(binary, capture, "--transactions")
    wtm = [r for r in recs if r.get("event_type") == "kafka"]
    want = {}
    want["Which producer ids were sent ABORT markers, and on which partitions"] = lines_of(
        {"producer_id": m.get("producer_id"), "producer_epoch": m.get("producer_epoch"),
         "topics": m.get("topics")}
        for r in wtm if r["kafka"]["message"] == "request"
        for m in r["kafka"]["body"].get("markers", []) if m.get("transaction_result") == "ABORT")
    want["Partitions that answered with an error"] = lines_of(
        {"stream": r["stream"], "correlation_id": r["kafka"]["correlation_id"],
         "producer_id": m.get("producer_id"), "topic": t.get("name"),
         "partition": p.get("partition_index"), "error": p.get("error")}
        for r in wtm if r["kafka"]["message"] == "response"
        for m in r["kafka"]["body"].get("markers", []) for t in m.get("topics", [])
        for p in t.get("partitions", []) if p.get("error_code") != 0)
    timed = [r for r in wtm if r["kafka"].get("latency_us") is not None]
    timed.sort(key=lambda r: -r["kafka"]["latency_us"])  # jq's sort_by is stable, as is this
    want["The slowest exchanges"] = lines_of(
        {"stream": r["stream"], "correlation_id": r["kafka"]["correlation_id"],
         "request_frame": r["kafka"]["request_frame"], "response_frame": r["frame"],
         "latency_us": r["kafka"]["latency_us"]} for r in timed[:5])
    t_recs = [r["transaction"] for r in txns if r.get("event_type") == "transaction"]
    asked = {"commit": "committed", "abort": "aborted"}
    want["Transactions that did not commit, hang, had an error or ended otherwise than asked, with their errors"] = lines_of(
        {k: t.get(k) for k in ["transactional_id", "producer_id", "producer_epoch", "requested",
                              "outcome", "ended_by", "reason", "hanging", "errors"]}
        for t in t_recs if t["outcome"] != "committed" or t.get("hanging") or t["errors"]
        or asked.get(t.get("requested") or "", t["outcome"]) != t["outcome"])
    want["Which transactions were aborted, and on which partitions (a marker on the wire or not)"] = lines_of(
        {"transactional_id": t.get("transactional_id"), "producer_id": t["producer_id"],
         "producer_epoch": t["producer_epoch"],
         "partitions": [{"topic": p.get("topic"), "partition": p["partition"],
                         "marker_local": p.get("marker_local")} for p in t["partitions"]]}
        for t in t_recs if t["outcome"] == "aborted")
    kinds = collections.Counter(r["anomaly"]["kind"] for r in txns if r.get("event_type") == "anomaly")
    want["Everything that went wrong, counted by kind (the transaction view's verdicts too)"] = "".join(
        f"{n:7d} {k}\n" for k, n in sorted(kinds.items()))
    failures = 0
    seen = set()
    for title, command in recipes(readme):
        got = run(command, binary, capture)
        if title == "What happened to each transaction, one line each":
            # One text line per record of --transactions (transactions and anomalies), the
            # transaction lines naming each transaction's outcome.
            outcomes = [l for l in got.splitlines() if " txn " in l]
            ok = len(got.splitlines()) == len(txns) and len(outcomes) == len(t_recs) and all(
                t["outcome"].upper() in l for t, l in zip(t_recs, outcomes))
        elif title in want:
            ok = got == want[title]
        else:
            sys.exit(f"{label}: no expected answer for the jq recipe '{title}'")
        seen.add(title)
        print(f"{'ok  ' if ok else 'FAIL'} {label}: jq {title}: {len(got.splitlines())} lines")
        if not ok:
            failures += 1
            print(f"     got  {got[:400]!r}\n     want {want.get(title, '')[:400]!r}")
    missing = set(want) - seen
    if missing:
        sys.exit(f"{label}: README lost the jq recipes {sorted(missing)}")
    sys.exit(1 if failures else 0)


main()
