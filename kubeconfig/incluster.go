package kubeconfig

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// ServiceAccountDir is where the kubelet mounts a pod's service account: a short-lived
// token, the cluster's CA certificate and the pod's namespace.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// ServiceAccountDirEnv names an environment variable that points InCluster at
// another directory holding the same three files. Use it to run a program on your own
// machine as the ServiceAccount it will have in a pod, and so try its RBAC before you
// deploy it: write `kubectl create token <sa> -n <ns>` into token and the ConfigMap
// kube-root-ca.crt's ca.crt into ca.crt, and set KUBERNETES_SERVICE_HOST and
// KUBERNETES_SERVICE_PORT to the apiserver's address. The RBAC tests of the examples do
// exactly this.
const ServiceAccountDirEnv = "KUBEINTERNALS_SERVICEACCOUNT_DIR"

// InCluster builds the config a program in a pod uses: the apiserver from the
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT variables the kubelet sets, the
// token and CA certificate from dir (ServiceAccountDir when empty). It returns an error
// wrapping rest.ErrNotInCluster when either variable is missing.
//
// The token is read now (a missing token is an error here, not on the first request) and
// also named as BearerTokenFile, so that the transport rereads it: the kubelet replaces
// a projected token well before it expires.
//
// client-go: rest/config.go InClusterConfig, which takes no directory; this one does so
// that a test, or you, can supply the files.
func InCluster(dir string) (*rest.Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("%w: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set", rest.ErrNotInCluster)
	}
	if dir == "" {
		dir = ServiceAccountDir
	}
	tokenFile := filepath.Join(dir, "token")
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("in-cluster config: service account token: %w", err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	// Why check the CA now: a bad file would otherwise fail every request with a TLS
	// error that does not say which file was wrong.
	if _, err := certutil.NewPool(caFile); err != nil {
		return nil, fmt.Errorf("in-cluster config: CA certificate: %w", err)
	}
	return &rest.Config{
		Host:            "https://" + net.JoinHostPort(host, port),
		BearerToken:     strings.TrimSpace(string(token)),
		BearerTokenFile: tokenFile,
		TLSClientConfig: rest.TLSClientConfig{CAFile: caFile},
	}, nil
}

// inClusterFromEnv is InCluster on $KUBEINTERNALS_SERVICEACCOUNT_DIR, or on
// ServiceAccountDir when it is unset.
func inClusterFromEnv() (*rest.Config, error) {
	return InCluster(os.Getenv(ServiceAccountDirEnv))
}

// InClusterNamespace is the namespace of the pod this program runs in: the namespace
// file beside the token, in $KUBEINTERNALS_SERVICEACCOUNT_DIR or ServiceAccountDir.
// It returns an error when there is none (the program runs outside a pod).
//
// client-go: tools/clientcmd/client_config.go inClusterClientConfig.Namespace
func InClusterNamespace() (string, error) {
	dir := os.Getenv(ServiceAccountDirEnv)
	if dir == "" {
		dir = ServiceAccountDir
	}
	b, err := os.ReadFile(filepath.Join(dir, "namespace"))
	if err != nil {
		return "", fmt.Errorf("in-cluster namespace: %w", err)
	}
	ns := strings.TrimSpace(string(b))
	if ns == "" {
		return "", fmt.Errorf("in-cluster namespace: %s is empty", filepath.Join(dir, "namespace"))
	}
	return ns, nil
}
