// Every private part of Kueue the simulator reaches, in this one file: what, where, why, and the
// releases it was read from (each checked in the source of the pinned module: v0.17.0 in testenv/,
// v0.19.2 in testenv/kueue-v0.19.2/). Adding a Kueue release means reading each row again in its
// source; where a field is missing the program falls back (named per row) and stays correct,
// only slower, while a linked function that moved fails the build, not the run.
//
//	reached                                           kind         releases         when absent
//	pkg/scheduler.(*Scheduler).schedule               go:linkname  v0.17.0 v0.19.2  the build fails
//	pkg/util/wait.untilWithBackoff                    go:linkname  v0.17.0 v0.19.2  the build fails
//	pkg/cache/queue.Manager.hm                        field        v0.17.0 v0.19.2  hasHeads asks Dump
//	pkg/cache/hierarchy.Manager.clusterQueues         field        v0.17.0 v0.19.2  hasHeads asks Dump
//	pkg/cache/queue.ClusterQueue.heap                 field        v0.17.0 v0.19.2  hasHeads asks Dump
//	pkg/util/heap.Heap.data, data.keys                fields       v0.17.0 v0.19.2  hasHeads asks Dump
//	pkg/cache/queue.workqueueRequeuer.batchPeriod     field        v0.17.0 v0.19.2  requeues at once
//	pkg/cache/queue.testInadmissibleWorkloadRequeuer  fields       v0.17.0 v0.19.2  requeues at once
//	  .cqs, .cohorts (the notified sets, written)
//	pkg/cache/queue.Manager.workloadAssignedQueues    field        v0.17.0 v0.19.2  a live start's
//	  (written)                                                                      finishes requeue
//	                                                                                 nothing
//
// Why each: `schedule` is one scheduling cycle, which Kueue's own scheduler unit tests call; its
// public Start loops over it on wall time. `untilWithBackoff` is that loop with its timer passed
// in, run on the logical clock only with KUEUESIM_SCHEDULER_BACKOFF=1. The heaps' keys say
// whether a cycle would find a head without Dump's copy of every backlog (Kueue's Heads blocks on
// empty queues). The requeuer's batch period and notified sets put Kueue's requeue batching on the
// logical clock (clock.go, requeueBatch). A live start's admitted Workloads are recorded
// under their LocalQueue as Kueue does for those it finds when it starts
// (Manager.addLocalQueueLocked, assignWorkload): their finish then requeues what waits in their
// ClusterQueue and cohort.

package main

import (
	"context"
	"reflect"
	"time"
	"unsafe" // go:linkname, and the requeuer's sets (requeueBatch)

	"k8s.io/utils/clock"

	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	"sigs.k8s.io/kueue/pkg/scheduler"
	"sigs.k8s.io/kueue/pkg/util/wait"
)

// schedule is one scheduling cycle of Kueue's scheduler: the function its Start loops over in a
// goroutine with a real-time backoff. Run here once per call, on our clock, when the queues hold
// heads (it blocks on empty queues), exactly as Kueue's own scheduler unit tests call it.
//
//go:linkname schedule sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).schedule
func schedule(s *scheduler.Scheduler, ctx context.Context) wait.SpeedSignal

// untilWithBackoff is the loop Kueue's scheduler runs its cycles in (wait.UntilWithBackoff with
// the timer passed in): after a cycle that admitted nothing it waits its backoff before the
// next, and not after one that did. Run here with a timer on the logical clock (pacer).
//
//go:linkname untilWithBackoff sigs.k8s.io/kueue/pkg/util/wait.untilWithBackoff
func untilWithBackoff(ctx context.Context, f func(context.Context) wait.SpeedSignal, timer clock.Timer)

// heapsOf finds, in the queue manager, each ClusterQueue's heap of Workloads waiting for a
// scheduling cycle (its ordered keys), read without the copies Kueue's Dump makes of the whole
// backlog. Nil when this release lays its queues out otherwise: hasHeads then asks Dump.
func heapsOf(m *qcache.Manager) []reflect.Value {
	cqs := reflect.ValueOf(m).Elem().FieldByName("hm")
	if cqs.IsValid() {
		cqs = cqs.FieldByName("clusterQueues")
	}
	if !cqs.IsValid() || cqs.Kind() != reflect.Map {
		return nil
	}
	var keys []reflect.Value
	for it := cqs.MapRange(); it.Next(); {
		cq := it.Value()
		if cq.Kind() != reflect.Pointer || cq.IsNil() {
			return nil
		}
		k := cq.Elem().FieldByName("heap")
		if k.IsValid() {
			k = k.FieldByName("data")
		}
		if k.IsValid() {
			k = k.FieldByName("keys")
		}
		if !k.IsValid() || k.Kind() != reflect.Slice {
			return nil
		}
		keys = append(keys, k)
	}
	return keys
}

// newRequeueBatch finds the notification sets of Kueue's unit-test requeuer and the release's
// batch period; nil when this release lays either out otherwise (requeues are then processed
// at once, when no head is left: within the period's resolution).
func newRequeueBatch(requeuer any) *requeueBatch {
	period := reflect.ValueOf(qcache.NewRequeuer()).Elem().FieldByName("batchPeriod")
	if !period.IsValid() || period.Kind() != reflect.Int64 {
		return nil
	}
	b := &requeueBatch{period: time.Duration(period.Int()), waiting: map[waitingRequeue]time.Time{}}
	r := reflect.ValueOf(requeuer)
	if r.Kind() != reflect.Pointer {
		return nil
	}
	for i, name := range []string{"cqs", "cohorts"} {
		f := r.Elem().FieldByName(name)
		if !f.IsValid() || f.Kind() != reflect.Map || f.Type().Key().Kind() != reflect.String {
			return nil
		}
		b.notified[i] = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	}
	return b
}

// assignQueue records an admitted Workload of a live start under its LocalQueue in the queue
// manager, as Kueue's LocalQueue handler does for every Workload it lists when it starts
// (Manager.addLocalQueueLocked calls assignWorkload). Without it the Workload's finish requeues
// nothing (QueueAssociatedInadmissibleWorkloadsAfter looks its queue up there) and what waits
// for its quota waits for ever. False when this release lays the manager out otherwise.
func assignQueue(m *qcache.Manager, wl, lq string) bool {
	f := reflect.ValueOf(m).Elem().FieldByName("workloadAssignedQueues")
	if !f.IsValid() || f.Kind() != reflect.Map || f.IsNil() ||
		f.Type().Key().Kind() != reflect.String || f.Type().Elem().Kind() != reflect.String {
		return false
	}
	assigned := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	assigned.SetMapIndex(reflect.ValueOf(wl).Convert(f.Type().Key()), reflect.ValueOf(lq).Convert(f.Type().Elem()))
	return true
}
