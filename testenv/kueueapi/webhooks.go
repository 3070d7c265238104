package main

// The release's own validating webhooks, run in this process: on the objects kueue-gitops sends
// (-probes FILE, {"<id>": object}: each of its webhook rules' passing and failing examples), on
// ClusterQueues grown until the webhook refuses them, which finds the limits on counts the
// release enforces, and on updates that change one spec field each, which finds the fields it
// holds immutable. Nothing is judged by hand here: the verdicts are Kueue's code's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validator pairs a kind's Go type with the webhook that validates it. ValidateCreate takes
// the typed object (from v0.15) or a runtime.Object (before): reflection calls either.
type validator struct {
	newObject func() any
	webhook   any
}

type fieldError struct {
	Field  string `json:"field,omitempty"`
	Type   string `json:"type,omitempty"`
	Detail string `json:"detail"`
}

type verdict struct {
	Webhook bool         `json:"webhook"` // false: the release has no webhook for the kind
	Errors  []fieldError `json:"errors"`
}

func judge(obj map[string]any) verdict {
	kind, _ := obj["kind"].(string)
	v, ok := validators[kind]
	if !ok {
		return verdict{Webhook: false, Errors: []fieldError{}}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	typed := v.newObject()
	if err := json.Unmarshal(raw, typed); err != nil {
		panic(fmt.Sprintf("a %s probe does not decode: %v", kind, err))
	}
	method := reflect.ValueOf(v.webhook).MethodByName("ValidateCreate")
	out := method.Call([]reflect.Value{reflect.ValueOf(context.Background()), reflect.ValueOf(typed)})
	found := []fieldError{}
	if err, _ := out[1].Interface().(error); err != nil {
		found = flatten(err)
	}
	return verdict{Webhook: true, Errors: found}
}

func flatten(err error) []fieldError {
	var each []error
	var agg interface{ Errors() []error }
	if errors.As(err, &agg) {
		each = agg.Errors()
	} else {
		each = []error{err}
	}
	out := make([]fieldError, 0, len(each))
	for _, e := range each {
		var fe *field.Error
		if errors.As(e, &fe) {
			out = append(out, fieldError{fe.Field, string(fe.Type), fe.Detail})
		} else {
			out = append(out, fieldError{Detail: e.Error()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field+out[i].Detail < out[j].Field+out[j].Detail })
	return out
}

func probes(path string) map[string]verdict {
	out := map[string]verdict{}
	if path == "" {
		return out
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	objects := map[string]map[string]any{}
	if err := json.Unmarshal(raw, &objects); err != nil {
		panic(err)
	}
	for id, obj := range objects {
		out[id] = judge(obj)
	}
	return out
}

// -- limits on counts -----------------------------------------------------------------------

type limit struct {
	Max    *int   `json:"max"`              // the largest count accepted; null: none found
	Field  string `json:"field,omitempty"`  // where the webhook reports going over it
	Detail string `json:"detail,omitempty"` // in the webhook's words, for one over the limit
}

func names(prefix string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func flavor(name string, resources []any) map[string]any {
	quotas := make([]any, len(resources))
	for i, r := range resources {
		quotas[i] = map[string]any{"name": r, "nominalQuota": "1"}
	}
	return map[string]any{"name": name, "resources": quotas}
}

func queue(groups ...map[string]any) map[string]any {
	list := make([]any, len(groups))
	for i, g := range groups {
		list[i] = g
	}
	return map[string]any{
		"apiVersion": "kueue.x-k8s.io/" + servedVersion,
		"kind":       "ClusterQueue",
		"metadata":   map[string]any{"name": "limit-probe"},
		"spec":       map[string]any{"resourceGroups": list},
	}
}

// One group, one covered resource, n flavors.
func manyFlavors(n int) map[string]any {
	flavors := make([]any, n)
	for i := range flavors {
		flavors[i] = flavor(fmt.Sprintf("f%d", i), []any{"r"})
	}
	return queue(map[string]any{"coveredResources": []any{"r"}, "flavors": flavors})
}

// One group of n covered resources and one flavor.
func manyResources(n int) map[string]any {
	covered := names("r", n)
	return queue(map[string]any{"coveredResources": covered, "flavors": []any{flavor("f", covered)}})
}

// One group of 32 covered resources, n flavor-resource pairs (the last flavor partly filled:
// the webhook leaves a short flavor to the CRD's rule).
func manyPairs(n int) map[string]any {
	covered := names("r", 32)
	flavors := []any{}
	for i := 0; n > 0; i++ {
		take := min(n, len(covered))
		flavors = append(flavors, flavor(fmt.Sprintf("f%d", i), covered[:take]))
		n -= take
	}
	return queue(map[string]any{"coveredResources": covered, "flavors": flavors})
}

const searchCeiling = 1 << 14

// find is the largest n that build(n) passes without an error at field: doubling to the first
// refusal, then bisecting.
func find(build func(int) map[string]any, at string) limit {
	refused := func(n int) (bool, string) {
		for _, e := range judge(build(n)).Errors {
			if e.Field == at {
				return true, e.Detail
			}
		}
		return false, ""
	}
	hi := 1
	for ; hi <= searchCeiling; hi *= 2 {
		if bad, _ := refused(hi); bad {
			break
		}
	}
	if hi > searchCeiling {
		return limit{}
	}
	lo := hi / 2 // accepted (or 0)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if bad, _ := refused(mid); bad {
			hi = mid
		} else {
			lo = mid
		}
	}
	_, detail := refused(hi)
	return limit{Max: &lo, Field: at, Detail: detail}
}

func limits() map[string]limit {
	if _, ok := validators["ClusterQueue"]; !ok {
		return map[string]limit{}
	}
	return map[string]limit{
		"flavors":             find(manyFlavors, "spec.resourceGroups"),
		"coveredResources":    find(manyResources, "spec.resourceGroups"),
		"flavorResourcePairs": find(manyPairs, "spec.resourceGroups[0]"),
	}
}

// -- fields the webhooks hold immutable -------------------------------------------------------

// immutable is a field a release's ValidateUpdate refuses to change, where it reports it.
type immutable struct {
	Field  string `json:"field"`
	Detail string `json:"detail"`
}

// immutables finds, per kind, the spec fields the webhook refuses to change on an update: for
// each field of the kind's spec, the update from the empty object to one with only that field
// filled, judged by the release's ValidateUpdate. Only the errors it states as immutability
// count (apimachinery's FieldImmutableErrorMsg): the filled values are not meant to be valid.
func immutables() map[string][]immutable {
	out := map[string][]immutable{}
	for kind, v := range validators {
		method := reflect.ValueOf(v.webhook).MethodByName("ValidateUpdate")
		spec := reflect.ValueOf(v.newObject()).Elem().FieldByName("Spec")
		if !method.IsValid() || !spec.IsValid() {
			continue
		}
		seen := map[string]bool{}
		for i := range spec.NumField() {
			if !spec.Type().Field(i).IsExported() {
				continue
			}
			old, changed := v.newObject(), v.newObject()
			fill(reflect.ValueOf(changed).Elem().FieldByName("Spec").Field(i), 0)
			args := []reflect.Value{
				reflect.ValueOf(context.Background()), reflect.ValueOf(old), reflect.ValueOf(changed),
			}
			result := method.Call(args)
			err, _ := result[1].Interface().(error)
			if err == nil {
				continue
			}
			for _, e := range flatten(err) {
				if e.Detail == apivalidation.FieldImmutableErrorMsg && !seen[e.Field] {
					seen[e.Field] = true
					out[kind] = append(out[kind], immutable{e.Field, e.Detail})
				}
			}
		}
		sort.Slice(out[kind], func(i, j int) bool { return out[kind][i].Field < out[kind][j].Field })
	}
	return out
}

// fill gives v a value other than its zero: pointers point at a filled value, slices and maps
// hold one filled element, strings "x", numbers 1, booleans true (struct fields recursively,
// a few levels deep; unexported fields are left alone).
func fill(v reflect.Value, depth int) {
	if depth > 6 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), depth+1)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		key, elem := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(key, depth+1)
		fill(elem, depth+1)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(key, elem)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	}
}
