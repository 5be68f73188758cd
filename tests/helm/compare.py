#!/usr/bin/env python3
"""compare.py CHART_RENDER KUSTOMIZE_RENDER: the objects of two renders (YAML streams) are the same.

Objects are matched by kind, namespace and name. Before comparing, what only one side writes is taken
out: the labels Helm adds (helm.sh/chart, app.kubernetes.io/managed-by, instance, version), the
part-of label on a CustomResourceDefinition (kustomize adds it; Helm installs crds/ as they are), a
webhook's caBundle (deploy/ leaves it to webhook-cert.sh, the chart asks for it), and a trailing
newline of a ConfigMap value. Exit 0 when the same; 1 with each difference on stdout.
"""
import difflib
import sys

import yaml

HELM_LABELS = ("helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance",
               "app.kubernetes.io/version")


def load(path):
    objs = {}
    with open(path) as f:
        for d in yaml.safe_load_all(f):
            if not d:
                continue
            md = d.get("metadata", {})
            key = (d.get("kind"), md.get("namespace", ""), md.get("name"))
            if key in objs:
                sys.exit(f"compare: {path}: {key} twice")
            objs[key] = normalize(d)
    return objs


def normalize(d):
    labels = d.get("metadata", {}).get("labels")
    if labels is not None:
        for k in HELM_LABELS:
            labels.pop(k, None)
        if d.get("kind") == "CustomResourceDefinition":
            labels.pop("app.kubernetes.io/part-of", None)
        if not labels:
            del d["metadata"]["labels"]
    for w in d.get("webhooks", []) or []:
        w.get("clientConfig", {}).pop("caBundle", None)
    if d.get("kind") == "ConfigMap":
        for k, v in (d.get("data") or {}).items():
            if isinstance(v, str):
                d["data"][k] = v.rstrip("\n")
    return d


def main():
    chart, kust = load(sys.argv[1]), load(sys.argv[2])
    bad = 0
    for key in sorted(set(chart) | set(kust), key=str):
        if key not in chart:
            print(f"only in deploy/: {key}")
            bad = 1
        elif key not in kust:
            print(f"only in the chart: {key}")
            bad = 1
        elif chart[key] != kust[key]:
            a = yaml.safe_dump(kust[key], sort_keys=True).splitlines()
            b = yaml.safe_dump(chart[key], sort_keys=True).splitlines()
            print(f"differs: {key}")
            print("\n".join(difflib.unified_diff(a, b, "deploy/", "chart", lineterm="", n=2)))
            bad = 1
    if not bad:
        print(f"the same: {len(chart)} objects")
    return bad


if __name__ == "__main__":
    sys.exit(main())
