// The job controller's part around Kueue: a traced Workload submitted as its Job's Workload
// would be (priority as the job integration sets it), finished after its run time, stopped at
// once when evicted; and each ClusterQueue's borrowed GPUs sampled for the report.

package main

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/util/priority"
	"sigs.k8s.io/kueue/pkg/workload"
)

// stopIfEvicted is the job controller's answer to an eviction: the Job is suspended (its pods
// gone at once here) and the Workload's quota released, as Kueue's jobframework does.
func (s *sim) stopIfEvicted(wl *kueue.Workload) error {
	ev := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if ev == nil || ev.Status != metav1.ConditionTrue || !workload.HasQuotaReservation(wl) {
		return nil
	}
	copied := wl.DeepCopy()
	return patchAdmissionStatus(s.ctx, s.client, copied, s.clock, func(w *kueue.Workload) (bool, error) {
		requeued := ev.Reason == kueue.WorkloadEvictedByPreemption
		updated := workload.SetRequeuedCondition(w, ev.Reason, ev.Message, requeued)
		if workload.UnsetQuotaReservationWithCondition(w, "Pending", ev.Message, s.clock.Now()) {
			updated = true
		}
		return updated, nil
	})
}

func (s *sim) submit(i int) error {
	w := s.trace[i]
	requests := corev1.ResourceList{}
	limits := corev1.ResourceList{}
	for name, q := range w.Requests {
		qty, err := resource.ParseQuantity(q)
		if err != nil {
			return fmt.Errorf("workloads[%d].requests[%s]: %v", i, name, err)
		}
		requests[corev1.ResourceName(name)] = qty
		if corev1.ResourceName(name) == gpu {
			limits[gpu] = qty
		}
	}
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name:              fmt.Sprintf(wlName, i),
			Namespace:         w.Namespace,
			UID:               types.UID(fmt.Sprintf(uidForm, i)),
			CreationTimestamp: metav1.NewTime(s.records[i].created),
			Generation:        1,
		},
		Spec: kueue.WorkloadSpec{
			QueueName: kueue.LocalQueueName(w.LocalQueue),
			PodSets: []kueue.PodSet{{
				Name:  kueue.DefaultPodSetName,
				Count: w.PodCount,
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:      "main",
						Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
					}},
				}},
			}},
		},
	}
	// The priority as Kueue's job integration sets it: a WorkloadPriorityClass of the name, else a
	// PriorityClass, else the cluster's default PriorityClass, else zero.
	var ref *kueue.PriorityClassRef
	var value int32
	var err error
	if w.PriorityClass != nil && *w.PriorityClass != "" {
		ref, value, err = priority.GetPriorityFromWorkloadPriorityClass(s.ctx, s.client, *w.PriorityClass)
		if err != nil {
			ref, value, err = priority.GetPriorityFromPriorityClass(s.ctx, s.client, *w.PriorityClass)
		}
	} else {
		ref, value, err = priority.GetPriorityFromPriorityClass(s.ctx, s.client, "")
	}
	r := s.records[i]
	if err != nil {
		r.Events = append(r.Events, happening{At: seconds(s.clock.Now()), Kind: "rejected", Message: err.Error()})
		return nil
	}
	wl.Spec.PriorityClassRef, wl.Spec.Priority = ref, &value
	r.Priority = value
	if err := s.client.Create(s.ctx, wl); err != nil {
		r.Events = append(r.Events, happening{At: seconds(s.clock.Now()), Kind: "rejected", Message: err.Error()})
		return nil
	}
	if len(w.Admission) > 0 {
		if err := s.admitted(i, wl); err != nil {
			return err
		}
	}
	key := client.ObjectKeyFromObject(wl)
	s.byName[key] = i
	s.dirtyMu.Lock()
	s.dirty[key] = true
	s.dirtyMu.Unlock()
	return nil
}

func (s *sim) finish(i, attempt int) error {
	r := s.records[i]
	if r.attempt != attempt || r.finished {
		return nil // preempted since: that run never ended
	}
	wl, err := s.get(i)
	if err != nil {
		return err
	}
	if !workload.HasQuotaReservation(wl) {
		return nil
	}
	return finish(s.ctx, s.client, wl, kueue.WorkloadFinishedReasonSucceeded, "Job finished successfully", s.clock)
}

// sampleBorrowing records, when it changed, what each ClusterQueue borrows of GPUs now, from
// the scheduler cache's own usage (what the ClusterQueue reconciler writes to its status).
func (s *sim) sampleBorrowing() {
	at := seconds(s.clock.Now())
	for _, cq := range s.cqs {
		stats, err := s.cache.Usage(cq)
		if err != nil {
			continue
		}
		var borrowed float64
		for _, fu := range stats.ReservedResources {
			for _, ru := range fu.Resources {
				if ru.Name == gpu {
					borrowed += ru.Borrowed.AsApproximateFloat64()
				}
			}
		}
		series := s.borrowed[cq.Name]
		if len(series) > 0 && series[len(series)-1].Value == borrowed {
			continue
		}
		s.borrowed[cq.Name] = append(series, sample{At: at, Value: borrowed})
	}
}

// admitted gives a live start's Workload the quota it holds on the cluster, as Kueue wrote it
// there: its admission, QuotaReserved and Admitted at its own admission time (Kueue orders
// preemption candidates by it). Its Create event then puts it in the scheduler cache as
// admitted, as Kueue's workload handler does for one it finds on start.
func (s *sim) admitted(i int, wl *kueue.Workload) error {
	w := s.trace[i]
	var admission kueue.Admission
	if err := json.Unmarshal(w.Admission, &admission); err != nil {
		return fmt.Errorf("workloads[%d].admission: %v", i, err)
	}
	when := s.clock.Now()
	if w.AdmittedAt != nil {
		when = at(*w.AdmittedAt)
	}
	workload.SetQuotaReservation(wl, &admission, clocktesting.NewFakeClock(when))
	workload.SyncAdmittedCondition(wl, when)
	assignQueue(s.queues, string(workload.Key(wl)), wl.Namespace+"/"+string(wl.Spec.QueueName))
	return s.client.Status().Update(s.ctx, wl)
}
