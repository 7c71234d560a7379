"""Runs the README's DuckDB and ClickHouse recipes verbatim and checks their answers.

Usage: check.py README.md RECORDS.ndjson LABEL

Each recipe is a ```sql block after an `<!-- ingest: ENGINE NAME -->` comment in the README.
It is run in a scratch directory where `records.ndjson` is the given file; its rows are
compared with the same question answered here from the NDJSON lines directly (json module
only), so that a wrong column type, a record left out or a misread field fails the check.
"""

import json
import os
import re
import shutil
import sys
import tempfile


def recipes(readme):
    text = open(readme, encoding="utf-8").read()
    found = re.findall(r"<!-- ingest: (\w+) (\w+) -->\s*```sql\n(.*?)```", text, re.S)
    return [(engine, name, sql) for engine, name, sql in found]


def expected(records):
    """The four questions, answered from the records themselves."""
    wtm = [r["kafka"] for r in records
           if r.get("event_type") == "kafka" and r["kafka"]["api_name"] == "WriteTxnMarkers"]
    by_result = {}
    for k in wtm:
        if k["message"] == "request" and isinstance(k.get("body"), dict):
            for m in k["body"].get("markers", []):
                by_result[m["transaction_result"]] = by_result.get(m["transaction_result"], 0) + 1
    failing = []
    for r in records:
        k = r.get("kafka")
        if not k or k["api_name"] != "WriteTxnMarkers" or k["message"] != "response":
            continue
        if not isinstance(k.get("body"), dict):
            continue
        for m in k["body"].get("markers", []):
            for t in m.get("topics", []):
                for p in t.get("partitions", []):
                    if p["error_code"] != 0:
                        failing.append((r["stream"], k["correlation_id"], m["producer_id"],
                                        t["name"], p["partition_index"], p["error"]))
    failing.sort()
    slow = [(r["stream"], r["kafka"]["correlation_id"], r["kafka"]["request_frame"], r["frame"],
             r["kafka"]["latency_us"])
            for r in records
            if r.get("event_type") == "kafka" and r["kafka"]["api_name"] == "WriteTxnMarkers"
            and r["kafka"].get("latency_us") is not None]
    slow.sort(key=lambda x: (-x[4], x[3], x[1]))
    troubled = []
    for r in records:
        if r.get("event_type") != "transaction":
            continue
        t = r["transaction"]
        hanging = bool(t.get("hanging", False))
        errors = len(t.get("errors") or [])
        if t["outcome"] != "committed" or hanging or errors > 0:
            troubled.append((r["frame"], t.get("transactional_id"), t.get("producer_id"),
                             t.get("producer_epoch"), t.get("requested"), t["outcome"],
                             t.get("ended_by"), t.get("reason"), hanging, errors))
    # NULLs last, as both engines order them.
    troubled.sort(key=lambda x: (x[0], x[2], x[3], x[1] is None, x[1] or ""))
    return {
        "markers_by_result": sorted(by_result.items()),
        "failing_partitions": failing,
        "slowest_exchanges": slow[:5],
        "troubled_transactions": troubled,
    }


def normalize(rows):
    out = []
    for row in rows:
        out.append(tuple(int(v) if isinstance(v, int) else v for v in row))
    return out


def run_duckdb(sql):
    import duckdb
    return normalize(duckdb.connect().sql(sql).fetchall())


def run_clickhouse(sql):
    import chdb
    text = str(chdb.query(sql, "JSONCompact"))
    data = json.loads(text)["data"] if text.strip() else []
    rows = []
    for row in data:
        rows.append(tuple(int(v) if isinstance(v, str) and re.fullmatch(r"-?\d+", v) else v
                          for v in row))
    return rows


def main():
    readme, records_path, label = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    records = [json.loads(line) for line in open(records_path, encoding="utf-8")]
    want = expected(records)
    found = recipes(readme)
    names = {(e, n) for e, n, _ in found}
    for engine in ("duckdb", "clickhouse"):
        for question in want:
            if (engine, question) not in names:
                sys.exit(f"README has no {engine} recipe {question}")
    scratch = tempfile.mkdtemp(prefix="kafka-pcap-ingest-")
    failures = 0
    try:
        shutil.copy(records_path, os.path.join(scratch, "records.ndjson"))
        cwd = os.getcwd()
        os.chdir(scratch)
        for engine, name, sql in found:
            got = (run_duckdb if engine == "duckdb" else run_clickhouse)(sql)
            ok = got == [tuple(r) for r in want[name]]
            print(f"{'ok  ' if ok else 'FAIL'} {label}: {engine} {name}: {len(got)} rows")
            if not ok:
                failures += 1
                print(f"     got  {got[:8]}\n     want {want[name][:8]}")
        os.chdir(cwd)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if not any(want.values()):
        sys.exit(f"{label}: the records answer none of the questions: a test that cannot fail")
    sys.exit(1 if failures else 0)


main()
