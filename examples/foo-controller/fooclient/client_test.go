package fooclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
)

// recorded is one request the fake server saw.
type recorded struct {
	Method string
	Path   string
	Query  map[string][]string
	Body   map[string]any
}

// fakeServer answers every request with the same status and body and records what it saw.
type fakeServer struct {
	mu       sync.Mutex // guards requests
	requests []recorded
	status   int
	body     string
}

func (s *fakeServer) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := recorded{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query()}
	if req.Body != nil {
		raw, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &rec.Body); err != nil {
				return nil, err
			}
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	return &http.Response{
		StatusCode: s.status,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(s.body)),
		Request:    req,
	}, nil
}

func (s *fakeServer) only(t *testing.T) recorded {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.requests, 1)
	return s.requests[0]
}

func newFake(t *testing.T, status int, body string) (*Client, *fakeServer) {
	t.Helper()
	srv := &fakeServer{status: status, body: body}
	c, err := NewClient(&rest.Config{Host: "https://apiserver.test"}, Options{HTTPClient: &http.Client{Transport: srv}})
	require.NoError(t, err)
	return c, srv
}

const storedFoo = `{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo",
 "metadata":{"name":"example-foo","namespace":"ns","resourceVersion":"42","uid":"u-1"},
 "spec":{"deploymentName":"example-foo","replicas":3},"status":{"availableReplicas":2}}`

func newFoo() *v1alpha1.Foo {
	replicas := int32(3)
	return &v1alpha1.Foo{
		ObjectMeta: metav1.ObjectMeta{Name: "example-foo", Namespace: "ns", ResourceVersion: "41"},
		Spec:       v1alpha1.FooSpec{DeploymentName: "example-foo", Replicas: &replicas},
	}
}

const base = "/apis/samplecontroller.k8s.io/v1alpha1"

func TestVerbsBuildTheRightRequests(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		call       func(c *Client) error
		wantMethod string
		wantPath   string
		wantQuery  map[string][]string
		wantKind   string // kind in the request body, "" for none
	}{
		{
			name: "Get reads the named Foo in the namespace",
			call: func(c *Client) error {
				_, err := c.Foos("ns").Get(ctx, "example-foo", metav1.GetOptions{ResourceVersion: "0"})
				return err
			},
			wantMethod: http.MethodGet, wantPath: base + "/namespaces/ns/foos/example-foo",
			wantQuery: map[string][]string{"resourceVersion": {"0"}},
		},
		{
			name: "List with a namespace reads that namespace's collection with the selector",
			call: func(c *Client) error {
				_, err := c.Foos("ns").List(ctx, metav1.ListOptions{LabelSelector: "app=x", Limit: 5})
				return err
			},
			wantMethod: http.MethodGet, wantPath: base + "/namespaces/ns/foos",
			wantQuery: map[string][]string{"labelSelector": {"app=x"}, "limit": {"5"}},
		},
		{
			name: "List without a namespace reads the cluster-wide collection",
			call: func(c *Client) error {
				_, err := c.Foos("").List(ctx, metav1.ListOptions{})
				return err
			},
			wantMethod: http.MethodGet, wantPath: base + "/foos",
			wantQuery: map[string][]string{},
		},
		{
			name: "Create posts the Foo with its apiVersion and kind to the collection",
			call: func(c *Client) error {
				_, err := c.Foos("ns").Create(ctx, newFoo(), metav1.CreateOptions{FieldManager: "fm"})
				return err
			},
			wantMethod: http.MethodPost, wantPath: base + "/namespaces/ns/foos",
			wantQuery: map[string][]string{"fieldManager": {"fm"}}, wantKind: "Foo",
		},
		{
			name: "Update puts the Foo at its name",
			call: func(c *Client) error {
				_, err := c.Foos("ns").Update(ctx, newFoo(), metav1.UpdateOptions{})
				return err
			},
			wantMethod: http.MethodPut, wantPath: base + "/namespaces/ns/foos/example-foo",
			wantQuery: map[string][]string{}, wantKind: "Foo",
		},
		{
			name: "UpdateStatus puts the Foo at its status subresource",
			call: func(c *Client) error {
				_, err := c.Foos("ns").UpdateStatus(ctx, newFoo(), metav1.UpdateOptions{FieldManager: "foo-controller"})
				return err
			},
			wantMethod: http.MethodPut, wantPath: base + "/namespaces/ns/foos/example-foo/status",
			wantQuery: map[string][]string{"fieldManager": {"foo-controller"}}, wantKind: "Foo",
		},
		{
			name: "Delete sends DeleteOptions in the body of a DELETE at the name",
			call: func(c *Client) error {
				policy := metav1.DeletePropagationForeground
				return c.Foos("ns").Delete(ctx, "example-foo", metav1.DeleteOptions{PropagationPolicy: &policy})
			},
			wantMethod: http.MethodDelete, wantPath: base + "/namespaces/ns/foos/example-foo",
			wantQuery: map[string][]string{}, wantKind: "DeleteOptions",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := newFake(t, http.StatusOK, storedFoo)
			require.NoError(t, tt.call(c))
			got := srv.only(t)
			assert.Equal(t, tt.wantMethod, got.Method)
			assert.Equal(t, tt.wantPath, got.Path)
			assert.Equal(t, tt.wantQuery, got.Query)
			if tt.wantKind == "" {
				assert.Nil(t, got.Body)
			} else {
				assert.Equal(t, tt.wantKind, got.Body["kind"])
			}
		})
	}
}

