#!/usr/bin/env python3
"""tests/tools/monitoring_gen.py: turns deploy/monitoring/ and scrapes of a running daemon into files promtool
checks (tests/integration/test_monitoring.sh drives it; docs/monitoring.md).

  rules PROMETHEUSRULE [--no-annotations]
        the PrometheusRule's spec (its groups) as a Prometheus rules file, on stdout. --no-annotations
        drops the annotations (promtool test rules compares them verbatim; check rules still parses them)
  dashboard DASHBOARD
        checks the dashboard's structure (what Grafana needs and we can check without Grafana: unique
        panel ids, a datasource on every panel with targets, every target an expr and a refId unique in
        its panel selecting {job="$job"} or reading only our recording rules' gpu_scheduler:* series,
        no template variable but $job, $datasource and $__rate_interval) and prints one recording rule
        per target expression, variables replaced, for promtool check rules
  names SCRAPE FILE...
        every gpu_scheduler_* and process_* metric named in FILEs is a family of the scrape, and every
        gpu_scheduler:* series they name is recorded by a rule of one of them
  alert-tests SCRAPE_SHORT NOW_SHORT SCRAPE_LONG NOW_LONG RULES
        a promtool test file for RULES (each alert fired when its condition holds, and not otherwise; the
        per-workload recording rules' joins with the GPU exporter's series) on series built from the two
        scrapes: SCRAPE_SHORT taken with a webhook certificate expiring within 14 days, at least two
        wait reasons with pods and two mapped GPUs of running pods (one with a UUID, one without),
        SCRAPE_LONG after the certificate was renewed; NOW_* the wall clock (seconds) at each scrape
  scrape-config SERVICEMONITOR TARGET TOKEN_FILE [JOB]
        a Prometheus configuration scraping TARGET (host:port) as the ServiceMonitor's one endpoint
        says (scheme, path, interval shortened to 1s, bearerTokenFile, tlsConfig.insecureSkipVerify and
        honorLabels, the only fields it uses; anything else is refused), the token read from
        TOKEN_FILE; job JOB; the target labelled namespace and pod as the Prometheus Operator labels
        it (kube-system, gpu-scheduler-0)
Exit status: 0, 1 when a check fails (the problems on stderr), 2 on usage errors.
"""
import json
import re
import sys

import yaml

JOB = "gpu-scheduler-metrics"
SERIES_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$')
LABEL_RE = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
NAME_RE = re.compile(r'\b((?:gpu_scheduler|process)_[a-zA-Z0-9_]+)\b')
RECORDED_RE = re.compile(r'\b(gpu_scheduler:[a-zA-Z0-9_:]+)')
RECORD_RE = re.compile(r'^\s*-?\s*record:\s*(\S+)\s*$', re.M)
VAR_RE = re.compile(r'\$(\{[^}]*\}|[a-zA-Z_][a-zA-Z0-9_]*)')
ALLOWED_VARS = {"job": JOB, "__rate_interval": "5m"}


def die(msg, code=1):
    print("monitoring_gen: " + msg, file=sys.stderr)
    sys.exit(code)


# ---- scrapes ----------------------------------------------------------------------------------

def parse_scrape(path):
    """{family: type} and [(name, {labels}, value)] from a text exposition."""
    types, series = {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# TYPE "):
                _, _, name, typ = line.split(" ", 3)
                types[name] = typ
                continue
            if not line or line.startswith("#"):
                continue
            m = SERIES_RE.match(line)
            if not m:
                die("%s: not a sample line: %r" % (path, line))
            labels = dict(LABEL_RE.findall(m.group(3) or ""))
            series.append((m.group(1), labels, float(m.group(4))))
    return types, series


def family_of(name, types):
    if name in types:
        return name
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and types.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)]
    return None


def select(series, name, **want):
    return [(lab, v) for n, lab, v in series if n == name and all(lab.get(k) == w for k, w in want.items())]


