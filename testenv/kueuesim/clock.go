// The logical clock: the timers (submissions, finishes, due requeues, the scheduler loop's
// backoff), the run from one event to the next, and each instant settled as Kueue would settle it.

package main

import (
	"container/heap"
	"context"
	"reflect"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/util/wait"
	"sigs.k8s.io/kueue/pkg/workload"
)

type timer struct {
	at      time.Time
	seq     int // insertion order breaks ties: the trace's order for submissions
	index   int
	kind    string // submit or finish
	attempt int
}

// pacer puts Kueue's scheduler loop on the logical clock. Kueue's own loop (untilWithBackoff)
// runs in a goroutine with this as its timer: at each iteration it resets the timer to its
// backoff (nothing after a cycle that admitted, then growing after cycles that did not, as the
// release's speedyBackoffManager steps it), calls its cycle function (here: wait for the
// simulation to run one scheduling cycle and hand back its speed signal) and waits for the
// timer. The simulation runs a cycle when a head waits and the iteration has begun; the next
// iteration begins when the backoff, counted from this one's start, has passed on the clock.
type pacer struct {
	enter chan time.Duration    // Kueue's loop entered its cycle function, with its backoff
	exit  chan wait.SpeedSignal // the cycle's signal, returned to Kueue's loop
	fire  chan time.Time        // the timer fires
	reset time.Duration         // what Kueue's loop last set the timer to
	start time.Time             // when the current iteration began (the timer was reset)
	wait  time.Duration         // its backoff
	wake  time.Time             // a timer event already pushed for start
}

func (p *pacer) C() <-chan time.Time        { return p.fire }
func (p *pacer) Stop() bool                 { return true }
func (p *pacer) Reset(d time.Duration) bool { p.reset = d; return true }
func (p *pacer) loop(ctx context.Context) wait.SpeedSignal {
	p.enter <- p.reset
	return <-p.exit
}

func newPacer(ctx context.Context) *pacer {
	p := &pacer{enter: make(chan time.Duration), exit: make(chan wait.SpeedSignal), fire: make(chan time.Time), start: epoch}
	go untilWithBackoff(ctx, p.loop, p)
	p.wait = <-p.enter
	return p
}

// due says whether Kueue's loop would run a cycle now; when it would later, a timer brings the
// clock to that instant.
func (p *pacer) due(s *sim) bool {
	if !s.clock.Now().Before(p.start) {
		return true
	}
	if !p.wake.Equal(p.start) {
		p.wake = p.start
		s.push(timer{at: p.start, kind: "cycle"})
	}
	return false
}

// cycle runs one scheduling cycle inside Kueue's loop and lets the loop go on to its next
// iteration, which begins at this one's start plus its backoff (or now, if later).
func (p *pacer) cycle(s *sim) {
	now := s.clock.Now()
	p.exit <- schedule(s.sched, s.ctx)
	next := p.start.Add(p.wait)
	if next.Before(now) {
		next = now
	}
	p.fire <- next
	p.wait = <-p.enter
	p.start = next
}

// requeueBatch is Kueue's requeuer of inadmissible Workloads on the logical clock. On a cluster,
// a notification that a ClusterQueue (or a root Cohort) may admit again (a Workload finished or
// was evicted, quota was freed) is added to a delaying work queue for the release's batch
// period (its own requeuer's, read from qcache.NewRequeuer: 1 s, or 10 s with the
// SchedulerLongRequeueInterval gate), and notifications of the same queue or Cohort before it
// is due are one requeue. Here the unit-test requeuer Kueue's queue manager is built with
// collects the notifications; each one not already waiting becomes due a batch period after it
// was first notified, and a timer brings the clock there.
type requeueBatch struct {
	period   time.Duration
	notified [2]reflect.Value // the unit-test requeuer's ClusterQueues and Cohorts (settable sets)
	waiting  map[waitingRequeue]time.Time
}

type waitingRequeue struct {
	set  int // 0 ClusterQueue, 1 Cohort
	name string
}

// collectRequeues takes what Kueue asked to requeue since the last call: each not already
// waiting is due a batch period from now.
func (s *sim) collectRequeues() {
	for i, set := range s.batch.notified {
		if set.Len() == 0 {
			continue
		}
		for _, k := range set.MapKeys() {
			key := waitingRequeue{set: i, name: k.String()}
			if _, ok := s.batch.waiting[key]; !ok {
				due := s.clock.Now().Add(s.batch.period)
				s.batch.waiting[key] = due
				s.push(timer{at: due, kind: "requeue"})
			}
		}
		set.Clear()
	}
}

