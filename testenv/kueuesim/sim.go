// The simulation's state, and Kueue's own components built and wired as Kueue's manager wires
// them (scheduler cache, queue manager, scheduler, workload reconciler), over the in-memory API.

package main

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/featuregate"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/metrics"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/util/routine"
)

type sim struct {
	ctx       context.Context
	log       logr.Logger
	clock     *clocktesting.FakeClock
	client    client.Client
	cache     *schdcache.Cache
	queues    *qcache.Manager
	requeuer  interface{ ProcessRequeues(context.Context) int }
	sched     *scheduler.Scheduler
	workloads *core.WorkloadReconciler
	recorder  *recorder

	trace   []tracedWorkload
	records []*record
	byName  map[types.NamespacedName]int
	seen    map[int]*kueue.Workload
	timers  timers
	seq     int

	tracker clienttesting.ObjectTracker
	applyMu sync.Mutex // preemptions are written in parallel

	dirtyMu sync.Mutex
	dirty   map[types.NamespacedName]bool

	cqs      []*kueue.ClusterQueue
	heaps    []reflect.Value // each ClusterQueue's heap keys in the queue manager (hasHeads)
	batch    *requeueBatch   // nil: requeues processed at once (a release laid out otherwise)
	pace     *pacer          // Kueue's scheduler loop and its backoff, on the clock (nil: off)
	borrowed map[string][]sample
	cycles   int64
	stalled  []float64

	namespaces  map[string]*corev1.Namespace   // the revision's, as the client's Get answers them
	localQueues map[string][]*kueue.LocalQueue // the revision's, by ClusterQueue (listIndexed)
	// the revision's Namespaces without a LimitRange: the (empty) list the store answers
	noLimitRanges map[string]*corev1.LimitRangeList

	// A livelock: Kueue preempts a Workload for another and then readmits the victim first (the
	// entry order puts the Workload that borrows less ahead of a borrowing preemptor), at one
	// instant, without end. The preemptions of this instant, and the sets of quota holders seen
	// after a repeated one, find it: a state seen twice at one instant recurs forever, as the code
	// deciding is deterministic. The instant ends with the victim readmitted (clock.go).
	preemptedNow map[[2]int]int
	heldNow      map[string]bool
	livelock     bool
	victim       int       // the livelock's victim
	livelocked   []float64 // the instants a livelock ended
}

// recorder keeps the one event the scheduler's preemptor emits naming both sides of a
// preemption; everything else Kueue records is dropped.
type recorder struct {
	mu        sync.Mutex
	preemptor map[types.UID]types.UID // victim -> preemptor, for the preemptions of this cycle
}

// note keeps, from a "PreemptedWorkload" event on the preemptor, the victim's UID among the
// event's arguments (the release's own recorder interface is adapted in release_*.go).
func (r *recorder) note(object apiruntime.Object, reason string, args []any) {
	if reason != "PreemptedWorkload" {
		return
	}
	by, ok := object.(*kueue.Workload)
	if !ok {
		return
	}
	for _, a := range args {
		if uid, ok := a.(types.UID); ok {
			r.mu.Lock()
			r.preemptor[uid] = by.UID
			r.mu.Unlock()
			return
		}
	}
}

func (r *recorder) take(victim types.UID) (types.UID, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	by, ok := r.preemptor[victim]
	delete(r.preemptor, victim)
	return by, ok
}

// frozenGates answers Kueue's feature checks from the gates' values taken once, after the
// Configuration's featureGates were set (nothing sets a gate after that): the same answers, where
// the shared gate works out a default from its versioned specs at each of the many checks a
// scheduling cycle makes.
type frozenGates struct {
	featuregate.FeatureGate
	enabled map[featuregate.Feature]bool
}

func (g frozenGates) Enabled(key featuregate.Feature) bool {
	if v, ok := g.enabled[key]; ok {
		return v
	}
	return g.FeatureGate.Enabled(key)
}

func freezeFeatureGates() {
	gates := utilfeature.DefaultFeatureGate
	enabled := map[featuregate.Feature]bool{}
	for name := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		enabled[name] = gates.Enabled(name)
	}
	utilfeature.DefaultFeatureGate = frozenGates{FeatureGate: gates, enabled: enabled}
}

