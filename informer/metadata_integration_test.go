package informer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/indexer"
	"github.com/kubeinternals/informers/informer"
)

// Metadata-only informers of a built-in resource and of a custom resource, in
// protobuf (the Factory's choice) and in JSON, hold what the apiserver holds: every
// object's key, resourceVersion and labels, through creates, updates and deletes.
func TestIntegrationMetadataInformersOfABuiltInAndACustomResource(t *testing.T) {
	env, _, ctx := integrationEnv(t)
	postCRD(t, ctx, env.Config, "meta.example.com", "gadgets", "gadget", "Gadget")
	core := client(t, env.Config, corev1.SchemeGroupVersion)
	gadgets := client(t, env.Config, schema.GroupVersion{Group: "meta.example.com", Version: "v1"})
	eventually(t, ctx, "the CRD is served", func() bool {
		return gadgets.Get().Namespace("default").Resource("gadgets").Do(ctx).Error() == nil
	})
	for i := range 5 {
		post(t, ctx, core, "default", "configmaps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("meta-%d", i), "labels": map[string]any{"n": fmt.Sprint(i)}},
			"data":     map[string]any{"big": "not in the metadata"}})
		post(t, ctx, gadgets, "default", "gadgets", map[string]any{"apiVersion": "meta.example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": fmt.Sprintf("g-%d", i), "labels": map[string]any{"n": fmt.Sprint(i)}},
			"spec":     map[string]any{"size": i}})
	}

	resources := map[string]struct {
		res    informer.Resource
		client *rest.RESTClient
	}{
		"configmaps": {informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "default"}, core},
		"gadgets":    {informer.Resource{GVR: schema.GroupVersionResource{Group: "meta.example.com", Version: "v1", Resource: "gadgets"}, Namespace: "default"}, gadgets},
	}
	type synced struct {
		wire string
		infs map[string]*informer.SharedIndexInformer[*metav1.PartialObjectMetadata]
	}
	var all []synced
	for _, wire := range []string{"protobuf", "JSON"} {
		f := informer.NewFactory(env.Config, informer.FactoryOptions{JSON: wire == "JSON"})
		t.Cleanup(f.Shutdown)
		infs := map[string]*informer.SharedIndexInformer[*metav1.PartialObjectMetadata]{}
		for name, r := range resources {
			inf, err := informer.For[*metav1.PartialObjectMetadata](f, r.res)
			require.NoError(t, err, "no Scheme is needed for metadata")
			infs[name] = inf
		}
		f.Start(ctx)
		require.NoError(t, f.WaitForCacheSync(ctx), "%s: the apiserver served the metadata of both", wire)
		for name, inf := range infs {
			eventually(t, ctx, wire+" "+name+" matches the server", matchesServer(ctx, resources[name].client, name, inf.Indexer()))
			key := map[string]string{"configmaps": "default/meta-3", "gadgets": "default/g-3"}[name]
			obj, ok, _ := inf.Indexer().GetByKey(key)
			require.True(t, ok)
			assert.Equal(t, "3", obj.Labels["n"])
			assert.NotEmpty(t, obj.UID)
		}
		all = append(all, synced{wire, infs})
	}

	// Changes after both factories synced: a label change and a delete of each kind.
	for name, r := range resources {
		prefix := map[string]string{"configmaps": "meta-", "gadgets": "g-"}[name]
		patch := []byte(`{"metadata":{"labels":{"n":"changed"}}}`)
		require.NoError(t, r.client.Patch("application/merge-patch+json").Namespace("default").Resource(name).Name(prefix+"0").Body(patch).Do(ctx).Error())
		require.NoError(t, r.client.Delete().Namespace("default").Resource(name).Name(prefix+"1").Do(ctx).Error())
	}
	for _, s := range all {
		for name, inf := range s.infs {
			eventually(t, ctx, s.wire+" "+name+" follows the label change and the delete", matchesServer(ctx, resources[name].client, name, inf.Indexer()))
		}
	}
}

// matchesServer reports whether cache holds exactly the objects of resource in
// "default": the same keys, resourceVersions and labels, read through a full LIST.
func matchesServer(ctx context.Context, c *rest.RESTClient, resource string, cache indexer.Indexer[*metav1.PartialObjectMetadata]) func() bool {
	return func() bool {
		body, err := c.Get().Namespace("default").Resource(resource).
			SetHeader("Accept", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1").Do(ctx).Raw()
		var list metav1.PartialObjectMetadataList
		if err != nil || json.Unmarshal(body, &list) != nil {
			return false
		}
		want := map[string]string{}
		for _, o := range list.Items {
			want[o.Namespace+"/"+o.Name] = o.ResourceVersion + fmt.Sprint(o.Labels)
		}
		got := map[string]string{}
		for _, o := range cache.List() {
			got[o.Namespace+"/"+o.Name] = o.ResourceVersion + fmt.Sprint(o.Labels)
		}
		return maps.Equal(want, got)
	}
}
