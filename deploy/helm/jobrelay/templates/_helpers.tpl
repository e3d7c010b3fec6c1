{{/* Object names: <namePrefix>-<component>. */}}
{{- define "jobrelay.name" -}}
{{- printf "%s-%s" .root.Values.namePrefix .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "jobrelay.labels" -}}
app.kubernetes.io/name: {{ include "jobrelay.name" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/part-of: jobrelay
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "jobrelay.selector" -}}
app.kubernetes.io/name: {{ include "jobrelay.name" . }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "jobrelay.image" -}}
{{- printf "%s/%s:%s" .root.Values.image.registry .component (.root.Values.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}

{{/* The bundled Redis's password as an env entry, from its Secret (the chart's or redis.passwordSecret). */}}
{{- define "jobrelay.redisPasswordEnv" -}}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ .Values.redis.passwordSecret | default (include "jobrelay.name" (dict "root" . "component" "redis")) | quote }}, key: password}
{{- end -}}

{{/* The Redis URL as an env entry: from the bundled Service (its password substituted by the kubelet), a value, or a Secret. */}}
{{- define "jobrelay.redisEnv" -}}
{{- $redis := .Values.redis -}}
{{- if $redis.bundled }}
{{- include "jobrelay.redisPasswordEnv" . }}
{{- end }}
- name: JOBRELAY_REDIS_URL
{{- if $redis.bundled }}
  value: {{ printf "redis://:$(REDIS_PASSWORD)@%s.%s.svc:6379" (include "jobrelay.name" (dict "root" . "component" "redis")) .Release.Namespace | quote }}
{{- else if $redis.urlSecret.name }}
  valueFrom:
    secretKeyRef: {name: {{ $redis.urlSecret.name | quote }}, key: {{ $redis.urlSecret.key | quote }}}
{{- else if $redis.url }}
  value: {{ $redis.url | quote }}
{{- else }}
{{- fail "redis: set redis.bundled=true, or redis.url, or redis.urlSecret.name" }}
{{- end }}
{{- end -}}

{{/* Settings both processes read the same way (the API shows the kinds the controller dispatches). */}}
{{- define "jobrelay.kindSettings" -}}
managedBy: {{ .Values.dispatch.managedBy | quote }}
kinds: {{ .Values.dispatch.kinds | toJson }}
kindManagedBy:
{{- range $kind, $value := .Values.dispatch.kindManagedBy }}
  - {{ printf "%s=%s" $kind $value | quote }}
{{- else }} []
{{- end }}
systemNamespace: {{ .Release.Namespace | quote }}
placementPolicy: {{ .Values.dispatch.placementPolicy | quote }}
{{- end -}}

{{- define "jobrelay.podSecurity" -}}
securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
{{- end -}}

{{- define "jobrelay.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities: {drop: ["ALL"]}
{{- end -}}

{{/* Checks values.schema.json cannot express: how values relate to each other. */}}
{{- define "jobrelay.validate" -}}
{{- $builtIn := "kubernetes.io/job-controller" -}}
{{- if eq .Values.dispatch.managedBy $builtIn }}
{{- fail (printf "dispatch.managedBy: %s is the built-in Job controller's value; jobrelay would take every ordinary Job from it. Use a value of your own, e.g. jobrelay.dev/dispatcher" $builtIn) }}
{{- end }}
{{- range $kind, $value := .Values.dispatch.kindManagedBy }}
{{- if eq $value $builtIn }}
{{- fail (printf "dispatch.kindManagedBy.%s: %s is the built-in Job controller's value" $kind $builtIn) }}
{{- end }}
{{- end }}
{{- if and (not .Values.redis.bundled) (not .Values.redis.url) (not .Values.redis.urlSecret.name) }}
{{- fail "redis: set redis.bundled=true, or redis.url, or redis.urlSecret.name" }}
{{- end }}
{{- $le := .Values.controller.leaderElection -}}
{{- if ge (int $le.renewDeadlineSeconds) (int $le.leaseDurationSeconds) }}
{{- fail (printf "controller.leaderElection.renewDeadlineSeconds (%v) must be shorter than leaseDurationSeconds (%v): a leader gives up before the others may take over" $le.renewDeadlineSeconds $le.leaseDurationSeconds) }}
{{- end }}
{{- if ge (int $le.retryPeriodSeconds) (int $le.renewDeadlineSeconds) }}
{{- fail (printf "controller.leaderElection.retryPeriodSeconds (%v) must be shorter than renewDeadlineSeconds (%v)" $le.retryPeriodSeconds $le.renewDeadlineSeconds) }}
{{- end }}
{{- $queueNames := dict -}}
{{- range $index, $queue := .Values.queues }}
{{- if hasKey $queueNames $queue.name }}
{{- fail (printf "queues[%d].name: %s is already queues[%v]'s; DispatchQueues are cluster-scoped, one per name" $index $queue.name (get $queueNames $queue.name)) }}
{{- end }}
{{- $_ := set $queueNames $queue.name $index }}
{{- range $r, $resource := $queue.resources }}
{{- if and (or (hasKey $resource "borrowingLimit") (hasKey $resource "lendingLimit")) (not $queue.cohort) }}
{{- fail (printf "queues[%d].resources[%d]: borrowingLimit and lendingLimit need the queue's cohort; only queues of one cohort lend each other quota" $index $r) }}
{{- end }}
{{- end }}
{{- end }}
{{- if ge (int .Values.controller.shutdownTimeoutSeconds) (int .Values.controller.terminationGracePeriodSeconds) }}
{{- fail (printf "controller.shutdownTimeoutSeconds (%v) must be shorter than terminationGracePeriodSeconds (%v), or the pod is killed before it releases its Lease" .Values.controller.shutdownTimeoutSeconds .Values.controller.terminationGracePeriodSeconds) }}
{{- end }}
{{- end -}}
