package listwatch

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// ErrInvalidOptions is wrapped by every error a constructor in this package returns
// for bad input.
var ErrInvalidOptions = errors.New("listwatch: invalid options")

// NewScheme returns a fresh scheme with the given API groups registered, for example
// NewScheme(corev1.AddToScheme, appsv1.AddToScheme). The scheme maps Go types to
// group/version/kind, which is what the decoders need to turn bytes into *corev1.Pod.
//
// Why not a package-level scheme like client-go's kubernetes/scheme.Scheme: no
// package-level mutable state; each caller owns what it registers.
func NewScheme(addToScheme ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range addToScheme {
		if add == nil {
			return nil, fmt.Errorf("%w: nil AddToScheme function", ErrInvalidOptions)
		}
		if err := add(s); err != nil {
			return nil, fmt.Errorf("listwatch: register API group: %w", err)
		}
	}
	return s, nil
}

// NewRESTClient returns a REST client for one API group version: requests go to
// /api/v1 for the core group ("") and to /apis/<group>/<version> otherwise.
//
// The client's own serializer only decodes error responses (metav1.Status); a
// ListerWatcher decodes lists and watch streams itself, so the same client serves
// typed objects, protobuf and *unstructured.Unstructured alike. cfg is copied, not
// modified.
//
// client-go: rest/config.go RESTClientFor
func NewRESTClient(cfg *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: nil rest.Config", ErrInvalidOptions)
	}
	if gv.Version == "" {
		return nil, fmt.Errorf("%w: group version %q has no version", ErrInvalidOptions, gv)
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	if c.UserAgent == "" {
		c.UserAgent = "kubeinternals-reflector"
	}
	// Why: only metav1.Status needs to be known, for the error path of rest.Result.
	statusScheme := runtime.NewScheme()
	metav1.AddToGroupVersion(statusScheme, gv)
	c.NegotiatedSerializer = serializer.NewCodecFactory(statusScheme).WithoutConversion()
	if c.ContentType == "" {
		c.ContentType = runtime.ContentTypeJSON
	}
	client, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("listwatch: REST client for %s: %w", gv, err)
	}
	return client, nil
}
