package informer

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource names what a shared informer watches. Two requests for the same
// Resource (and Go type) share one informer.
type Resource struct {
	GVR           schema.GroupVersionResource
	Namespace     string // "" for all namespaces
	LabelSelector string
	FieldSelector string
}

// String describes the resource the way kubectl names it, with its scope:
// `configmaps`, `deployments.apps in namespace "web"`, `secrets with labels "a=b"`.
// Errors and logs use it, so two informers for one resource in two namespaces can be
// told apart.
func (r Resource) String() string {
	var b strings.Builder
	b.WriteString(r.GVR.Resource)
	if r.GVR.Group != "" {
		b.WriteString("." + r.GVR.Group)
	}
	if r.Namespace != "" {
		fmt.Fprintf(&b, " in namespace %q", r.Namespace)
	}
	if r.LabelSelector != "" {
		fmt.Fprintf(&b, " with labels %q", r.LabelSelector)
	}
	if r.FieldSelector != "" {
		fmt.Fprintf(&b, " with fields %q", r.FieldSelector)
	}
	return b.String()
}

// metricsName is the name a Factory gives the informer's metrics: the resource, with
// its group after a dot when that is not the core group — `configmaps`, `events`
// (core) and `events.events.k8s.io`, `deployments.apps`. One name per
// GroupVersionResource but for the version: two versions of one resource are one
// resource to the apiserver, so they share a name (the Factory publishes the first).
//
// client-go 1.37 names an informer's metrics by an InformerName the caller registers
// once per process (NewInformerName, refused when taken) together with the informer's
// GroupVersionResource (InformerName.WithResource): the name and the GVR are separate
// labels. Ours has no process-wide registry (no package-level state): the Factory
// checks names among its own informers only.
//
// client-go: tools/cache/identity.go InformerName.WithResource
func (r Resource) metricsName() string {
	if r.GVR.Group == "" {
		return r.GVR.Resource
	}
	return r.GVR.Resource + "." + r.GVR.Group
}

// logAttrs are the scope attributes a Factory informer's log lines carry besides
// informer=<resource>: namespace and selectors, only when set.
func (r Resource) logAttrs() []any {
	var attrs []any
	for _, kv := range [][2]string{{"namespace", r.Namespace}, {"labelSelector", r.LabelSelector}, {"fieldSelector", r.FieldSelector}} {
		if kv[1] != "" {
			attrs = append(attrs, kv[0], kv[1])
		}
	}
	return attrs
}

// checkType returns an error when the scheme says obj's Go type cannot be what the
// resource serves: obj is not registered, it belongs to another group/version, or
// another kind of that group/version is the one whose plural is the resource's name
// (For[*corev1.Secret] on configmaps).
//
// Why: the JSON of one kind decodes into the struct of another without an error —
// unknown fields are dropped — so the mistake would show up only as empty objects or
// a cache that never syncs.
//
// Simplified: the apiserver's discovery is the only full map from resources to kinds,
// and For makes no request. The scheme's kinds, pluralised the way the API machinery
// guesses (meta.UnsafeGuessKindToResource, or the lowercase kind for names such as
// Endpoints), catch every mismatch between kinds the scheme knows; a resource whose
// plural matches no kind of the group/version (an irregular custom plural) is accepted.
func checkType(scheme *runtime.Scheme, obj runtime.Object, gvr schema.GroupVersionResource) error {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return fmt.Errorf("%w: %v is not registered in FactoryOptions.Scheme: %w", ErrWrongType, reflect.TypeOf(obj), err)
	}
	var inGV []string
	for _, gvk := range gvks {
		if gvk.GroupVersion() == gvr.GroupVersion() {
			if servesResource(gvk, gvr.Resource) {
				return nil
			}
			inGV = append(inGV, gvk.Kind)
		}
	}
	if len(inGV) == 0 {
		return fmt.Errorf("%w: %v is %s, but the resource is in %s", ErrWrongType, reflect.TypeOf(obj), gvks[0].GroupVersion(), gvr.GroupVersion())
	}
	for gvk := range scheme.AllKnownTypes() {
		if gvk.GroupVersion() == gvr.GroupVersion() && servesResource(gvk, gvr.Resource) {
			return fmt.Errorf("%w: %s holds %s objects, not %s (%v)", ErrWrongType, gvr.Resource, gvk.Kind, inGV[0], reflect.TypeOf(obj))
		}
	}
	return nil
}

// servesResource reports whether resource is kind's plural as the API machinery guesses
// it, or its lowercase name (Endpoints → endpoints).
func servesResource(gvk schema.GroupVersionKind, resource string) bool {
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.Resource == resource || strings.ToLower(gvk.Kind) == resource
}