def one(series, name, **want):
    got = select(series, name, **want)
    if len(got) != 1:
        die("the scrape has %d series %s%s, expected one" % (len(got), name, want or ""))
    return got[0][1]


def series_id(name, labels, instance="10.0.0.1:8080"):
    lab = dict(labels)
    lab.setdefault("job", JOB)
    lab.setdefault("instance", instance)
    return name + "{" + ",".join('%s="%s"' % (k, lab[k]) for k in sorted(lab)) + "}"


# ---- rules and dashboard ------------------------------------------------------------------------

def cmd_rules(path, no_annotations=False):
    with open(path) as f:
        doc = yaml.safe_load(f)
    if doc.get("kind") != "PrometheusRule" or "groups" not in doc.get("spec", {}):
        die("%s: not a PrometheusRule with spec.groups" % path)
    groups = doc["spec"]["groups"]
    for g in groups:
        for r in g["rules"]:
            r["expr"] = " ".join(r["expr"].split())  # one line each, so tests can edit thresholds with sed
            if no_annotations:
                r.pop("annotations", None)
    yaml.safe_dump({"groups": groups}, sys.stdout, sort_keys=False, width=1000)


def substitute(expr, where, problems):
    def repl(m):
        v = m.group(1).strip("{}")
        if v not in ALLOWED_VARS:
            problems.append("%s: unknown variable $%s" % (where, v))
            return m.group(0)
        return ALLOWED_VARS[v]
    return VAR_RE.sub(repl, expr)


def dashboard_panels(d):
    for p in d.get("panels", []):
        yield p
        for q in p.get("panels", []):  # collapsed rows keep theirs inside
            yield q


def cmd_dashboard(path):
    with open(path) as f:
        d = json.load(f)
    problems, rules, ids = [], [], {}
    for key in ("title", "uid", "panels", "schemaVersion"):
        if key not in d:
            problems.append("dashboard: no %s" % key)
    tvars = {v.get("name") for v in d.get("templating", {}).get("list", [])}
    for need in ("datasource", "job"):
        if need not in tvars:
            problems.append("dashboard: no template variable %s" % need)
    n_targets = 0
    for p in dashboard_panels(d):
        pid, title = p.get("id"), p.get("title", "")
        where = "panel %s (%s)" % (pid, title)
        if not isinstance(pid, int):
            problems.append("%s: id is not an integer" % where)
        elif pid in ids:
            problems.append("%s: id also used by panel %r" % (where, ids[pid]))
        else:
            ids[pid] = title
        if not title:
            problems.append("%s: no title" % where)
        gp = p.get("gridPos", {})
        if not all(isinstance(gp.get(k), int) for k in ("h", "w", "x", "y")) or gp.get("x", 0) + gp.get("w", 0) > 24:
            problems.append("%s: gridPos %r is not within the 24-column grid" % (where, gp))
        if p.get("type") == "row":
            continue
        ds = p.get("datasource")
        if not isinstance(ds, dict) or ds.get("type") != "prometheus" or ds.get("uid") != "${datasource}":
            problems.append("%s: datasource is not the prometheus ${datasource}: %r" % (where, ds))
        targets = p.get("targets") or []
        if not targets:
            problems.append("%s: no targets" % where)
        refs = set()
        for t in targets:
            ref, expr = t.get("refId"), t.get("expr")
            if not ref or ref in refs:
                problems.append("%s: refId %r missing or repeated" % (where, ref))
            refs.add(ref)
            if not isinstance(expr, str) or not expr.strip():
                problems.append("%s target %s: no expr" % (where, ref))
                continue
            if '{job="$job"' not in expr and (NAME_RE.search(expr) or not RECORDED_RE.search(expr)):
                problems.append("%s target %s: does not select {job=\"$job\"} (nor read only recorded "
                                "gpu_scheduler:* series): %s" % (where, ref, expr))
            n_targets += 1
            rules.append({"record": "dashboard:panel_%s_%s" % (pid, ref),
                          "expr": substitute(expr, "%s target %s" % (where, ref), problems)})
    if problems:
        for pr in problems:
            print("monitoring_gen: %s: %s" % (path, pr), file=sys.stderr)
        sys.exit(1)
    print("# %d expressions of %d panels of %s" % (n_targets, len(ids), path))
    yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, sys.stdout, sort_keys=False)


