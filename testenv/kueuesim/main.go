// Command kueuesim replays a trace of Workloads through Kueue's own scheduler on a logical clock.
//
// It is built in the module of the Kueue release it simulates (testenv/ for the control plane's,
// testenv/kueue-<version>/ for another; auditor/sandbox/kueuesim.py), so every admission,
// borrowing, preemption and requeue is decided by that release's scheduler, flavor assigner,
// preemptor, scheduler cache and queue manager, and by its workload reconciler's event handlers.
// What the program adds is only what a cluster adds around them: an in-memory API (the
// controller-runtime fake client), the informer's delivery of each change to the handlers, the
// job controller's part (a preempted Job stops at once; a running one finishes after its traced
// run time) and a clock that jumps from one event to the next.
//
// Input (stdin or -in): JSON {"objects": [ClusterQueues, Cohorts, ResourceFlavors, LocalQueues,
// WorkloadPriorityClasses, PriorityClasses, Namespaces as Kubernetes JSON], "fairSharing": the
// Configuration's fairSharing or null, "featureGates": {name: bool}, "workloads": [{"namespace",
// "localQueue", "priorityClass", "requests", "podCount", "submittedAt", "runSeconds"}]}.
// Output (stdout or -out): JSON, one record per Workload in trace order with what happened to it
// and when (trace seconds), and each ClusterQueue's borrowed GPUs over time. Deterministic: the
// same input gives the same bytes. Timings go to stderr.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe" // go:linkname, and the requeuer's sets (requeueBatch)

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/event"

	config "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/controller/core"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/metrics"
	"sigs.k8s.io/kueue/pkg/scheduler"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/util/priority"
	"sigs.k8s.io/kueue/pkg/util/routine"
	"sigs.k8s.io/kueue/pkg/util/wait"
	"sigs.k8s.io/kueue/pkg/workload"
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

const (
	gpu     = corev1.ResourceName("nvidia.com/gpu")
	wlName  = "sim-%06d"
	uidForm = "sim-uid-%06d"
	// The most scheduling cycles at one instant before the clock moves on regardless (a
	// livelock, below, ends an instant long before this).
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
}

type input struct {
	Objects      []json.RawMessage   `json:"objects"`
	FairSharing  *config.FairSharing `json:"fairSharing"`
	FeatureGates map[string]bool     `json:"featureGates"`
	Workloads    []tracedWorkload    `json:"workloads"`
	Horizon      *float64            `json:"horizonSeconds"`
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
}

type timer struct {
	at      time.Time
	seq     int // insertion order breaks ties: the trace's order for submissions
	index   int
	kind    string // submit or finish
	attempt int
}

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
	timers  []timer
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

	namespaces map[string]*corev1.Namespace // the revision's, as the client's Get answers them

	// A livelock: Kueue preempts a Workload for another and then readmits the victim first (the
	// entry order puts the Workload that borrows less ahead of a borrowing preemptor), at one
	// instant, without end. The preemptions of this instant, and the sets of quota holders seen
	// after a repeated one, find it: a state seen twice at one instant recurs forever, as the code
	// deciding is deterministic.
	preemptedNow map[[2]int]int
	heldNow      map[string]bool
	livelock     bool
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

var uidInMessage = regexp.MustCompile(`UID: (` + strings.ReplaceAll(uidForm, "%06d", `[0-9]{6}`) + `)`)

func seconds(t time.Time) float64 {
	return float64(t.Sub(epoch).Round(time.Millisecond)) / float64(time.Second)
}

func at(secs float64) time.Time { return epoch.Add(time.Duration(secs * float64(time.Second))) }

// kueueLog is where Kueue's own logging goes: nowhere, unless -v asks for it.
var kueueLog = logr.Discard()

