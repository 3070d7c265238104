//go:build !kueue_config_v1beta1

package main

import configapi "sigs.k8s.io/kueue/apis/config/v1beta2"

// The Configuration API of the control plane's Kueue. An older release pinned under
// testenv/kueue-<version>/ runs main.go with config_v1beta1.go instead (sandbox/build.py).
type configuration = configapi.Configuration

var configGroupVersion = configapi.GroupVersion