def cmd_names(scrape, files):
    types, _ = parse_scrape(scrape)
    missing, texts = [], {}
    for path in files:
        with open(path) as f:
            texts[path] = f.read()
    recorded = {r for t in texts.values() for r in RECORD_RE.findall(t)}
    for path, text in texts.items():
        for name in sorted(set(NAME_RE.findall(text))):
            if not family_of(name, types):
                missing.append("%s: %s is not exported by the daemon (not in %s)" % (path, name, scrape))
        for name in sorted(set(RECORDED_RE.findall(text)) - recorded):
            missing.append("%s: %s is recorded by no rule of %s" % (path, name, " ".join(files)))
    for m in missing:
        print("monitoring_gen: " + m, file=sys.stderr)
    sys.exit(1 if missing else 0)


# ---- alert tests ------------------------------------------------------------------------------

def labels_text(name, labels):
    return name + "{" + ",".join('%s="%s"' % (k, labels[k]) for k in sorted(labels)) + "}"


def expr_case(name, series, evals):
    """One promtool test of expressions: evals [(expr, eval_time, [(labels_text, value)])]."""
    return {
        "name": name,
        "interval": "1m",
        "input_series": [{"series": s, "values": v} for s, v in series],
        "promql_expr_test": [{"expr": e, "eval_time": t, "exp_samples": [{"labels": l, "value": v} for l, v in exp]}
                             for e, t, exp in evals],
    }