func main() {
	in := flag.String("in", "-", "input JSON file (- for stdin)")
	out := flag.String("out", "-", "output JSON file (- for stdout)")
	version := flag.String("kueue-version", "", "the Kueue release this was built from (for the output)")
	profile := flag.String("cpuprofile", "", "write a CPU profile here (for bench/replay)")
	verbosity := flag.Int("v", 0, "Kueue's own log on stderr at this verbosity (0: none), to see why it decided")
	flag.Parse()
	if *verbosity > 0 {
		kueueLog = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) },
			funcr.Options{Verbosity: *verbosity})
	}
	started := time.Now()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fail("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail("%v", err)
		}
		defer pprof.StopCPUProfile()
	}
	if os.Getenv("GOGC") == "" {
		// A simulation's heap is small and short-lived (tens to hundreds of MiB): collecting at
		// 5x the live heap rather than 2x halves the time the collector takes from the cycles.
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// ... but not past 1 GiB (a soft limit: the collector runs sooner near it), which a
		// day of 50,000 Workloads would reach at 5x.
		debug.SetMemoryLimit(1 << 30)
	}
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	ctrl.SetLogger(kueueLog)

	raw, err := readAll(*in)
	if err != nil {
		fail("reading the input: %v", err)
	}
	var spec input
	if err := json.Unmarshal(raw, &spec); err != nil {
		fail("the input is not valid JSON: %v", err)
	}
	if len(spec.FeatureGates) > 0 {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(spec.FeatureGates); err != nil {
			fail("featureGates: %v", err)
		}
	}
	freezeFeatureGates()
	s, err := newSim(&spec)
	if err != nil {
		fail("%v", err)
	}
	setup := time.Since(started)
	if err := s.run(spec.Horizon); err != nil {
		fail("%v", err)
	}
	result := output{
		KueueVersion: *version,
		Workloads:    s.records,
		Borrowed:     s.borrowed,
		EndSeconds:   seconds(s.clock.Now()),
		Stalled:      s.stalled,
		Livelocked:   s.livelocked,
		Cycles:       s.cycles,
	}
	if result.Stalled == nil {
		result.Stalled = []float64{}
	}
	if result.Livelocked == nil {
		result.Livelocked = []float64{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	if err := enc.Encode(result); err != nil {
		fail("encoding the output: %v", err)
	}
	if err := writeAll(*out, buf.Bytes()); err != nil {
		fail("writing the output: %v", err)
	}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage) // Maxrss in KiB on Linux
	total := time.Since(started)
	fmt.Fprintf(os.Stderr, "kueuesim: %d workloads, %d cycles, setup %.2fs, total %.2fs, %.0f workloads/s, heap peak %d MiB, max RSS %d MiB\n",
		len(spec.Workloads), s.cycles, setup.Seconds(), total.Seconds(),
		float64(len(spec.Workloads))/total.Seconds(), mem.HeapSys>>20, usage.Maxrss>>10)
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

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kueuesim: "+format+"\n", args...)
	os.Exit(2)
}

func readAll(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	return os.ReadFile(path)
}

func writeAll(path string, data []byte) error {
	if path == "-" {
		_, err := os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func newScheme() *apiruntime.Scheme {
	// Only the kinds Kueue reads here: the fake API's field manager builds a REST mapping of the
	// whole scheme on every patch, so the client-go scheme's hundreds of kinds cost most of a cycle.
	scheme := apiruntime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(schedulingv1.AddToScheme(scheme))
	utilruntime.Must(nodev1.AddToScheme(scheme))
	utilruntime.Must(kueue.AddToScheme(scheme))
	utilruntime.Must(kueuev1beta1.AddToScheme(scheme))
	return scheme
}

// decode turns one object of the revision into its v1beta2 form (through Kueue's own conversion
// for a kind that has one; ResourceFlavor and WorkloadPriorityClass are the same in both).
func decode(scheme *apiruntime.Scheme, raw json.RawMessage) (client.Object, error) {
	var meta metav1.TypeMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil {
		return nil, err
	}
	obj, err := scheme.New(gv.WithKind(meta.Kind))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", meta.APIVersion, meta.Kind, err)
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return nil, fmt.Errorf("%s %s: %v", meta.APIVersion, meta.Kind, err)
	}
	if gv.Group != hubVersion.Group || gv.Version == hubVersion.Version {
		return obj.(client.Object), nil
	}
	hub, err := scheme.New(hubVersion.WithKind(meta.Kind))
	if err != nil {
		return nil, err
	}
	if convertible, ok := obj.(conversion.Convertible); ok {
		if err := convertible.ConvertTo(hub.(conversion.Hub)); err != nil {
			return nil, fmt.Errorf("converting %s %s: %v", meta.APIVersion, meta.Kind, err)
		}
	} else {
		var generic map[string]any
		if err := json.Unmarshal(raw, &generic); err != nil {
			return nil, err
		}
		generic["apiVersion"] = hubVersion.String()
		again, _ := json.Marshal(generic)
		if err := json.Unmarshal(again, hub); err != nil {
			return nil, err
		}
	}
	hub.GetObjectKind().SetGroupVersionKind(hubVersion.WithKind(meta.Kind))
	return hub.(client.Object), nil
}

// applyAsMerge stands in for server-side apply on a Workload's status, which the fake client
// does not implement for subresources: the body Kueue applies is its whole view of the fields it
// owns, so a field it owns and leaves out (admission, requeueState) is removed, as apply would.
func applyAsMerge(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if patch.Type() != types.ApplyPatchType {
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}
	body, err := patch.Data(obj)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return err
	}
	if status, ok := doc["status"].(map[string]any); ok {
		for _, owned := range []string{"admission", "requeueState"} {
			if _, set := status[owned]; !set {
				status[owned] = nil
			}
		}
	}
	merged, _ := json.Marshal(doc)
	kept := make([]client.SubResourcePatchOption, 0, len(opts))
	for _, o := range opts {
		if o != client.ForceOwnership {
			kept = append(kept, o)
		}
	}
	return c.SubResource(sub).Patch(ctx, obj, client.RawPatch(types.MergePatchType, merged), kept...)
}

