{{/*
The release's name for its objects: fullnameOverride, else the release name when it holds the chart's,
else "<release>-gpu-scheduler"; "gpu-scheduler" for a release of that name (deploy/'s names).
*/}}
{{- define "gpu-scheduler.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 57 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 57 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 57 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpu-scheduler.agent" -}}
{{- include "gpu-scheduler.fullname" . }}-agent
{{- end -}}

{{- define "gpu-scheduler.secretName" -}}
{{- .Values.webhook.secretName | default (printf "%s-webhook-tls" (include "gpu-scheduler.fullname" .)) -}}
{{- end -}}

{{- define "gpu-scheduler.image" -}}
{{- .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion -}}
{{- end -}}

{{/* Labels of every object: deploy/'s (name, part-of) and Helm's. Argument: (list . NAME). */}}
{{- define "gpu-scheduler.labels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ index . 1 }}
app.kubernetes.io/part-of: gpu-scheduler
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
app.kubernetes.io/version: {{ $root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version }}
{{- end -}}

{{/* The namespaces the webhook leaves alone: the release's, and kube-system. */}}
{{- define "gpu-scheduler.skippedNamespaces" -}}
{{- if eq .Release.Namespace "kube-system" -}}
["kube-system"]
{{- else -}}
[{{ .Release.Namespace | quote }}, "kube-system"]
{{- end -}}
{{- end -}}
