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
{{- define "dbabench.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- /* The pods executor's settings (env.kube.KubeSettings), as JSON. */ -}}
{{- define "dbabench.podsSettings" -}}
{{- $s := dict "image" (include "dbabench.image" .) "cloneFrom" .Values.pods.cloneFrom "volumeSize" .Values.pods.volumeSize "nodeSelector" .Values.pods.nodeSelector "tolerations" .Values.pods.tolerations -}}
{{- with .Values.pods.storageClass }}{{ $_ := set $s "storageClass" . }}{{ end -}}
{{- with .Values.pods.snapshotClass }}{{ $_ := set $s "snapshotClass" . }}{{ end -}}
{{- with .Values.pods.modelGatewayCidr }}{{ $_ := set $s "modelGatewayCidr" . }}{{ end -}}
{{ toJson $s }}
{{- end -}}