// requeueDue hands Kueue back the requeues due by now (ProcessRequeues moves their inadmissible
// Workloads back to the heaps) and returns how many Workloads moved.
func (s *sim) requeueDue() int {
	now := s.clock.Now()
	due := false
	for key, at := range s.batch.waiting {
		if at.After(now) {
			continue
		}
		set := s.batch.notified[key.set]
		set.SetMapIndex(reflect.ValueOf(key.name).Convert(set.Type().Key()), reflect.Zero(set.Type().Elem()))
		delete(s.batch.waiting, key)
		due = true
	}
	if !due {
		return 0
	}
	return s.requeuer.ProcessRequeues(s.ctx)
}

// holds says whether Workload i holds quota now.
//
// A livelocked instant ends in the state a cluster spends the loop in: the victim readmitted
// and holding its quota. On a cluster each turn of the loop takes real time (the eviction goes
// through the job controller and the pods before the quota is released; the readmission
// follows within a cycle), so the victim holds the quota for nearly all of it, and its GPUs are
// in use. Ended at the eviction instead, the quota would sit idle until the next event, which
// no cluster does (issue 45: a tenant's GPU-hours 12 % below the real Kueue's).
func (s *sim) holds(i int) bool {
	wl := s.seen[i]
	return wl != nil && workload.HasQuotaReservation(wl) && !isFinished(wl)
}

// hasHeads says whether a scheduling cycle would find a head: a ClusterQueue's heap holds a
// Workload (Kueue's Heads blocks otherwise).
func (s *sim) hasHeads() bool {
	if s.heaps == nil {
		return len(s.queues.Dump()) > 0
	}
	for _, keys := range s.heaps {
		if keys.Len() > 0 {
			return true
		}
	}
	return false
}

// timers is the events to come, a binary heap by time and then insertion order: the earliest
// first, and of one instant the first pushed first (a day's submissions and finishes are tens
// of thousands of events; a sorted slice moved them all at each insertion).
type timers []timer

func (h timers) Len() int { return len(h) }
func (h timers) Less(i, j int) bool {
	if c := h[i].at.Compare(h[j].at); c != 0 {
		return c < 0
	}
	return h[i].seq < h[j].seq
}
func (h timers) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timers) Push(x any)   { *h = append(*h, x.(timer)) }
func (h *timers) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

func (s *sim) push(t timer) {
	t.seq = s.seq
	s.seq++
	heap.Push(&s.timers, t)
}

func (s *sim) run(horizon *float64) error {
	for len(s.timers) > 0 {
		now := s.timers[0].at
		if horizon != nil && now.After(at(*horizon)) {
			break
		}
		s.clock.SetTime(now)
		for len(s.timers) > 0 && s.timers[0].at.Equal(now) {
			t := heap.Pop(&s.timers).(timer)
			var err error
			switch t.kind {
			case "submit":
				err = s.submit(t.index)
			case "finish":
				err = s.finish(t.index, t.attempt)
			case "requeue", "cycle": // settleInstant requeues what is due, and runs the cycle
			}
			if err != nil {
				return err
			}
		}
		if err := s.settleInstant(); err != nil {
			return err
		}
		s.sampleBorrowing()
	}
	for _, r := range s.records {
		if !r.admitted {
			if wl := s.seen[r.Index]; wl != nil {
				if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil {
					r.Pending = c.Message
				}
			}
		}
	}
	return nil
}

// settleInstant lets Kueue do everything it would at this instant: deliver each change to the
// workload handlers, run scheduling cycles while the queues have heads, and requeue what was
// inadmissible when quota was freed.
func (s *sim) settleInstant() error {
	cycles := 0
	clear(s.preemptedNow)
	clear(s.heldNow)
	s.livelock = false
	for {
		if err := s.deliver(); err != nil {
			return err
		}
		if s.batch != nil {
			s.collectRequeues()
			if s.requeueDue() > 0 {
				continue
			}
		}
		if s.livelock && s.holds(s.victim) {
			s.livelocked = append(s.livelocked, seconds(s.clock.Now()))
			return nil
		}
		if s.hasHeads() && (s.pace == nil || s.pace.due(s)) {
			if cycles >= maxCyclesPerInstant {
				s.stalled = append(s.stalled, seconds(s.clock.Now()))
				return nil
			}
			if s.pace != nil {
				s.pace.cycle(s)
			} else {
				schedule(s.sched, s.ctx)
			}
			s.cycles++
			cycles++
			continue
		}
		if s.batch == nil && s.requeuer.ProcessRequeues(s.ctx) > 0 {
			continue
		}
		s.dirtyMu.Lock()
		more := len(s.dirty) > 0
		s.dirtyMu.Unlock()
		if !more {
			return nil
		}
	}
}
