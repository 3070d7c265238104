//go:build kueue_config_v1beta1

package main

import configapi "sigs.k8s.io/kueue/apis/config/v1beta1"

// The Configuration API of Kueue releases before v0.15 (config.kueue.x-k8s.io/v1beta1).
type configuration = configapi.Configuration

var configGroupVersion = configapi.GroupVersion
