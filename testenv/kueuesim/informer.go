// The informer's part: each Workload changed since the last delivery handed, in trace order, to
// the workload reconciler's event handlers; and what the report notes of each change (admitted,
// preempted and by whom, finished), with the livelock check.

package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/workload"
)

var uidInMessage = regexp.MustCompile(`UID: (` + strings.ReplaceAll(uidForm, "%06d", `[0-9]{6}`) + `)`)

func (s *sim) takeDirty() []int {
	s.dirtyMu.Lock()
	defer s.dirtyMu.Unlock()
	out := make([]int, 0, len(s.dirty))
	for key := range s.dirty {
		if i, ok := s.byName[key]; ok {
			out = append(out, i)
		}
	}
	clear(s.dirty)
	slices.Sort(out)
	return out
}

// get reads a Workload back from the API with its creation time as submitted: the fake API
// keeps times to the second, as JSON does, and two submissions within a second must keep the
// trace's order in Kueue's queues (their ties are broken by creation time).
func (s *sim) get(i int) (*kueue.Workload, error) {
	stored, err := s.tracker.Get(workloads, s.trace[i].Namespace, fmt.Sprintf(wlName, i))
	if err != nil {
		return nil, err
	}
	wl := stored.(*kueue.Workload)
	wl.CreationTimestamp = metav1.NewTime(s.records[i].created.Add(time.Duration(i)))
	return wl, nil
}

// deliver is the informer: each Workload changed since the last delivery, in trace order,
// goes to the workload reconciler's update handler, and the job controller's part follows.
func (s *sim) deliver() error {
	for {
		changed := s.takeDirty()
		if len(changed) == 0 {
			return nil
		}
		for _, i := range changed {
			now, err := s.get(i)
			if err != nil {
				return err
			}
			old := s.seen[i]
			s.seen[i] = now
			if old != nil && old.ResourceVersion == now.ResourceVersion {
				continue
			}
			s.observe(i, old, now)
			// The objects themselves, as an informer hands its cache's objects to every handler:
			// Kueue's handlers only read them (each takes its own copy to keep).
			if old == nil {
				s.workloads.Create(event.TypedCreateEvent[*kueue.Workload]{Object: now})
			} else {
				s.workloads.Update(event.TypedUpdateEvent[*kueue.Workload]{ObjectOld: old, ObjectNew: now})
			}
			if err := s.stopIfEvicted(now); err != nil {
				return err
			}
		}
	}
}

// observe notes what changed for the report, and times the finish of a newly admitted one.
func (s *sim) observe(i int, old, now *kueue.Workload) {
	r := s.records[i]
	at := seconds(s.clock.Now())
	wasAdmitted := old != nil && workload.HasQuotaReservation(old) && !isFinished(old)
	isAdmitted := workload.HasQuotaReservation(now) && !isFinished(now)
	wasEvicted := old != nil && isEvicted(old)
	if isAdmitted && !wasAdmitted {
		r.admitted = true
		r.attempt++
		h := happening{At: at, Kind: "admitted"}
		if now.Status.Admission != nil {
			h.ClusterQueue = string(now.Status.Admission.ClusterQueue)
			h.Flavors = flavors(now.Status.Admission)
		}
		r.Events = append(r.Events, h)
		s.push(timer{at: s.clock.Now().Add(r.runFor), index: i, kind: "finish", attempt: r.attempt})
	}
	if isEvicted(now) && !wasEvicted {
		h := happening{At: at, Kind: "evicted"}
		if ev := apimeta.FindStatusCondition(now.Status.Conditions, kueue.WorkloadEvicted); ev != nil {
			h.Reason = ev.Reason
		}
		if pc := apimeta.FindStatusCondition(now.Status.Conditions, kueue.WorkloadPreempted); pc != nil && pc.Status == metav1.ConditionTrue {
			h.Kind, h.Reason = "preempted", pc.Reason
			by, ok := s.recorder.take(now.UID)
			if !ok {
				if m := uidInMessage.FindStringSubmatch(pc.Message); m != nil {
					by, ok = types.UID(m[1]), true
				}
			}
			if ok {
				var idx int
				if _, err := fmt.Sscanf(string(by), uidForm, &idx); err == nil {
					h.By = &idx
					s.notePreemption(i, idx)
				}
			}
		}
		r.Events = append(r.Events, h)
	}
	if isFinished(now) && (old == nil || !isFinished(old)) {
		r.finished = true
		r.Events = append(r.Events, happening{At: at, Kind: "finished"})
	}
}

// notePreemption counts `victim` preempted by `by` at this instant; from the second time on,
// the set of Workloads holding quota is remembered, and one seen before is a livelock.
func (s *sim) notePreemption(victim, by int) {
	key := [2]int{victim, by}
	s.preemptedNow[key]++
	if s.preemptedNow[key] < 2 {
		return
	}
	var held strings.Builder
	for i := range s.records {
		if wl := s.seen[i]; wl != nil && i != victim && workload.HasQuotaReservation(wl) && !isFinished(wl) {
			fmt.Fprintf(&held, "%d,", i)
		}
	}
	state := fmt.Sprintf("%d>%d:%s", by, victim, held.String())
	if s.heldNow[state] {
		s.livelock, s.victim = true, victim
	}
	s.heldNow[state] = true
}

func flavors(a *kueue.Admission) string {
	var names []string
	for _, ps := range a.PodSetAssignments {
		for res, f := range ps.Flavors {
			names = append(names, string(res)+"="+string(f))
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}