def mapped_tests(short, short_path):
    """The per-workload rules: the scraped mapped GPUs (one with a UUID, one without), exported by two
    replicas, joined with synthetic dcgm-exporter series; and the idle alert."""
    name = "gpu_scheduler_mapped_gpu_info"
    rows = select(short, name)
    by_uuid = [lab for lab, v in rows if lab.get("uuid") and v == 1]
    by_node = [lab for lab, v in rows if not lab.get("uuid") and v == 1]
    if not by_uuid or not by_node:
        die("%s: expected mapped GPUs with and without a UUID, got %r" % (short_path, rows))
    u, r = by_uuid[0], by_node[0]
    if u.get("node") == r.get("node"):
        die("%s: the two mapped GPUs are on one node (%s)" % (short_path, u.get("node")))
    info = [(series_id(name, lab, inst), "1x60") for lab, _ in rows for inst in ("10.0.0.1:8080", "10.0.0.2:8080")]

    def dcgm(metric, lab, values):
        full = dict(lab, job="dcgm-exporter", instance="10.0.1.%d:9400" % (len(lab["Hostname"]) % 200),
                    modelName="NVIDIA H100 80GB HBM3", device="nvidia" + lab["gpu"])
        return (series_id(metric, full), values)

    def exporter(util_u, util_r="50x60"):
        # u's GPU by its UUID, its exporter pod's Hostname another name; r's GPU by node and index only
        # (the agent gave no UUID); decoys: r's index on another node, another index on r's node.
        return [
            dcgm("DCGM_FI_DEV_GPU_UTIL", {"gpu": u["gpu"], "UUID": u["uuid"], "Hostname": "dcgm-exporter-x1"}, util_u),
            dcgm("DCGM_FI_DEV_GPU_UTIL", {"gpu": r["gpu"], "UUID": "GPU-r", "Hostname": r["node"]}, util_r),
            dcgm("DCGM_FI_DEV_GPU_UTIL", {"gpu": r["gpu"], "UUID": "GPU-decoy-1", "Hostname": "elsewhere"}, "99x60"),
            dcgm("DCGM_FI_DEV_GPU_UTIL", {"gpu": str(int(r["gpu"]) + 1), "UUID": "GPU-decoy-2", "Hostname": r["node"]},
                 "98x60"),
            dcgm("DCGM_FI_DEV_FB_USED", {"gpu": u["gpu"], "UUID": u["uuid"], "Hostname": "dcgm-exporter-x1"}, "1024x60"),
            dcgm("DCGM_FI_DEV_FB_USED", {"gpu": r["gpu"], "UUID": "GPU-r", "Hostname": r["node"]}, "2048x60"),
            dcgm("DCGM_FI_DEV_FB_USED", {"gpu": r["gpu"], "UUID": "GPU-decoy-1", "Hostname": "elsewhere"}, "4096x60"),
        ]
    util, mem = "gpu_scheduler:mapped_gpu_utilization:percent", "gpu_scheduler:mapped_gpu_memory_used:bytes"
    tests = [expr_case("workloads: each mapped GPU's utilisation and memory, by UUID or by node and index, once "
                       "for two replicas, no decoy", info + exporter("70x60"), [
        ("gpu_scheduler:mapped_gpu:info", "10m", [(labels_text("gpu_scheduler:mapped_gpu:info", lab), 1)
                                                  for lab in sorted((l for l, _ in rows), key=lambda l: l["pod"])]),
        (util, "10m", [(labels_text(util, u), 70), (labels_text(util, r), 50)]),
        (mem, "10m", [(labels_text(mem, u), 1024 * 1048576), (labels_text(mem, r), 2048 * 1048576)]),
    ])]
    idle = dict(u, severity="warning")
    tests.append(case("workloads: a mapped GPU at 0% for 35 minutes fires, for it alone", info + exporter("0x60"),
                      "GpuSchedulerMappedGpuIdle", "35m", [idle]))
    tests.append(case("workloads: at 0% for 15 minutes, not yet", info + exporter("50x20 0x40"),
                      "GpuSchedulerMappedGpuIdle", "35m", []))
    tests.append(case("workloads: busy GPUs do not fire", info + exporter("30x60"), "GpuSchedulerMappedGpuIdle",
                      "35m", []))
    tests.append(case("workloads: an idle GPU no map gave does not fire",
                      info + exporter("30x60") + [dcgm("DCGM_FI_DEV_GPU_UTIL",
                                                       {"gpu": "7", "UUID": "GPU-free", "Hostname": u["node"]}, "0x60")],
                      "GpuSchedulerMappedGpuIdle", "35m", []))
    return tests


def case(name, series, alert, eval_time, expect):
    """One promtool test: input series [(id, values)], the alert's expected label sets at eval_time."""
    return {
        "name": name,
        "interval": "1m",
        "input_series": [{"series": s, "values": v} for s, v in series],
        "alert_rule_test": [{
            "eval_time": eval_time,
            "alertname": alert,
            "exp_alerts": [{"exp_labels": e} for e in expect],
        }],
    }


