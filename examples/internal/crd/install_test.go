package crd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

const fooCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.example.com
spec:
  group: example.com
`

const barCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bars.example.com
`

type seenRequest struct {
	Method, Path, ContentType string
	Query                     map[string][]string
	Body                      map[string]any
}

// fakeAPIServer answers apply requests with 200 and GETs with the conditions that
// conditionsFor returns for the n-th GET of that CRD (n counts from 1).
type fakeAPIServer struct {
	conditionsFor func(name string, n int) []condition
	applyStatus   int

	mu   sync.Mutex // guards seen and gets
	seen []seenRequest
	gets map[string]int
}

func (s *fakeAPIServer) RoundTrip(req *http.Request) (*http.Response, error) {
	seen := seenRequest{Method: req.Method, Path: req.URL.Path, ContentType: req.Header.Get("Content-Type"), Query: req.URL.Query()}
	if req.Body != nil {
		raw, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &seen.Body); err != nil {
				return nil, err
			}
		}
	}
	name := req.URL.Path[strings.LastIndex(req.URL.Path, "/")+1:]
	s.mu.Lock()
	s.seen = append(s.seen, seen)
	if s.gets == nil {
		s.gets = map[string]int{}
	}
	var body string
	status := http.StatusOK
	switch req.Method {
	case http.MethodPatch:
		if s.applyStatus != 0 {
			status = s.applyStatus
		}
		body = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + name + `"}}`
		if status != http.StatusOK {
			body = fmt.Sprintf(`{"apiVersion":"v1","kind":"Status","status":"Failure","code":%d,"reason":"Forbidden","message":"no"}`, status)
		}
	case http.MethodGet:
		s.gets[name]++
		conds, err := json.Marshal(s.conditionsFor(name, s.gets[name]))
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		body = `{"metadata":{"name":"` + name + `"},"status":{"conditions":` + string(conds) + `}}`
	}
	s.mu.Unlock()
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    req,
	}, nil
}

func (s *fakeAPIServer) requests() []seenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenRequest(nil), s.seen...)
}

func establishedAfter(reads int) func(string, int) []condition {
	return func(_ string, n int) []condition {
		conds := []condition{{Type: "NamesAccepted", Status: "True", Reason: "NoConflicts"}}
		est := condition{Type: "Established", Status: "False", Reason: "Installing"}
		if n >= reads {
			est = condition{Type: "Established", Status: "True", Reason: "InitialNamesAccepted"}
		}
		return append(conds, est)
	}
}

func options(srv *fakeAPIServer) Options {
	return Options{HTTPClient: &http.Client{Transport: srv}, PollInterval: time.Second}
}

var testConfig = &rest.Config{Host: "https://apiserver.test"}

