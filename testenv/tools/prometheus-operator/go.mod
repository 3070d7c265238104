// prometheus-operator, pinned only so `go mod download` fetches its source and we install its
// PrometheusRule CRD (example/prometheus-operator-crd) into the sandbox. Nothing here is built.
module github.com/kueue-gitops/testenv/tools/prometheus-operator

go 1.26

require github.com/prometheus-operator/prometheus-operator v0.85.0
