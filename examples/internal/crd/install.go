package crd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kubeinternals/informers/examples/internal/kube"
)

var (
	// ErrInvalidManifest is returned (wrapped) when the manifest is empty, is not YAML,
	// or holds something other than apiextensions.k8s.io/v1 CustomResourceDefinitions.
	ErrInvalidManifest = errors.New("invalid CRD manifest")
	// ErrNamesNotAccepted is returned (wrapped) when the API server refuses a CRD's
	// names (NamesAccepted=False), typically because another CRD already uses them.
	ErrNamesNotAccepted = errors.New("CRD names not accepted")
	// ErrNotEstablished is returned (wrapped, with the context's error) when ctx ends
	// before a CRD becomes Established.
	ErrNotEstablished = errors.New("CRD not established")
)

// groupVersion is where CustomResourceDefinitions are served.
var groupVersion = schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}

const (
	defaultPollInterval = 100 * time.Millisecond
	defaultFieldManager = "kubeinternals-examples"
)

// Options tunes InstallCRD. The zero value is ready to use.
type Options struct {
	// Logger receives one line per CRD applied and established. Nil means slog.Default().
	Logger *slog.Logger
	// PollInterval is the pause between two status reads. 0 means 100ms.
	PollInterval time.Duration
	// FieldManager names the owner of the applied fields. "" means
	// "kubeinternals-examples".
	FieldManager string
	// HTTPClient carries the requests; nil means rest.HTTPClientFor(cfg).
	HTTPClient *http.Client
}

// InstallCRDFile is InstallCRD on the contents of the file at path.
func InstallCRDFile(ctx context.Context, cfg *rest.Config, path string, opts Options) ([]string, error) {
	manifest, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read CRD manifest: %w", err)
	}
	return InstallCRD(ctx, cfg, manifest, opts)
}

// InstallCRD applies every CustomResourceDefinition in manifest (YAML or JSON, several
// documents separated by "---" allowed) and waits until each is Established. It returns
// the CRD names in manifest order. Bound the wait with ctx.
func InstallCRD(ctx context.Context, cfg *rest.Config, manifest []byte, opts Options) ([]string, error) {
	objs, err := parse(manifest)
	if err != nil {
		return nil, err
	}
	c, err := newRESTClient(cfg, opts.HTTPClient)
	if err != nil {
		return nil, err
	}
	opts = withDefaults(opts)

	names := make([]string, 0, len(objs))
	for _, obj := range objs {
		if err := apply(ctx, c, obj, opts.FieldManager); err != nil {
			return nil, err
		}
		opts.Logger.Info("CRD applied", "name", obj.GetName())
		names = append(names, obj.GetName())
	}
	for _, name := range names {
		start := time.Now()
		if err := waitEstablished(ctx, c, name, opts.PollInterval); err != nil {
			return nil, err
		}
		opts.Logger.Info("CRD established", "name", name, "after", time.Since(start))
	}
	return names, nil
}

func withDefaults(opts Options) Options {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = defaultPollInterval
	}
	if opts.FieldManager == "" {
		opts.FieldManager = defaultFieldManager
	}
	return opts
}

// parse splits manifest into documents and checks each is a named v1 CRD.
func parse(manifest []byte) ([]*unstructured.Unstructured, error) {
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var objs []*unstructured.Unstructured
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %w", ErrInvalidManifest, i, err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%w: document %d: %w", ErrInvalidManifest, i, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue // an empty document, e.g. a leading "---" or only comments
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("%w: document %d: %w", ErrInvalidManifest, i, err)
		}
		if gvk := obj.GroupVersionKind(); gvk != groupVersion.WithKind("CustomResourceDefinition") {
			return nil, fmt.Errorf("%w: document %d is %s %q, want an apiextensions.k8s.io/v1 CustomResourceDefinition",
				ErrInvalidManifest, i, gvk, obj.GetName())
		}
		if obj.GetName() == "" {
			return nil, fmt.Errorf("%w: document %d: CustomResourceDefinition without metadata.name", ErrInvalidManifest, i)
		}
		objs = append(objs, obj)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%w: no CustomResourceDefinition found", ErrInvalidManifest)
	}
	return objs, nil
}

// newRESTClient returns a REST client for apiextensions.k8s.io/v1.
//
// Why no CRD types in the scheme: bodies go out and come back as raw JSON; the scheme's
// meta/v1 types are there only to decode an error reply's Status, so that callers can use
// apierrors.IsForbidden and friends.
func newRESTClient(cfg *rest.Config, httpClient *http.Client) (*rest.RESTClient, error) {
	if cfg == nil {
		return nil, fmt.Errorf("crd: nil *rest.Config")
	}
	rc, _, err := kube.NewRESTClient(cfg, groupVersion, httpClient)
	return rc, err
}

// apply creates or updates one CRD with server-side apply.
//
// Why server-side apply: one request covers both "create" and "already there, update
// it", with no read-modify-write loop and no resourceVersion to carry. force=true takes
// over fields another manager (say kubectl) set, which is what re-running a demo means.
func apply(ctx context.Context, c rest.Interface, obj *unstructured.Unstructured, fieldManager string) error {
	body, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("crd: encode %s: %w", obj.GetName(), err)
	}
	// Pitfall: Request.Body(string) reads a *file* of that name; pass []byte.
	err = c.Patch(types.ApplyPatchType).
		Resource("customresourcedefinitions").Name(obj.GetName()).
		Param("fieldManager", fieldManager).Param("force", "true").
		Body(body).Do(ctx).Error()
	if err != nil {
		return fmt.Errorf("crd: apply %s: %w", obj.GetName(), err)
	}
	return nil
}