func newSim(spec *input) (*sim, error) {
	scheme := newScheme()
	s := &sim{
		ctx:      ctrl.LoggerInto(context.Background(), kueueLog),
		log:      kueueLog,
		clock:    clocktesting.NewFakeClock(epoch),
		trace:    spec.Workloads,
		byName:   map[types.NamespacedName]int{},
		seen:     map[int]*kueue.Workload{},
		dirty:    map[types.NamespacedName]bool{},
		borrowed: map[string][]sample{},
		recorder: &recorder{preemptor: map[types.UID]types.UID{}},

		namespaces:    map[string]*corev1.Namespace{},
		noLimitRanges: map[string]*corev1.LimitRangeList{},
		preemptedNow:  map[[2]int]int{},
		heldNow:       map[string]bool{},
	}
	var objects []client.Object
	for i, raw := range spec.Objects {
		obj, err := decode(scheme, raw)
		if err != nil {
			return nil, fmt.Errorf("objects[%d]: %v", i, err)
		}
		objects = append(objects, obj)
		if ns, ok := obj.(*corev1.Namespace); ok {
			s.namespaces[ns.Name] = ns.DeepCopy()
		}
	}
	s.client = s.newClient(scheme, objects)
	byCQ, err := s.localQueuesByClusterQueue()
	if err != nil {
		return nil, err
	}
	s.localQueues = byCQ
	if err := s.namespacesWithoutLimitRanges(); err != nil {
		return nil, err
	}

	expectations := preemptexpectations.New()
	// LocalQueue metrics off: Prometheus gauges nobody reads here, and the queue manager counts
	// them by walking every pending Workload of the ClusterQueue at each pop and requeue (the
	// backlog, twice a cycle). They feed no decision.
	noLQMetrics := &metrics.LocalQueueMetricsConfig{Enabled: false}
	cacheOpts := []schdcache.Option{schdcache.WithLocalQueueMetrics(noLQMetrics)}
	if spec.FairSharing != nil {
		cacheOpts = append(cacheOpts, schdcache.WithFairSharing(true))
	}
	s.cache = schdcache.New(s.client, cacheOpts...)
	queues, requeuer := qcache.NewManagerForUnitTestsWithRequeuer(s.client, s.cache,
		qcache.WithClock(s.clock), qcache.WithPreemptionExpectations(expectations),
		qcache.WithLocalQueueMetrics(noLQMetrics))
	s.queues, s.requeuer = queues, requeuer
	// Admissions are written in a goroutine of their own in Kueue; here, before the cycle ends.
	routine.DefaultWrapper = synchronous{}
	s.sched = scheduler.New(s.queues, s.cache, s.client, kueueRecorder{s.recorder},
		scheduler.WithClock(nil, s.clock), scheduler.WithFairSharing(spec.FairSharing),
		scheduler.WithPreemptionExpectations(expectations))
	s.workloads = core.NewWorkloadReconciler(s.client, s.queues, s.cache, kueueRecorder{s.recorder},
		core.WithPreemptionExpectations(expectations))

	// What the ResourceFlavor, Cohort, ClusterQueue and LocalQueue reconcilers do on create.
	log := s.log
	sortObjects(objects)
	for _, obj := range objects {
		if rf, ok := obj.(*kueue.ResourceFlavor); ok {
			s.cache.AddOrUpdateResourceFlavor(log, rf)
		}
	}
	for _, obj := range objects {
		if co, ok := obj.(*kueue.Cohort); ok {
			if err := s.cache.AddOrUpdateCohort(co); err != nil {
				return nil, fmt.Errorf("Cohort %s: %v", co.Name, err)
			}
			s.queues.AddOrUpdateCohort(s.ctx, co)
		}
	}
	for _, obj := range objects {
		if cq, ok := obj.(*kueue.ClusterQueue); ok {
			if err := s.cache.AddClusterQueue(s.ctx, cq); err != nil {
				return nil, fmt.Errorf("ClusterQueue %s: %v", cq.Name, err)
			}
			if err := s.queues.AddClusterQueue(s.ctx, cq); err != nil {
				return nil, fmt.Errorf("ClusterQueue %s: %v", cq.Name, err)
			}
			s.cqs = append(s.cqs, cq)
		}
	}
	for _, obj := range objects {
		if lq, ok := obj.(*kueue.LocalQueue); ok {
			// Adding a ClusterQueue adds the LocalQueues the API already has for it.
			if err := s.cache.AddLocalQueue(lq); err != nil && !already(err) {
				return nil, fmt.Errorf("LocalQueue %s/%s: %v", lq.Namespace, lq.Name, err)
			}
			if err := s.queues.AddLocalQueue(s.ctx, lq); err != nil && !already(err) {
				return nil, fmt.Errorf("LocalQueue %s/%s: %v", lq.Namespace, lq.Name, err)
			}
		}
	}
	s.heaps = heapsOf(s.queues)
	s.batch = newRequeueBatch(requeuer)
	if os.Getenv("KUEUESIM_SCHEDULER_BACKOFF") == "1" {
		// Off by default: measured on a 10,000-Workload day, 17 % fewer cycles but more CPU,
		// and different answers in bursts (docs/replay.md, The clock); the agreement
		// benchmark is what will say which is closer to the real Kueue.
		s.pace = newPacer(s.ctx)
	}
	for i, w := range spec.Workloads {
		if w.RunSeconds <= 0 || w.SubmittedAt < 0 || w.PodCount < 1 {
			return nil, fmt.Errorf("workloads[%d]: submittedAt >= 0, runSeconds > 0 and podCount >= 1 are required", i)
		}
		r := &record{Index: i, Events: []happening{}, runFor: time.Duration(w.RunSeconds * float64(time.Second)), submitted: at(w.SubmittedAt)}
		r.created = r.submitted
		if w.CreatedAt != nil {
			r.created = at(*w.CreatedAt)
		}
		if q, ok := w.Requests[string(gpu)]; ok {
			qty, err := resource.ParseQuantity(q)
			if err != nil {
				return nil, fmt.Errorf("workloads[%d].requests: %v", i, err)
			}
			r.gpus = qty.AsApproximateFloat64() * float64(w.PodCount)
		}
		s.records = append(s.records, r)
		s.push(timer{at: r.submitted, index: i, kind: "submit"})
	}
	return s, nil
}

type synchronous struct{}

func (synchronous) Run(f func()) { f() }