var workloads = hubVersion.WithResource("workloads")

// applyStatus is server-side apply of a Workload's status by Kueue, on the stored object itself
// (no JSON): the body Kueue applies is its whole view of the fields it owns, so conditions,
// admission and requeueState are taken as they are (left out: removed, as apply removes a field
// its manager owned and no longer sets), and any other status field it sets replaces the stored
// one. A body naming a resourceVersion must name the stored one (Kueue's strict apply).
func (s *sim) applyStatus(body *kueue.Workload) error {
	s.applyMu.Lock()
	defer s.applyMu.Unlock()
	found, err := s.tracker.Get(workloads, body.Namespace, body.Name)
	if err != nil {
		return err
	}
	stored := found.(*kueue.Workload)
	if body.ResourceVersion != "" && body.ResourceVersion != stored.ResourceVersion {
		return apierrors.NewConflict(workloads.GroupResource(), body.Name, fmt.Errorf("the object has been modified"))
	}
	src := reflect.ValueOf(&body.DeepCopy().Status).Elem()
	dst := reflect.ValueOf(&stored.Status).Elem()
	for i := range src.NumField() {
		switch name := src.Type().Field(i).Name; {
		case name == "Conditions" || name == "Admission" || name == "RequeueState" || !src.Field(i).IsZero():
			dst.Field(i).Set(src.Field(i))
		}
	}
	// The API keeps times to the second (RFC 3339 in JSON): so does this store, or ties Kueue
	// breaks by time would break otherwise than on a cluster.
	for i := range stored.Status.Conditions {
		stored.Status.Conditions[i].LastTransitionTime = stored.Status.Conditions[i].LastTransitionTime.Rfc3339Copy()
	}
	if rs := stored.Status.RequeueState; rs != nil && rs.RequeueAt != nil {
		at := rs.RequeueAt.Rfc3339Copy()
		rs.RequeueAt = &at
	}
	rv, _ := strconv.Atoi(stored.ResourceVersion)
	stored.ResourceVersion = strconv.Itoa(rv + 1)
	if err := s.tracker.Update(workloads, stored, stored.Namespace); err != nil {
		return err
	}
	stored.DeepCopyInto(body)
	return nil
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

		namespaces:   map[string]*corev1.Namespace{},
		preemptedNow: map[[2]int]int{},
		heldNow:      map[string]bool{},
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
	mark := func(obj client.Object) {
		if _, ok := obj.(*kueue.Workload); ok {
			s.dirtyMu.Lock()
			s.dirty[client.ObjectKeyFromObject(obj)] = true
			s.dirtyMu.Unlock()
		}
	}
	// A plain object tracker: the field-managed one the fake client defaults to keeps managed
	// fields on every write, which Kueue never reads here, at half the cost of a status patch.
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	s.tracker = tracker
	s.client = fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker).
		WithIndex(&kueue.LocalQueue{}, indexer.QueueClusterQueueKey, indexer.IndexQueueClusterQueue).
		WithIndex(&kueue.Workload{}, indexer.WorkloadQueueKey, indexer.IndexWorkloadQueue).
		WithIndex(&kueue.Workload{}, indexer.WorkloadClusterQueueKey, indexer.IndexWorkloadClusterQueue).
		WithObjects(objects...).
		WithStatusSubresource(&kueue.Workload{}, &kueue.ClusterQueue{}, &kueue.LocalQueue{}).
		WithInterceptorFuncs(interceptor.Funcs{
			// Workloads and Namespaces, which Kueue's queue manager reads at every requeue, are
			// answered without the fake client's JSON copy: a Workload as the store copies it, a
			// Namespace as the revision has it.
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				switch into := obj.(type) {
				case *kueue.Workload:
					found, err := s.tracker.Get(workloads, key.Namespace, key.Name)
					if err != nil {
						return err
					}
					*into = *found.(*kueue.Workload) // the tracker's copy, taken as it is
					return nil
				case *corev1.Namespace:
					// Nothing writes a Namespace during a simulation, and Kueue only matches its
					// labels: the revision's are kept as read (a shallow copy shares their maps).
					if ns, ok := s.namespaces[key.Name]; ok {
						*into = *ns
						return nil
					}
					return c.Get(ctx, key, obj, opts...) // none such: the store says NotFound
				default:
					return c.Get(ctx, key, obj, opts...)
				}
			},
			// LimitRanges, which Kueue lists in the Workload's namespace at every requeue to
			// adjust its requests (by an index of its own): none in the namespace is an empty
			// list whatever the selector, answered from the store without the fake client's
			// JSON round trip.
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if into, ok := list.(*corev1.LimitRangeList); ok {
					o := (&client.ListOptions{}).ApplyOptions(opts)
					found, err := s.tracker.List(corev1.SchemeGroupVersion.WithResource("limitranges"),
						corev1.SchemeGroupVersion.WithKind("LimitRange"), o.Namespace)
					if err != nil {
						return err
					}
					if items := found.(*corev1.LimitRangeList); len(items.Items) == 0 {
						*into = *items
						return nil
					}
				}
				return c.List(ctx, list, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				var err error
				if wl, ok := obj.(*kueue.Workload); ok && sub == "status" && patch.Type() == types.ApplyPatchType {
					err = s.applyStatus(wl)
				} else {
					err = applyAsMerge(ctx, c, sub, obj, patch, opts...)
				}
				if err == nil {
					mark(obj)
				}
				return err
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				err := c.SubResource(sub).Update(ctx, obj, opts...)
				if err == nil {
					mark(obj)
				}
				return err
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				err := c.Patch(ctx, obj, patch, opts...)
				if err == nil {
					mark(obj)
				}
				return err
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				err := c.Update(ctx, obj, opts...)
				if err == nil {
					mark(obj)
				}
				return err
			},
		}).Build()

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

