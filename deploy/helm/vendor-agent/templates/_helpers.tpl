{{- define "vendor-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Deployment's name, which is also the first half of the zone id. */}}
{{- define "vendor-agent.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "vendor-agent.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "vendor-agent.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "vendor-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vendor-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vendor-agent.labels" -}}
{{ include "vendor-agent.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "vendor-agent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "vendor-agent.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "vendor-agent.tokenSecret" -}}
{{- default (printf "%s-token" (include "vendor-agent.fullname" .)) .Values.token.existingSecret -}}
{{- end -}}

{{/* What the agent does in the cluster (docs/deploy.md explains each rule). */}}
{{- define "vendor-agent.rules" -}}
- apiGroups: ["*"]
  resources: ["*"]
  verbs: [get, list, watch]
- apiGroups: [metrics.k8s.io]
  resources: [pods]
  verbs: [get, list]
- apiGroups: ["*"]
  resources: ["*"]
  verbs: [create, update, patch, delete]
{{- end -}}