func TestRepliesAreDecodedIntoFreshObjects(t *testing.T) {
	c, _ := newFake(t, http.StatusOK, storedFoo)
	in := newFoo()
	before := in.DeepCopy()

	out, err := c.Foos("ns").Update(context.Background(), in, metav1.UpdateOptions{})
	require.NoError(t, err)

	t.Run("the reply's fields are decoded", func(t *testing.T) {
		assert.Equal(t, "42", out.ResourceVersion)
		assert.Equal(t, int32(2), out.Status.AvailableReplicas)
		require.NotNil(t, out.Spec.Replicas)
		assert.Equal(t, int32(3), *out.Spec.Replicas)
	})
	t.Run("the argument is left unmodified", func(t *testing.T) {
		assert.Equal(t, before, in)
		assert.NotSame(t, in, out)
	})
	t.Run("the decoder clears apiVersion and kind", func(t *testing.T) {
		assert.Empty(t, out.APIVersion)
		assert.Empty(t, out.Kind)
	})
}

func TestListDecodesItems(t *testing.T) {
	c, _ := newFake(t, http.StatusOK, `{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"FooList",
	  "metadata":{"resourceVersion":"7","continue":"next"},
	  "items":[{"metadata":{"name":"a","namespace":"ns"}},{"metadata":{"name":"b","namespace":"ns"}}]}`)
	list, err := c.Foos("ns").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, "7", list.ResourceVersion)
	assert.Equal(t, "next", list.Continue)
	require.Len(t, list.Items, 2)
	assert.Equal(t, []string{"a", "b"}, []string{list.Items[0].Name, list.Items[1].Name})
}

func TestServerErrorsAreStatusErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		reason metav1.StatusReason
		is     func(error) bool
	}{
		{"a 404 Status is recognised by IsNotFound", http.StatusNotFound, metav1.StatusReasonNotFound, apierrors.IsNotFound},
		{"a 409 Conflict Status is recognised by IsConflict", http.StatusConflict, metav1.StatusReasonConflict, apierrors.IsConflict},
		{"a 409 AlreadyExists Status is recognised by IsAlreadyExists", http.StatusConflict, metav1.StatusReasonAlreadyExists, apierrors.IsAlreadyExists},
		{"a 422 Invalid Status is recognised by IsInvalid", http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, apierrors.IsInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := json.Marshal(metav1.Status{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
				Status:   metav1.StatusFailure, Code: int32(tt.status), Reason: tt.reason, Message: "from the server",
			})
			require.NoError(t, err)
			c, _ := newFake(t, tt.status, string(body))
			_, err = c.Foos("ns").Get(context.Background(), "x", metav1.GetOptions{})
			require.Error(t, err)
			assert.True(t, tt.is(err), "error %v", err)
			assert.Contains(t, err.Error(), "from the server")
		})
	}
}