def cmd_alert_tests(short_path, now_short, long_path, now_long, rules_path):
    _, short = parse_scrape(short_path)
    _, long_ = parse_scrape(long_path)
    now_short, now_long = float(now_short), float(now_long)
    tests = []
    other = (series_id("process_cpu_seconds_total", {}), "1+1x30")  # keeps an input when a test has none

    # Pods waiting too long: the real ages grow by 60 s a minute; one reason starts 10 minutes older.
    ages = [(lab, v) for lab, v in select(short, "gpu_scheduler_waiting_pods_max_age_seconds") if v > 0]
    if len(ages) < 2:
        die("%s: fewer than two reasons have waiting pods (%r)" % (short_path, ages))
    for lab, v in ages:
        if one(short, "gpu_scheduler_waiting_pods_by_reason", reason=lab["reason"]) < 1:
            die("%s: reason %s has an age but no waiting pod" % (short_path, lab["reason"]))
        if v >= 480:
            die("%s: reason %s already has an age of %g s" % (short_path, lab["reason"], v))
    name = "gpu_scheduler_waiting_pods_max_age_seconds"
    every = select(short, name)
    tests.append(case("waiting: the scraped ages (under 8 minutes) fire nothing", [
        (series_id(name, lab), "%d+60x10" % v) for lab, v in every], "GpuSchedulerPodsWaitingTooLong", "2m", []))
    old = ages[0][0]["reason"]
    ser = []
    for inst in ("10.0.0.1:8080", "10.0.0.2:8080"):  # two replicas agree: one alert per reason
        for lab, v in every:
            ser.append((series_id(name, lab, inst), "%d+60x10" % (v + 600 if lab["reason"] == old else v)))
    tests.append(case("waiting: %s waited over 10 minutes on both replicas: one alert, that reason only" % old,
                      ser, "GpuSchedulerPodsWaitingTooLong", "2m", [{"severity": "warning", "reason": old}]))
    tests.append(case("waiting: over 10 minutes for less than the 1m 'for': pending, not firing",
                      ser, "GpuSchedulerPodsWaitingTooLong", "0m", []))

    # The webhook's certificate, as remaining seconds (time() starts at 0 in promtool).
    name = "gpu_scheduler_webhook_cert_not_after_seconds"
    left_short = one(short, name) - now_short
    left_long = one(long_, name) - now_long
    if not 0 < left_short < 14 * 86400 or left_long < 15 * 86400:
        die("certificate: %g s left in the first scrape, %g in the second: expected < 14 and > 15 days"
            % (left_short, left_long))
    tests.append(case("certificate: the first scrape's (%.1f days left) fires" % (left_short / 86400),
                      [(series_id(name, {}), "%d+0x10" % left_short)], "GpuSchedulerWebhookCertificateExpiring",
                      "6m", [{"severity": "warning"}]))
    tests.append(case("certificate: the renewed one (%.1f days left) does not" % (left_long / 86400),
                      [(series_id(name, {}), "%d+0x10" % left_long)], "GpuSchedulerWebhookCertificateExpiring",
                      "6m", []))
    tests.append(case("certificate: none loaded yet (0) does not", [(series_id(name, {}), "0+0x10")],
                      "GpuSchedulerWebhookCertificateExpiring", "6m", []))

    # Leader and readiness: the scrape's value, 0, two replicas, nothing scraped.
    for name, alert in (("gpu_scheduler_leader", "GpuSchedulerNoLeader"), ("gpu_scheduler_ready", "GpuSchedulerNoReadyReplica")):
        v = one(short, name)
        if v != 1:
            die("%s: %s is %g, expected 1" % (short_path, name, v))
        fire = [{"severity": "critical"}]
        tests.append(case("%s: the scraped 1 does not fire" % name, [(series_id(name, {}), "1x10")], alert, "5m", []))
        tests.append(case("%s: 0 for 3 minutes fires" % name, [(series_id(name, {}), "0x10")], alert, "3m", fire))
        tests.append(case("%s: 0 for 1 minute does not yet" % name, [(series_id(name, {}), "0x10")], alert, "1m", []))
        tests.append(case("%s: one replica of two at 1 does not fire" % name,
                          [(series_id(name, {}, "10.0.0.1:8080"), "1x10"), (series_id(name, {}, "10.0.0.2:8080"), "0x10")],
                          alert, "5m", []))
        tests.append(case("%s: no replica scraped fires" % name, [other], alert, "3m", fire))

    # Binding errors: the scraped counters, then growing.
    name = "gpu_scheduler_binding_attempts_total"
    counts = {lab["result"]: v for lab, v in select(short, name)}
    if set(counts) != {"success", "gone", "retry", "rejected", "already_bound", "withdrawn"} or counts["success"] < 1:
        die("%s: binding results %r" % (short_path, counts))

    def bindings(per_min):
        return [(series_id(name, {"result": r}), "%d+%dx15" % (counts[r], per_min.get(r, 0))) for r in sorted(counts)]
    tests.append(case("bindings: the scraped counters, not moving, fire nothing", bindings({}),
                      "GpuSchedulerBindingErrors", "10m", []))
    tests.append(case("bindings: 1 retry and 1 rejected in 12 a minute fire", bindings({"success": 10, "retry": 1, "rejected": 1}),
                      "GpuSchedulerBindingErrors", "10m", [{"severity": "warning"}]))
    tests.append(case("bindings: 404/409 (gone) are not errors", bindings({"success": 10, "gone": 10}),
                      "GpuSchedulerBindingErrors", "10m", []))
    tests.append(case("bindings: 1 retry in 100 a minute (1%) does not fire", bindings({"success": 99, "retry": 1}),
                      "GpuSchedulerBindingErrors", "10m", []))

    # Webhook p99: the scraped histogram, then observations added a minute at a time.
    name = "gpu_scheduler_webhook_review_duration_seconds_bucket"
    buckets = sorted(((lab["le"], v) for lab, v in select(short, name)), key=lambda b: float(b[0]))
    if not buckets or buckets[-1][1] < 1 or not any(le == "0.1" for le, _ in buckets):
        die("%s: webhook histogram %r (expected reviews, and a 0.1 bucket)" % (short_path, buckets))

    def reviews(obs):  # obs: {upper bound: observations a minute}; buckets are cumulative
        return [(series_id(name, {"le": le}), "%d+%dx20" % (v, sum(n for b, n in obs.items() if b <= float(le))))
                for le, v in buckets]
    tests.append(case("webhook: the scraped histogram, not moving, fires nothing", reviews({}),
                      "GpuSchedulerWebhookSlow", "15m", []))
    tests.append(case("webhook: 5 reviews in 100 over 100 ms fire", reviews({0.001: 95, 0.5: 5}),
                      "GpuSchedulerWebhookSlow", "15m", [{"severity": "warning"}]))
    tests.append(case("webhook: every review under 1 ms does not", reviews({0.001: 100}),
                      "GpuSchedulerWebhookSlow", "15m", []))

    # Device conflicts: the scraped counter (the test makes none), then one more.
    name = "gpu_scheduler_device_conflicts_total"
    v = one(short, name)
    tests.append(case("conflicts: the scraped counter, not moving, fires nothing", [(series_id(name, {}), "%d+0x20" % v)],
                      "GpuSchedulerDeviceConflict", "10m", []))
    tests.append(case("conflicts: one more fires at once", [(series_id(name, {}), "%d+0x5 %d+0x15" % (v, v + 1))],
                      "GpuSchedulerDeviceConflict", "7m", [{"severity": "critical"}]))
    tests.append(case("conflicts: 15 minutes later it is over", [(series_id(name, {}), "%d+0x5 %d+0x30" % (v, v + 1))],
                      "GpuSchedulerDeviceConflict", "25m", []))

    # Agent data: the scraped gauges (nodes without an agent), then a stale node for 20 minutes.
    name = "gpu_scheduler_agent_nodes"
    states = {lab["state"]: v for lab, v in select(short, name)}
    if set(states) != {"fresh", "stale", "unusable", "none"}:
        die("%s: agent node states %r" % (short_path, states))

    def agents(stale):
        return [(series_id(name, {"state": st}), "%dx30" % (stale if st == "stale" else states[st])) for st in sorted(states)]
    tests.append(case("agent: the scraped gauges (%r) fire nothing" % states, agents(states["stale"]),
                      "GpuSchedulerAgentDataMissing", "20m", []))
    tests.append(case("agent: a stale node for 20 minutes fires", agents(1), "GpuSchedulerAgentDataMissing", "20m",
                      [{"severity": "warning"}]))
    tests.append(case("agent: for 10 minutes, not yet", agents(1), "GpuSchedulerAgentDataMissing", "10m", []))

    # Gang timeouts: the scraped counters (one per reason), then three in an hour for one reason.
    name = "gpu_scheduler_gang_timeouts_total"
    timeouts = {lab["reason"]: v for lab, v in select(short, name)}
    if "NODE_MISSING" not in timeouts or "MEMBERS_MISSING" not in timeouts:
        die("%s: gang timeout reasons %r" % (short_path, sorted(timeouts)))

    def gang_timeouts(reason, per_min):
        return [(series_id(name, {"reason": r}), "%d+%gx70" % (v, per_min if r == reason else 0))
                for r, v in sorted(timeouts.items())]
    tests.append(case("gangs: the scraped counters, not moving, fire nothing", gang_timeouts("", 0),
                      "GpuSchedulerGangTimeouts", "60m", []))
    tests.append(case("gangs: 6 NODE_MISSING timeouts in an hour fire for that reason", gang_timeouts("NODE_MISSING", 0.1),
                      "GpuSchedulerGangTimeouts", "60m", [{"severity": "warning", "reason": "NODE_MISSING"}]))
    tests.append(case("gangs: 1 timeout in an hour does not", [(series_id(name, {"reason": "TAINT"}), "0+0x5 1+0x65")],
                      "GpuSchedulerGangTimeouts", "60m", []))

    tests += mapped_tests(short, short_path)

    # Every alert of the rules is tested.
    with open(rules_path) as f:
        alerts = {r["alert"] for g in yaml.safe_load(f)["groups"] for r in g["rules"] if "alert" in r}
    tested = {t["alert_rule_test"][0]["alertname"] for t in tests if "alert_rule_test" in t}
    if alerts != tested:
        die("alerts without a test: %s; tests of no alert: %s" % (sorted(alerts - tested), sorted(tested - alerts)))
    yaml.safe_dump({"rule_files": [rules_path], "evaluation_interval": "1m", "tests": tests}, sys.stdout,
                   sort_keys=False, width=200)


