{{- define "pms.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "pms.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "pms.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "pms.serviceAccountName" -}}
{{- default (include "pms.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{- /* The namespaces watched, comma-separated: watchNamespaces and watchNamespace together;
       empty means every namespace. */ -}}
{{- define "pms.watchNamespaces" -}}
{{- $all := concat (.Values.watchNamespaces | default list) (compact (list .Values.watchNamespace)) -}}
{{- $all | uniq | join "," -}}
{{- end }}

{{- /* An image reference from {repository, tag, digest} and the chart's appVersion: a digest
       pins the image (repository@digest), else the tag (default the appVersion). */ -}}
{{- define "pms.image" -}}
{{- $image := index . 0 -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $image.repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $image.repository ($image.tag | default (index . 1)) -}}
{{- end -}}
{{- end }}
