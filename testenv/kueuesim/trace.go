// The program's input (the revision's objects, the Configuration's fair sharing and feature
// gates, the traced Workloads) and output (what happened to each Workload, in trace seconds), and
// trace time: seconds since the epoch the logical clock starts at.

package main

import (
	"encoding/json"
	"time"

	corev1 "k8s.io/api/core/v1"

	config "sigs.k8s.io/kueue/apis/config/v1beta2"
)

const (
	gpu     = corev1.ResourceName("nvidia.com/gpu")
	wlName  = "sim-%06d"
	uidForm = "sim-uid-%06d"
	// The most scheduling cycles at one instant before the clock moves on regardless (a
	// livelock, informer.go, ends an instant long before this).
	maxCyclesPerInstant = 20000
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type tracedWorkload struct {
	Namespace     string            `json:"namespace"`
	LocalQueue    string            `json:"localQueue"`
	PriorityClass *string           `json:"priorityClass"`
	Requests      map[string]string `json:"requests"`
	PodCount      int32             `json:"podCount"`
	SubmittedAt   float64           `json:"submittedAt"`
	RunSeconds    float64           `json:"runSeconds"`
	// A live start (auditor/replay/livestart.py): a Workload the cluster already has, created
	// at createdAt (trace seconds, before the start for one that exists) and, when it holds
	// quota, admitted at admittedAt with this admission (v1beta2 status.admission); its
	// runSeconds is then what remains of its run.
	CreatedAt  *float64        `json:"createdAt,omitempty"`
	AdmittedAt *float64        `json:"admittedAt,omitempty"`
	Admission  json.RawMessage `json:"admission,omitempty"`
}

type input struct {
	Objects      []json.RawMessage   `json:"objects"`
	FairSharing  *config.FairSharing `json:"fairSharing"`
	FeatureGates map[string]bool     `json:"featureGates"`
	Workloads    []tracedWorkload    `json:"workloads"`
	Horizon      *float64            `json:"horizonSeconds"`
	// The Configuration's waitForPodsReady as the revision has it (null: absent), defaulted by
	// the release's own Configuration defaults for the stamp (settings.go).
	WaitForPodsReady json.RawMessage `json:"waitForPodsReady"`
}

// happening is one thing that happened to a Workload, in trace seconds.
type happening struct {
	At           float64 `json:"at"`
	Kind         string  `json:"kind"` // admitted, preempted, finished, rejected
	ClusterQueue string  `json:"clusterQueue,omitempty"`
	Flavors      string  `json:"flavors,omitempty"`
	Reason       string  `json:"reason,omitempty"`
	By           *int    `json:"by,omitempty"` // the preemptor's trace index
	Message      string  `json:"message,omitempty"`
}

type record struct {
	Index     int         `json:"index"`
	Priority  int32       `json:"priority"`
	Events    []happening `json:"events"`
	Pending   string      `json:"pendingReason,omitempty"` // never admitted: Kueue's last word
	gpus      float64
	admitted  bool
	finished  bool
	attempt   int // incremented on each admission; a finish event carries the attempt it ends
	runFor    time.Duration
	submitted time.Time
	created   time.Time // the Workload's creation time: when submitted, or a live one's own
}

type sample struct {
	At    float64 `json:"at"`
	Value float64 `json:"gpus"`
}

type output struct {
	KueueVersion string              `json:"kueueVersion"`
	Workloads    []*record           `json:"workloads"`
	Borrowed     map[string][]sample `json:"borrowedGpus"`
	EndSeconds   float64             `json:"endSeconds"`
	Stalled      []float64           `json:"stalledAt"`
	Livelocked   []float64           `json:"livelockAt"`
	Cycles       int64               `json:"cycles"`
	Simulated    *settings           `json:"simulated"`
}

func seconds(t time.Time) float64 {
	return float64(t.Sub(epoch).Round(time.Millisecond)) / float64(time.Second)
}

func at(secs float64) time.Time { return epoch.Add(time.Duration(secs * float64(time.Second))) }
