{{- define "dbabench.name" -}}{{ .Release.Name }}-dbabench{{- end -}}
{{- define "dbabench.serviceAccount" -}}
{{- if .Values.serviceAccount.name }}{{ .Values.serviceAccount.name }}{{ else }}{{ include "dbabench.name" . }}-operator{{ end -}}
{{- end -}}
{{- define "dbabench.labels" -}}
app.kubernetes.io/name: dbabench
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}
{{- define "dbabench.selector" -}}
app.kubernetes.io/name: dbabench
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}
