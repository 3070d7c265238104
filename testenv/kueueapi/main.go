// Command kueueapi prints, as JSON, what kueue-gitops needs to know about the pinned Kueue's
// own code: a JSON Schema of its Configuration (config.kueue.x-k8s.io), derived by reflection
// from the Go types Kueue decodes its configuration file into (strictly: an unknown field stops
// Kueue); the job frameworks it can integrate, each with the kind and resource it manages; and
// its feature gates, each with its default and stage (what the Configuration's featureGates may
// name); and the verdicts of its validating webhooks (webhooks.go).
//
// `kueue-gitops sandbox kueue-api --write` runs it in each pinned release's module and stores
// the result, with what the release's CRDs say, under auditor/kueue/api/<release>.json.
package main

import (
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs" // registers every built-in framework
	_ "sigs.k8s.io/kueue/pkg/features"        // registers Kueue's feature gates
)

type schema = map[string]any

var (
	durationType = reflect.TypeOf(time.Duration(0))
	textType     = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	jsonType     = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
)

// typeSchema is the JSON Schema of what encoding/json (as Kubernetes' strict decoder uses it)
// accepts for t. Types that decode themselves are described by what they marshal to.
func typeSchema(t reflect.Type, seen map[reflect.Type]bool) schema {
	switch t.String() {
	case "v1.Duration": // metav1.Duration: "1m30s"
		return schema{"type": "string"}
	case "resource.Quantity":
		return schema{"type": []string{"string", "number"}}
	case "v1.Time", "runtime.RawExtension":
		return schema{}
	}
	if t == durationType {
		return schema{"type": "integer"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(typeSchema(t.Elem(), seen))
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return schema{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return schema{"type": "number"}
	case reflect.String:
		return schema{"type": "string"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nullable(schema{"type": "string"}) // base64
		}
		return nullable(schema{"type": "array", "items": typeSchema(t.Elem(), seen)})
	case reflect.Map:
		return nullable(schema{"type": "object", "additionalProperties": typeSchema(t.Elem(), seen)})
	case reflect.Interface:
		return schema{}
	case reflect.Struct:
		if reflect.PointerTo(t).Implements(jsonType) || reflect.PointerTo(t).Implements(textType) {
			return schema{} // decodes itself: nothing to say about its shape
		}
		if seen[t] {
			return schema{}
		}
		seen[t] = true
		defer delete(seen, t)
		props := schema{}
		addFields(t, props, seen)
		return schema{"type": "object", "additionalProperties": false, "properties": props}
	}
	panic(fmt.Sprintf("no schema for %s (%s)", t, t.Kind()))
}

// addFields adds the JSON fields of struct t; anonymous fields without a JSON name are inlined,
// as encoding/json does (this is what `json:",inline"` amounts to).
func addFields(t reflect.Type, props schema, seen map[reflect.Type]bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name := strings.Split(tag, ",")[0]
		if f.Anonymous && name == "" {
			inner := f.Type
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				addFields(inner, props, seen)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		props[name] = typeSchema(f.Type, seen)
	}
}

func nullable(s schema) schema {
	if kind, ok := s["type"].(string); ok {
		s["type"] = []string{kind, "null"}
	}
	return s
}

type framework struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Kind     string `json:"kind"`
	Resource string `json:"resource"`
}

func frameworks() map[string]framework {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	out := map[string]framework{}
	err := jobframework.ForEachIntegration(func(name string, cb jobframework.IntegrationCallbacks) error {
		if cb.AddToScheme != nil {
			if err := cb.AddToScheme(scheme); err != nil {
				return err
			}
		}
		gvk, err := apiutil.GVKForObject(cb.JobType, scheme)
		if err != nil {
			return fmt.Errorf("framework %s: %w", name, err)
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		out[name] = framework{gvk.Group, gvk.Version, gvk.Kind, plural.Resource}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return out
}

type gate struct {
	Default bool   `json:"default"`
	Stage   string `json:"stage"`            // ALPHA, BETA, "" (GA) or DEPRECATED
	Locked  bool   `json:"locked,omitempty"` // may not be set to anything but its default
}

// featureGates are the gates the release's binary accepts (in its Configuration's featureGates
// or --feature-gates; any other name stops it), as it starts without either.
func featureGates() map[string]gate {
	out := map[string]gate{}
	for name, spec := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		out[string(name)] = gate{
			utilfeature.DefaultFeatureGate.Enabled(name), string(spec.PreRelease), spec.LockToDefault,
		}
	}
	return out
}

// configGroupVersion is the apiVersion Kueue's Configuration file is written in.
func configGroupVersion() string {
	scheme := runtime.NewScheme()
	if err := addConfigToScheme(scheme); err != nil {
		panic(err)
	}
	gvk, err := apiutil.GVKForObject(&configuration{}, scheme)
	if err != nil {
		panic(err)
	}
	return gvk.GroupVersion().String()
}

// kueueVersion is the version of the Kueue module this program was built with.
func kueueVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "sigs.k8s.io/kueue" {
				return dep.Version
			}
		}
	}
	panic("sigs.k8s.io/kueue is not in the build info")
}

func main() {
	probeFile := flag.String("probes", "", "a JSON file of objects, by id, for the webhooks to judge")
	flag.Parse()
	config := typeSchema(reflect.TypeOf(configuration{}), map[reflect.Type]bool{})
	props := config["properties"].(schema)
	props["apiVersion"] = schema{"const": configGroupVersion()}
	props["kind"] = schema{"const": "Configuration"}
	found := frameworks()
	names := make([]string, 0, len(found))
	for name := range found {
		names = append(names, name)
	}
	sort.Strings(names)
	integrations := props["integrations"].(schema)["properties"].(schema)
	integrations["frameworks"].(schema)["items"] = schema{"enum": names}
	config["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	config["title"] = "Kueue " + kueueVersion() + " Configuration (" + configGroupVersion() + ")"
	config["required"] = []string{"apiVersion", "kind"}
	out := schema{
		"kueue":         kueueVersion(),
		"configuration": config,
		"frameworks":    found,
		"featureGates":  featureGates(),
		"webhooks": schema{
			"probes": probes(*probeFile), "limits": limits(), "immutable": immutables(),
		},
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