func TestInstallCRD(t *testing.T) {
	t.Run("each CRD is server-side applied with the field manager and force", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &fakeAPIServer{conditionsFor: establishedAfter(1)}
			names, err := InstallCRD(t.Context(), testConfig, []byte(fooCRD+"---\n"+barCRD), options(srv))
			require.NoError(t, err)
			assert.Equal(t, []string{"foos.example.com", "bars.example.com"}, names)

			var applies []seenRequest
			for _, r := range srv.requests() {
				if r.Method == http.MethodPatch {
					applies = append(applies, r)
				}
			}
			require.Len(t, applies, 2)
			assert.Equal(t, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/foos.example.com", applies[0].Path)
			assert.Equal(t, "application/apply-patch+yaml", applies[0].ContentType)
			assert.Equal(t, map[string][]string{"fieldManager": {"kubeinternals-examples"}, "force": {"true"}}, applies[0].Query)
			assert.Equal(t, "example.com", applies[0].Body["spec"].(map[string]any)["group"], "the manifest is sent as written")
			assert.Equal(t, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/bars.example.com", applies[1].Path)
		})
	})

	t.Run("it waits, one poll interval per read, until Established is True", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &fakeAPIServer{conditionsFor: establishedAfter(4)}
			start := time.Now()
			_, err := InstallCRD(t.Context(), testConfig, []byte(fooCRD), options(srv))
			require.NoError(t, err)
			assert.Equal(t, 3*time.Second, time.Since(start), "first read at once, then 3 waits of 1s")
			assert.Equal(t, 4, srv.gets["foos.example.com"])
		})
	})

	t.Run("a custom field manager is used", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &fakeAPIServer{conditionsFor: establishedAfter(1)}
			opts := options(srv)
			opts.FieldManager = "demo"
			_, err := InstallCRD(t.Context(), testConfig, []byte(fooCRD), opts)
			require.NoError(t, err)
			assert.Equal(t, []string{"demo"}, srv.requests()[0].Query["fieldManager"])
		})
	})

	t.Run("names not accepted fails at once with the server's message", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &fakeAPIServer{conditionsFor: func(string, int) []condition {
				return []condition{{Type: "NamesAccepted", Status: "False", Reason: "MultipleNamesNotAccepted", Message: "plural is already in use"}}
			}}
			start := time.Now()
			_, err := InstallCRD(t.Context(), testConfig, []byte(fooCRD), options(srv))
			require.ErrorIs(t, err, ErrNamesNotAccepted)
			assert.Contains(t, err.Error(), "plural is already in use")
			assert.Zero(t, time.Since(start))
		})
	})

	t.Run("a context that ends first gives ErrNotEstablished with the last conditions", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &fakeAPIServer{conditionsFor: establishedAfter(1000)}
			ctx, cancel := context.WithTimeout(t.Context(), 5500*time.Millisecond)
			defer cancel()
			_, err := InstallCRD(ctx, testConfig, []byte(fooCRD), options(srv))
			require.ErrorIs(t, err, ErrNotEstablished)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Contains(t, err.Error(), "Established=False(Installing)")
			assert.Contains(t, err.Error(), "after 6 status reads")
		})
	})

	t.Run("an apply error is returned as the server's StatusError", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &fakeAPIServer{conditionsFor: establishedAfter(1), applyStatus: http.StatusForbidden}
			_, err := InstallCRD(t.Context(), testConfig, []byte(fooCRD), options(srv))
			require.Error(t, err)
			assert.True(t, apierrors.IsForbidden(err), "%v", err)
			assert.Zero(t, srv.gets["foos.example.com"], "no wait after a failed apply")
		})
	})

	t.Run("the zero PollInterval means 100ms", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			srv := &fakeAPIServer{conditionsFor: establishedAfter(3)}
			start := time.Now()
			_, err := InstallCRD(t.Context(), testConfig, []byte(fooCRD), Options{HTTPClient: &http.Client{Transport: srv}})
			require.NoError(t, err)
			assert.Equal(t, 200*time.Millisecond, time.Since(start))
		})
	})
}

func TestBadManifestsAreRefusedBeforeAnyRequest(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		wantText string
	}{
		{"an empty manifest is refused", "", "no CustomResourceDefinition"},
		{"a manifest of only comments and separators is refused", "# nothing\n---\n---\n", "no CustomResourceDefinition"},
		{"a document of another kind is refused, naming it", fooCRD + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n", `document 1 is /v1, Kind=ConfigMap "cm"`},
		{"a v1beta1 CRD is refused", strings.Replace(fooCRD, "/v1\n", "/v1beta1\n", 1), "want an apiextensions.k8s.io/v1"},
		{"a CRD without a name is refused", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n", "without metadata.name"},
		{"text that is not YAML is refused", "{not: [yaml", "document 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &fakeAPIServer{conditionsFor: establishedAfter(1)}
			_, err := InstallCRD(context.Background(), testConfig, []byte(tt.manifest), options(srv))
			require.ErrorIs(t, err, ErrInvalidManifest)
			assert.Contains(t, err.Error(), tt.wantText)
			assert.Empty(t, srv.requests())
		})
	}
	t.Run("a nil config is refused", func(t *testing.T) {
		_, err := InstallCRD(context.Background(), nil, []byte(fooCRD), Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "nil *rest.Config")
	})
}

func TestInstallCRDFile(t *testing.T) {
	t.Run("the file's CRDs are installed", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crd.yaml")
			require.NoError(t, os.WriteFile(path, []byte(fooCRD), 0o600))
			srv := &fakeAPIServer{conditionsFor: establishedAfter(1)}
			names, err := InstallCRDFile(t.Context(), testConfig, path, options(srv))
			require.NoError(t, err)
			assert.Equal(t, []string{"foos.example.com"}, names)
		})
	})
	t.Run("a missing file is an error naming the cause", func(t *testing.T) {
		_, err := InstallCRDFile(context.Background(), testConfig, filepath.Join(t.TempDir(), "nope.yaml"), Options{})
		require.True(t, errors.Is(err, os.ErrNotExist), "%v", err)
	})
}
