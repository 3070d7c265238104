// The cluster's API, in memory: the revision's objects decoded into the hub version through
// Kueue's own conversion, controller-runtime's fake client over them, and Kueue's server-side
// applies of a Workload's status taken as apply takes them.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
)

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
	src := reflect.ValueOf(body.Status.DeepCopy()).Elem()
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
	*body = *stored // the tracker keeps a copy of its own; this one is no one else's
	return nil
}

func already(err error) bool { return strings.Contains(err.Error(), "already exists") }

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

// newClient is the cluster's API, in memory: controller-runtime's fake client over a plain
// object tracker holding the revision's objects, with Kueue's field indexes, and interceptors
// that mark each written Workload for the informer (deliver) and answer Kueue's hottest reads
// from the store.
func (s *sim) newClient(scheme *apiruntime.Scheme, objects []client.Object) client.Client {
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
	return fake.NewClientBuilder().WithScheme(scheme).WithObjectTracker(tracker).
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
			// JSON round trip (for each of the revision's Namespaces, once at the start: nothing
			// writes a LimitRange during a simulation).
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				o := (&client.ListOptions{}).ApplyOptions(opts)
				if s.listIndexed(list, o) {
					return nil
				}
				if into, ok := list.(*corev1.LimitRangeList); ok {
					if none, ok := s.noLimitRanges[o.Namespace]; ok {
						*into = *none
						return nil
					}
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
}

// localQueuesByClusterQueue is the revision's LocalQueues as the store holds them, by the
// ClusterQueue Kueue's index names for each, in the store's order (namespace, name).
func (s *sim) localQueuesByClusterQueue() (map[string][]*kueue.LocalQueue, error) {
	found, err := s.tracker.List(hubVersion.WithResource("localqueues"), hubVersion.WithKind("LocalQueue"), "")
	if err != nil {
		return nil, err
	}
	byCQ := map[string][]*kueue.LocalQueue{}
	for i := range found.(*kueue.LocalQueueList).Items {
		lq := &found.(*kueue.LocalQueueList).Items[i]
		for _, cq := range indexer.IndexQueueClusterQueue(lq) {
			byCQ[cq] = append(byCQ[cq], lq)
		}
	}
	return byCQ, nil
}

// listIndexed answers, without the fake client's JSON round trip of every object of the kind,
// the Lists Kueue's caches make when a ClusterQueue or LocalQueue is added: a ClusterQueue's
// LocalQueues (nothing writes a LocalQueue during a simulation: the revision's, copied), and
// Workloads by queue or ClusterQueue when the store has none yet (an empty list). Anything else
// (false) goes through the fake client. With 1,000 ClusterQueues of a LocalQueue each, those
// lists were half a minute of JSON before the first event.
func (s *sim) listIndexed(list client.ObjectList, o *client.ListOptions) bool {
	if o.LabelSelector != nil || o.FieldSelector == nil {
		return false
	}
	reqs := o.FieldSelector.Requirements()
	if len(reqs) != 1 || (reqs[0].Operator != selection.Equals && reqs[0].Operator != selection.DoubleEquals) {
		return false
	}
	field, value := reqs[0].Field, reqs[0].Value
	switch into := list.(type) {
	case *kueue.LocalQueueList:
		if field != indexer.QueueClusterQueueKey || s.localQueues == nil {
			return false
		}
		*into = kueue.LocalQueueList{}
		into.SetGroupVersionKind(hubVersion.WithKind("LocalQueueList"))
		for _, lq := range s.localQueues[value] {
			if o.Namespace == "" || lq.Namespace == o.Namespace {
				item := lq.DeepCopy()
				item.SetGroupVersionKind(hubVersion.WithKind("LocalQueue"))
				into.Items = append(into.Items, *item)
			}
		}
		return true
	case *kueue.WorkloadList:
		if field != indexer.WorkloadQueueKey && field != indexer.WorkloadClusterQueueKey {
			return false
		}
		found, err := s.tracker.List(workloads, hubVersion.WithKind("Workload"), o.Namespace)
		if err != nil || len(found.(*kueue.WorkloadList).Items) > 0 {
			return false
		}
		*into = kueue.WorkloadList{}
		into.SetGroupVersionKind(hubVersion.WithKind("WorkloadList"))
		return true
	}
	return false
}

// namespacesWithoutLimitRanges finds, for each of the revision's Namespaces with no LimitRange,
// the empty list the store answers (read-only afterwards, by the List interceptor).
func (s *sim) namespacesWithoutLimitRanges() error {
	for name := range s.namespaces {
		found, err := s.tracker.List(corev1.SchemeGroupVersion.WithResource("limitranges"),
			corev1.SchemeGroupVersion.WithKind("LimitRange"), name)
		if err != nil {
			return err
		}
		if items := found.(*corev1.LimitRangeList); len(items.Items) == 0 {
			s.noLimitRanges[name] = items
		}
	}
	return nil
}
