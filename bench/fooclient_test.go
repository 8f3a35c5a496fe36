package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/bench/internal/sidebyside"
	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/fooclient"
)

// cannedTransport answers every request with the same JSON body, in memory, so the
// benchmarks measure request building and decoding, not the network.
type cannedTransport struct{ body string }

func (c cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(c.body)),
		Request:    req,
	}, nil
}

func fooJSON(b *testing.B, n int) (one, list string) {
	b.Helper()
	items := make([]v1alpha1.Foo, n)
	for i := range items {
		items[i] = v1alpha1.Foo{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("foo-%d", i), Namespace: "ns", ResourceVersion: fmt.Sprint(100 + i),
				Labels: map[string]string{"app": "bench"}},
			Spec:   v1alpha1.FooSpec{DeploymentName: fmt.Sprintf("foo-%d", i), Replicas: ptr.To[int32](3)},
			Status: v1alpha1.FooStatus{AvailableReplicas: 3},
		}
	}
	o, err := json.Marshal(struct {
		metav1.TypeMeta `json:",inline"`
		v1alpha1.Foo
	}{metav1.TypeMeta{APIVersion: "samplecontroller.k8s.io/v1alpha1", Kind: "Foo"}, items[0]})
	if err != nil {
		b.Fatal(err)
	}
	l, err := json.Marshal(&v1alpha1.FooList{
		TypeMeta: metav1.TypeMeta{APIVersion: "samplecontroller.k8s.io/v1alpha1", Kind: "FooList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "999"}, Items: items,
	})
	if err != nil {
		b.Fatal(err)
	}
	return string(o), string(l)
}

// benchConfig has rate limiting off (QPS < 0): both clients would otherwise sleep in
// client-go's default 5 QPS token bucket.
var benchConfig = rest.Config{Host: "https://apiserver.bench", QPS: -1}

// clientGoFoos builds client-go's generic typed client (what a generated clientset wraps)
// for Foos, over the same scheme, serializer and transport as ours.
func clientGoFoos(b *testing.B, body string) *gentype.ClientWithList[*v1alpha1.Foo, *v1alpha1.FooList] {
	b.Helper()
	scheme, err := fooclient.NewScheme()
	if err != nil {
		b.Fatal(err)
	}
	cfg := benchConfig
	cfg.GroupVersion = &v1alpha1.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc, err := rest.RESTClientForConfigAndClient(&cfg, &http.Client{Transport: cannedTransport{body}})
	if err != nil {
		b.Fatal(err)
	}
	return gentype.NewClientWithList[*v1alpha1.Foo, *v1alpha1.FooList]("foos", rc, runtime.NewParameterCodec(scheme), "ns",
		func() *v1alpha1.Foo { return &v1alpha1.Foo{} }, func() *v1alpha1.FooList { return &v1alpha1.FooList{} })
}

func ourFoos(b *testing.B, body string) fooclient.Foos {
	b.Helper()
	cfg := benchConfig
	c, err := fooclient.NewClient(&cfg, fooclient.Options{HTTPClient: &http.Client{Transport: cannedTransport{body}}})
	if err != nil {
		b.Fatal(err)
	}
	return c.Foos("ns")
}

// BenchmarkTypedClientGet: one GET of a Foo, decoded into a *Foo: our hand-written
// fooclient against client-go's gentype client (what client-gen output delegates to).
//
// Fair: the same canned response through the same in-memory transport, scheme and
// serializer; our fooclient is built on client-go's rest.Interface, so both sides run
// mostly the same client-go code.
//
// Not in the headline: a sanity check of our thin client wrapper, not a comparison
// of two implementations.
func BenchmarkTypedClientGet(b *testing.B) {
	one, _ := fooJSON(b, 1)
	ctx := context.Background()
	get := func(b *testing.B, get func() error) {
		sidebyside.Loop(b, func() {
			if err := get(); err != nil {
				b.Fatal(err)
			}
		})
	}
	sidebyside.Pair(b, func(b *testing.B) {
		foos := ourFoos(b, one)
		get(b, func() error { _, err := foos.Get(ctx, "foo-0", metav1.GetOptions{}); return err })
	}, func(b *testing.B) {
		foos := clientGoFoos(b, one)
		get(b, func() error { _, err := foos.Get(ctx, "foo-0", metav1.GetOptions{}); return err })
	})
}

// BenchmarkTypedClientList100: one LIST with a label selector returning 100 Foos.
//
// Fair: as BenchmarkTypedClientGet, with a list of 100.
//
// Not in the headline: the same client-go code on both sides (a sanity check).
func BenchmarkTypedClientList100(b *testing.B) {
	_, list := fooJSON(b, 100)
	ctx := context.Background()
	opts := metav1.ListOptions{LabelSelector: "app=bench"}
	sidebyside.Pair(b, func(b *testing.B) {
		foos := ourFoos(b, list)
		sidebyside.Loop(b, func() {
			if l, err := foos.List(ctx, opts); err != nil || len(l.Items) != 100 {
				b.Fatal(err, len(l.Items))
			}
		})
	}, func(b *testing.B) {
		foos := clientGoFoos(b, list)
		sidebyside.Loop(b, func() {
			if l, err := foos.List(ctx, opts); err != nil || len(l.Items) != 100 {
				b.Fatal(err, len(l.Items))
			}
		})
	})
}
