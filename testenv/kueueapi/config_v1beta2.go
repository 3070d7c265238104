//go:build !kueue_config_v1beta1

package main

import (
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/webhooks"
)

// The Configuration API of Kueue from v0.15 on (config.kueue.x-k8s.io/v1beta2). A release
// before that, pinned under testenv/kueue-<version>/, runs main.go with config_v1beta1.go
// instead (sandbox/build.py).
type configuration = configapi.Configuration

// Registers it in a scheme (its group-version variable's name moved in v0.19).
var addConfigToScheme = configapi.AddToScheme

// The kueue.x-k8s.io version the ClusterQueue webhook is registered for.
const servedVersion = "v1beta2"

// The kinds Kueue's validating webhooks judge, in the API they are registered for.
var validators = map[string]validator{
	"ClusterQueue":   {func() any { return &kueue.ClusterQueue{} }, &webhooks.ClusterQueueWebhook{}},
	"Cohort":         {func() any { return &kueue.Cohort{} }, &webhooks.CohortWebhook{}},
	"ResourceFlavor": {func() any { return &kueue.ResourceFlavor{} }, &webhooks.ResourceFlavorWebhook{}},
}
