//go:build kueue_config_v1beta1

package main

import (
	configapi "sigs.k8s.io/kueue/apis/config/v1beta1"
	kueuealpha "sigs.k8s.io/kueue/apis/kueue/v1alpha1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	"sigs.k8s.io/kueue/pkg/webhooks"
)

// The Configuration API of Kueue releases before v0.15 (config.kueue.x-k8s.io/v1beta1).
type configuration = configapi.Configuration

// Registers it in a scheme (its group-version variable's name moved in v0.19).
var addConfigToScheme = configapi.AddToScheme

// The kueue.x-k8s.io version the ClusterQueue webhook is registered for.
const servedVersion = "v1beta1"

// The kinds those releases' validating webhooks judge, in the API they serve (Cohort was
// v1alpha1 before v0.11).
var validators = map[string]validator{
	"ClusterQueue":   {func() any { return &kueue.ClusterQueue{} }, &webhooks.ClusterQueueWebhook{}},
	"Cohort":         {func() any { return &kueuealpha.Cohort{} }, &webhooks.CohortWebhook{}},
	"ResourceFlavor": {func() any { return &kueue.ResourceFlavor{} }, &webhooks.ResourceFlavorWebhook{}},
}