def cmd_scrape_config(monitor, target, token_file, job=JOB):
    sm = yaml.safe_load(open(monitor))
    eps = sm["spec"]["endpoints"]
    if len(eps) != 1:
        die("%s: %d endpoints, expected one" % (monitor, len(eps)))
    ep = dict(eps[0])
    tls = ep.pop("tlsConfig", {})
    known = {"port", "path", "interval", "scheme", "bearerTokenFile", "honorLabels"}
    if set(ep) - known or set(tls) - {"insecureSkipVerify"}:
        die("%s: fields this generator does not translate: %s" % (monitor, sorted((set(ep) - known) | set(tls))))
    if "bearerTokenFile" not in ep:
        die("%s: no bearerTokenFile: the secure port refuses a scrape without a token" % monitor)
    job_cfg = {"job_name": job, "scrape_interval": "1s", "scrape_timeout": "1s",
               "metrics_path": ep.get("path", "/metrics"), "scheme": ep.get("scheme", "http"),
               "authorization": {"type": "Bearer", "credentials_file": token_file},
               "tls_config": {"insecure_skip_verify": bool(tls.get("insecureSkipVerify", False))},
               "honor_labels": bool(ep.get("honorLabels", False)),
               "static_configs": [{"targets": [target],
                                   "labels": {"namespace": "kube-system", "pod": "gpu-scheduler-0"}}]}
    yaml.safe_dump({"global": {"scrape_interval": "1s"}, "scrape_configs": [job_cfg]}, sys.stdout, sort_keys=False)


def main(argv):
    if len(argv) >= 3 and argv[1] == "rules":
        return cmd_rules(argv[2], "--no-annotations" in argv[3:])
    if len(argv) == 3 and argv[1] == "dashboard":
        return cmd_dashboard(argv[2])
    if len(argv) >= 4 and argv[1] == "names":
        return cmd_names(argv[2], argv[3:])
    if len(argv) in (5, 6) and argv[1] == "scrape-config":
        return cmd_scrape_config(*argv[2:])
    if len(argv) == 7 and argv[1] == "alert-tests":
        return cmd_alert_tests(*argv[2:])
    die(__doc__, 2)


if __name__ == "__main__":
    main(sys.argv)
