package fooclient

import (
	"errors"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
)

// ErrInvalidArgument is returned (wrapped) when a call is refused before reaching the
// server: an empty namespace or name, or a nil or mismatched object.
var ErrInvalidArgument = errors.New("fooclient: invalid argument")

// resource is the plural, lower-case resource name in the URL.
const resource = "foos"

// Options tunes NewClient. The zero value is ready to use.
type Options struct {
	// HTTPClient carries the requests. nil means rest.HTTPClientFor(cfg): a client with
	// cfg's TLS and credentials. Why share one: every rest.HTTPClientFor call builds a
	// new connection pool; clients of several resources should reuse one.
	HTTPClient *http.Client
}

// Client talks to the foos resource of one API server. It is safe for concurrent use.
type Client struct {
	rest   rest.Interface
	params runtime.ParameterCodec
}

// NewClient builds a Client from cfg (which is copied, not modified).
//
// client-go: gentype/type.go NewClientWithList (the generic client a clientset wraps).
func NewClient(cfg *rest.Config, opts Options) (*Client, error) {
	if cfg == nil {
		return nil, fmt.Errorf("%w: nil *rest.Config", ErrInvalidArgument)
	}
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &v1alpha1.SchemeGroupVersion
	c.APIPath = "/apis"
	// Why WithoutConversion: Foo has a single version, so there is nothing to convert;
	// objects are encoded and decoded as they are. Pitfall: the decoder clears
	// apiVersion/kind on decoded objects, so a *Foo from this client has an empty
	// TypeMeta; look the kind up in a Scheme when you need it (the event recorder does).
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}

	httpClient := opts.HTTPClient
	if httpClient == nil {
		if httpClient, err = rest.HTTPClientFor(c); err != nil {
			return nil, fmt.Errorf("fooclient: build HTTP client: %w", err)
		}
	}
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, fmt.Errorf("fooclient: build REST client: %w", err)
	}
	return &Client{rest: rc, params: runtime.NewParameterCodec(scheme)}, nil
}

// NewScheme returns a new scheme holding Foo, FooList and the meta/v1 types a REST client
// needs to encode options and decode errors.
//
// Why metav1 under the unversioned "v1" as well: an error reply is a Status with
// apiVersion "v1"; without that registration it would surface as a generic error and
// apierrors.IsNotFound would say false.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("fooclient: register v1alpha1: %w", err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return scheme, nil
}

// RESTClient returns the underlying REST client, for code that builds its own requests
// (for instance a ListerWatcher).
func (c *Client) RESTClient() rest.Interface { return c.rest }

// Foos returns the verbs for one namespace. namespace "" means all namespaces, which only
// List and Watch accept.
func (c *Client) Foos(namespace string) Foos {
	return Foos{client: c, namespace: namespace}
}
