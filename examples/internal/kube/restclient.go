package kube

import (
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// NewRESTClient returns a REST client for one API group version, and the scheme it
// encodes and decodes with: a new scheme holding what addToScheme registers plus the
// meta/v1 types. httpClient nil means rest.HTTPClientFor(cfg). cfg is copied.
//
// It is what a generated clientset does for each group, in one function; 01-raw-list-watch
// spells the same steps out inline.
//
// Why meta/v1 under the unversioned "v1": error replies are Status objects with
// apiVersion v1; decoding them gives *apierrors.StatusError, so apierrors.IsNotFound and
// friends work.
//
// client-go: rest/config.go RESTClientForConfigAndClient
func NewRESTClient(cfg *rest.Config, gv schema.GroupVersion, httpClient *http.Client, addToScheme ...func(*runtime.Scheme) error) (*rest.RESTClient, *runtime.Scheme, error) {
	if cfg == nil {
		return nil, nil, fmt.Errorf("kube: nil *rest.Config")
	}
	scheme := runtime.NewScheme()
	for _, add := range addToScheme {
		if err := add(scheme); err != nil {
			return nil, nil, fmt.Errorf("kube: register types for %s: %w", gv, err)
		}
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})

	c := rest.CopyConfig(cfg)
	c.GroupVersion = &gv
	// Why two prefixes: the legacy core group ("" → /api/v1) predates API groups; every
	// named group lives under /apis/<group>/<version>.
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	// Why WithoutConversion: each client talks one version, and objects are sent and read
	// as they are. Pitfall: decoded objects come back with an empty apiVersion/kind.
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	var err error
	if httpClient == nil {
		if httpClient, err = rest.HTTPClientFor(c); err != nil {
			return nil, nil, fmt.Errorf("kube: HTTP client for %s: %w", gv, err)
		}
	}
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("kube: REST client for %s: %w", gv, err)
	}
	return rc, scheme, nil
}
