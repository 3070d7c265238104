// What differs between the Kueue releases the simulator links: this file for v0.19, built with
// main.go in testenv/kueue-v0.19.2/ (auditor/sandbox/kueuesim.py chooses the file by the
// release). v0.19 records events through k8s.io/client-go/tools/events and moved the Workload
// patching, finishing and eviction helpers into packages of their own.
package main

import (
	"context"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload/evict"
	workloadfinish "sigs.k8s.io/kueue/pkg/workload/finish"
	"sigs.k8s.io/kueue/pkg/workload/patching"
)

var hubVersion = kueue.SchemeGroupVersion

// kueueRecorder is the events.EventRecorder v0.19 takes.
type kueueRecorder struct{ r *recorder }

func (k kueueRecorder) Eventf(regarding, _ apiruntime.Object, _, reason, _, _ string, args ...any) {
	k.r.note(regarding, reason, args)
}

func patchAdmissionStatus(ctx context.Context, c client.Client, wl *kueue.Workload, clk clock.Clock, update func(*kueue.Workload) (bool, error)) error {
	return patching.PatchAdmissionStatus(ctx, c, wl, clk, update, patching.WithLooseOnApply())
}

func finish(ctx context.Context, c client.Client, wl *kueue.Workload, reason, msg string, clk clock.Clock) error {
	return workloadfinish.Finish(ctx, c, wl, reason, msg, clk)
}

func isFinished(wl *kueue.Workload) bool { return workloadfinish.IsFinished(wl) }

func isEvicted(wl *kueue.Workload) bool { return evict.IsEvicted(wl) }
