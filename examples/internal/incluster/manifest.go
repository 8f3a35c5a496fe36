package incluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
)

// Parse reads every object of a YAML (or JSON) manifest, documents separated by "---".
func Parse(manifest []byte) ([]*unstructured.Unstructured, error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("manifest document %d: %w", len(objs)+1, err)
		}
		if m == nil { // an empty document, e.g. only comments
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("manifest document %d: apiVersion, kind and metadata.name are required", len(objs)+1)
		}
		objs = append(objs, u)
	}
}

// Find returns the object of that kind and name, or nil.
func Find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// Apply creates each object in order, as `kubectl create -f` does. An object with
// metadata.namespace is created in it; one without is cluster-scoped (our manifests
// always name the namespace of a namespaced object).
func Apply(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	c, err := rawClient(cfg)
	if err != nil {
		return err
	}
	for _, o := range objs {
		body, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		if err := c.Post().AbsPath(collectionPath(o)).Body(body).Do(ctx).Error(); err != nil {
			return fmt.Errorf("create %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// Replace overwrites an existing object with o (a PUT with the current resourceVersion).
func Replace(ctx context.Context, cfg *rest.Config, o *unstructured.Unstructured) error {
	c, err := rawClient(cfg)
	if err != nil {
		return err
	}
	objPath := path.Join(collectionPath(o), o.GetName())
	var cur unstructured.Unstructured
	raw, err := c.Get().AbsPath(objPath).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("get %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	if err := cur.UnmarshalJSON(raw); err != nil {
		return err
	}
	o = o.DeepCopy()
	o.SetResourceVersion(cur.GetResourceVersion())
	body, err := o.MarshalJSON()
	if err != nil {
		return err
	}
	if err := c.Put().AbsPath(objPath).Body(body).Do(ctx).Error(); err != nil {
		return fmt.Errorf("replace %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return nil
}

// collectionPath is the URL path of o's collection, its resource name guessed from the
// kind the way kubectl guesses it without discovery (Deployment → deployments).
func collectionPath(o *unstructured.Unstructured) string {
	gvk := o.GroupVersionKind()
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	p := "/apis/" + gvk.Group + "/" + gvk.Version
	if gvk.Group == "" {
		p = "/api/" + gvk.Version
	}
	if ns := o.GetNamespace(); ns != "" {
		p += "/namespaces/" + ns
	}
	return p + "/" + plural.Resource
}

// rawClient is a REST client for absolute paths; its scheme decodes error replies into
// *apierrors.StatusError.
func rawClient(cfg *rest.Config) (*rest.RESTClient, error) {
	c, _, err := kube.NewRESTClient(cfg, schema.GroupVersion{Version: "v1"}, nil)
	return c, err
}
