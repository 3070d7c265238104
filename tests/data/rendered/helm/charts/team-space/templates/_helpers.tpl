{{- define "team-space.guard" -}}
argocd.argoproj.io/sync-options: Prune=false,Delete=false
{{- end -}}