func already(err error) bool { return strings.Contains(err.Error(), "already exists") }

type synchronous struct{}

func (synchronous) Run(f func()) { f() }

// sortObjects puts the revision's objects in a stable order (by kind, namespace, name), so that
// the caches are filled the same way whatever order the repository listed them in.
func sortObjects(objects []client.Object) {
	sort.SliceStable(objects, func(i, j int) bool {
		a, b := objects[i], objects[j]
		ka, kb := fmt.Sprintf("%T", a), fmt.Sprintf("%T", b)
		if ka != kb {
			return ka < kb
		}
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
}

func (s *sim) push(t timer) {
	t.seq = s.seq
	s.seq++
	i, _ := slices.BinarySearchFunc(s.timers, t, func(a, b timer) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	s.timers = slices.Insert(s.timers, i, t)
}

func (s *sim) run(horizon *float64) error {
	for len(s.timers) > 0 {
		now := s.timers[0].at
		if horizon != nil && now.After(at(*horizon)) {
			break
		}
		s.clock.SetTime(now)
		for len(s.timers) > 0 && s.timers[0].at.Equal(now) {
			t := s.timers[0]
			s.timers = s.timers[1:]
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
		if s.hasHeads() && (s.pace == nil || s.pace.due(s)) {
			if s.livelock {
				s.livelocked = append(s.livelocked, seconds(s.clock.Now()))
				return nil
			}
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
	wl.CreationTimestamp = metav1.NewTime(s.records[i].submitted.Add(time.Duration(i)))
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
			if old == nil {
				s.workloads.Create(event.TypedCreateEvent[*kueue.Workload]{Object: now.DeepCopy()})
			} else {
				s.workloads.Update(event.TypedUpdateEvent[*kueue.Workload]{ObjectOld: old.DeepCopy(), ObjectNew: now.DeepCopy()})
			}
			if err := s.stopIfEvicted(now); err != nil {
				return err
			}
		}
	}
}

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
		s.livelock = true
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
			CreationTimestamp: metav1.NewTime(s.records[i].submitted),
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
