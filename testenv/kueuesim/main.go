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
// "localQueue", "priorityClass", "requests", "podCount", "submittedAt", "runSeconds", and for a
// live start "createdAt", "admittedAt", "admission"}], "waitForPodsReady": the Configuration's}.
// Output (stdout or -out): JSON, one record per Workload in trace order with what happened to it
// and when (trace seconds), and each ClusterQueue's borrowed GPUs over time. Deterministic: the
// same input gives the same bytes. Timings go to stderr.
//
// The files, one job each (this one only reads the flags, runs and writes):
//
//	trace.go      the input and the output: traced Workloads, what happened to each, trace time
//	settings.go   what was simulated: every gate's value, the scheduler settings as the release defaults them
//	sim.go        Kueue's own components wired as its manager wires them, and the feature gates
//	api.go        the cluster's API in memory: the revision's objects, Kueue's status applies
//	clock.go      the logical clock: events, each instant settled, requeue batches, the scheduler loop
//	informer.go   each change handed to Kueue's workload handlers; what the report notes of it
//	jobs.go       the job controller's part: submit, finish after the run time, stop when evicted
//	internals.go  every private field and function of Kueue the program reaches, with the
//	              releases it was read from
//	release_v0_<minor>.go  what differs between the linked releases' public APIs
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// kueueLog is where Kueue's own logging goes: nowhere, unless -v asks for it.
var kueueLog = logr.Discard()

func main() {
	in := flag.String("in", "-", "input JSON file (- for stdin)")
	out := flag.String("out", "-", "output JSON file (- for stdout)")
	version := flag.String("kueue-version", "", "the Kueue release this was built from (for the output)")
	profile := flag.String("cpuprofile", "", "write a CPU profile here (for bench/replay)")
	memProfile := flag.String("memprofile", "", "write a heap profile (what was allocated, and where) here at the end")
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
	if os.Getenv("GOMEMLIMIT") == "" {
		// ... but not past 1 GiB and 20 KiB a Workload (a soft limit: the collector runs
		// sooner near it). Kueue's large-scale harness (50,000 Workloads) keeps about 1 GiB
		// live: under a flat 1 GiB the collector ran without pause, 36 % of the CPU, and the
		// side took 93 s; under 2 GiB, 56 s.
		debug.SetMemoryLimit(1<<30 + int64(len(spec.Workloads))*20<<10)
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
	stamp, err := settingsOf(&spec, s)
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
		Simulated:    stamp,
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
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err != nil {
			fail("%v", err)
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fail("%v", err)
		}
		f.Close()
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