func TestBadArgumentsAreRefusedBeforeAnyRequest(t *testing.T) {
	ctx := context.Background()
	other := newFoo()
	other.Namespace = "other"
	unnamed := newFoo()
	unnamed.Name = ""
	generated := newFoo()
	generated.Name, generated.GenerateName = "", "foo-"

	tests := []struct {
		name string
		call func(c *Client) error
	}{
		{"Get without a namespace is refused", func(c *Client) error { _, err := c.Foos("").Get(ctx, "x", metav1.GetOptions{}); return err }},
		{"Get without a name is refused", func(c *Client) error { _, err := c.Foos("ns").Get(ctx, "", metav1.GetOptions{}); return err }},
		{"Delete without a namespace is refused", func(c *Client) error { return c.Foos("").Delete(ctx, "x", metav1.DeleteOptions{}) }},
		{"Create of a nil Foo is refused", func(c *Client) error { _, err := c.Foos("ns").Create(ctx, nil, metav1.CreateOptions{}); return err }},
		{"Create of a Foo from another namespace is refused", func(c *Client) error {
			_, err := c.Foos("ns").Create(ctx, other, metav1.CreateOptions{})
			return err
		}},
		{"Create without a name or generateName is refused", func(c *Client) error {
			_, err := c.Foos("ns").Create(ctx, unnamed, metav1.CreateOptions{})
			return err
		}},
		{"Update without a name is refused even with generateName", func(c *Client) error {
			_, err := c.Foos("ns").Update(ctx, generated, metav1.UpdateOptions{})
			return err
		}},
		{"UpdateStatus of a nil Foo is refused", func(c *Client) error {
			_, err := c.Foos("ns").UpdateStatus(ctx, nil, metav1.UpdateOptions{})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := newFake(t, http.StatusOK, storedFoo)
			err := tt.call(c)
			require.ErrorIs(t, err, ErrInvalidArgument)
			assert.Empty(t, srv.requests)
		})
	}

	t.Run("Create with only generateName is sent", func(t *testing.T) {
		c, srv := newFake(t, http.StatusCreated, storedFoo)
		_, err := c.Foos("ns").Create(ctx, generated, metav1.CreateOptions{})
		require.NoError(t, err)
		assert.Equal(t, "foo-", srv.only(t).Body["metadata"].(map[string]any)["generateName"])
	})
	t.Run("NewClient without a config is refused", func(t *testing.T) {
		_, err := NewClient(nil, Options{})
		require.ErrorIs(t, err, ErrInvalidArgument)
	})
}

func TestWatchDecodesTheEventStream(t *testing.T) {
	var stream bytes.Buffer
	for _, line := range []string{
		`{"type":"ADDED","object":{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","metadata":{"name":"a","namespace":"ns","resourceVersion":"10"}}}`,
		`{"type":"MODIFIED","object":{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","metadata":{"name":"a","namespace":"ns","resourceVersion":"11"}}}`,
		`{"type":"DELETED","object":{"apiVersion":"samplecontroller.k8s.io/v1alpha1","kind":"Foo","metadata":{"name":"a","namespace":"ns","resourceVersion":"12"}}}`,
	} {
		stream.WriteString(line + "\n")
	}
	c, srv := newFake(t, http.StatusOK, stream.String())
	seconds := int64(30)
	w, err := c.Foos("ns").Watch(context.Background(), metav1.ListOptions{ResourceVersion: "9", TimeoutSeconds: &seconds})
	require.NoError(t, err)
	defer w.Stop()

	type seen struct {
		Type watch.EventType
		RV   string
	}
	var got []seen
	for ev := range w.ResultChan() {
		foo, ok := ev.Object.(*v1alpha1.Foo)
		require.True(t, ok, "event object is %T", ev.Object)
		got = append(got, seen{ev.Type, foo.ResourceVersion})
	}
	assert.Equal(t, []seen{{watch.Added, "10"}, {watch.Modified, "11"}, {watch.Deleted, "12"}}, got)

	req := srv.only(t)
	assert.Equal(t, base+"/namespaces/ns/foos", req.Path)
	assert.Equal(t, []string{"true"}, req.Query["watch"])
	assert.Equal(t, []string{"9"}, req.Query["resourceVersion"])
	assert.Equal(t, []string{"30"}, req.Query["timeoutSeconds"])
}

func TestRESTClientIsTheOneTheVerbsUse(t *testing.T) {
	c, srv := newFake(t, http.StatusOK, storedFoo)
	out := &v1alpha1.Foo{}
	require.NoError(t, c.RESTClient().Get().Namespace("ns").Resource("foos").Name("example-foo").Do(context.Background()).Into(out))
	assert.Equal(t, "42", out.ResourceVersion)
	assert.Equal(t, base+"/namespaces/ns/foos/example-foo", srv.only(t).Path)
}
