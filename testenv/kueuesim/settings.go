// What was simulated: the feature gates and scheduler settings this run had, as the linked
// release itself works them out (its gates' defaults with the Configuration's featureGates over
// them; its Configuration defaults applied to the Configuration's waitForPodsReady), stamped on
// the output so every plan report says which Kueue it simulated (docs/replay.md).

package main

import (
	"encoding/json"
	"fmt"

	utilfeature "k8s.io/apiserver/pkg/util/feature"

	config "sigs.k8s.io/kueue/apis/config/v1beta2"
)

type settings struct {
	// Every gate of the release with the value the simulation ran with, by name.
	FeatureGates map[string]bool `json:"featureGates"`
	// The Configuration's fair sharing as passed to the scheduler (null: off).
	FairSharing *config.FairSharing `json:"fairSharing"`
	// waitForPodsReady after the release's defaults (null: the release leaves it off).
	WaitForPodsReady *config.WaitForPodsReady `json:"waitForPodsReady"`
	// The release's requeue batch period (0: requeues processed at once, when no head is left).
	RequeueBatchSeconds float64 `json:"requeueBatchSeconds"`
	// Whether the scheduler's backoff between cycles runs on the clock (KUEUESIM_SCHEDULER_BACKOFF).
	SchedulerBackoff bool `json:"schedulerBackoff"`
}

func settingsOf(spec *input, s *sim) (*settings, error) {
	out := &settings{FeatureGates: map[string]bool{}, FairSharing: spec.FairSharing, SchedulerBackoff: s.pace != nil}
	for name := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		out.FeatureGates[string(name)] = utilfeature.DefaultFeatureGate.Enabled(name)
	}
	cfg := config.Configuration{}
	if len(spec.WaitForPodsReady) > 0 && string(spec.WaitForPodsReady) != "null" {
		cfg.WaitForPodsReady = &config.WaitForPodsReady{}
		if err := json.Unmarshal(spec.WaitForPodsReady, cfg.WaitForPodsReady); err != nil {
			return nil, fmt.Errorf("waitForPodsReady: %v", err)
		}
	}
	config.SetDefaults_Configuration(&cfg)
	out.WaitForPodsReady = cfg.WaitForPodsReady
	if s.batch != nil {
		out.RequeueBatchSeconds = s.batch.period.Seconds()
	}
	return out, nil
}
