// What differs between the Kueue releases the simulator links: this file for v0.17, built with
// main.go in testenv/ (auditor/sandbox/kueuesim.py chooses the file by the release).
package main

import (
	"context"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

var hubVersion = kueue.GroupVersion

// kueueRecorder is the record.EventRecorder v0.17 takes.
type kueueRecorder struct{ r *recorder }

func (k kueueRecorder) Event(object apiruntime.Object, _, reason, _ string) {
	k.r.note(object, reason, nil)
}

func (k kueueRecorder) Eventf(object apiruntime.Object, _, reason, _ string, args ...any) {
	k.r.note(object, reason, args)
}

func (k kueueRecorder) AnnotatedEventf(object apiruntime.Object, _ map[string]string, _, reason, _ string, args ...any) {
	k.r.note(object, reason, args)
}

func patchAdmissionStatus(ctx context.Context, c client.Client, wl *kueue.Workload, clk clock.Clock, update func(*kueue.Workload) (bool, error)) error {
	return workload.PatchAdmissionStatus(ctx, c, wl, clk, update, workload.WithLooseOnApply())
}

func finish(ctx context.Context, c client.Client, wl *kueue.Workload, reason, msg string, clk clock.Clock) error {
	return workload.Finish(ctx, c, wl, reason, msg, clk)
}

func isFinished(wl *kueue.Workload) bool { return workload.IsFinished(wl) }

func isEvicted(wl *kueue.Workload) bool { return workload.IsEvicted(wl) }
