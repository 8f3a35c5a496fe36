package incluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/kubeconfig"
)

// Pod is what a kubelet gives a container that runs as a ServiceAccount, on disk and in
// the environment.
type Pod struct {
	// User is the name RBAC sees: system:serviceaccount:<namespace>:<name>.
	User string
	// Namespace is the ServiceAccount's namespace.
	Namespace string
	// Dir holds token, ca.crt and namespace, the files of the kubelet's projected
	// volume at /var/run/secrets/kubernetes.io/serviceaccount.
	Dir string
	// Env are KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT and
	// KUBEINTERNALS_SERVICEACCOUNT_DIR (which points the program at Dir).
	Env []string
}

// MountServiceAccount prepares a Pod for the ServiceAccount ns/name, which must exist:
// a one-hour token from its TokenRequest API (what the kubelet's projected volume holds)
// and the CA from the ConfigMap kube-root-ca.crt that kube-controller-manager publishes
// in every namespace (waiting for it, up to a minute). admin must be allowed to create
// tokens and read the ConfigMap.
func MountServiceAccount(ctx context.Context, admin *rest.Config, dir, ns, name string) (Pod, error) {
	c, err := rawClient(admin)
	if err != nil {
		return Pod{}, err
	}
	u, err := url.Parse(admin.Host)
	if err != nil {
		return Pod{}, err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return Pod{}, fmt.Errorf("apiserver address %q: %w", admin.Host, err)
	}

	var ca string
	err = poll(ctx, time.Minute, "ConfigMap "+ns+"/kube-root-ca.crt published", func() (bool, error) {
		var cm struct {
			Data map[string]string `json:"data"`
		}
		raw, err := c.Get().AbsPath("/api/v1/namespaces", ns, "configmaps", "kube-root-ca.crt").DoRaw(ctx)
		if err != nil {
			return false, err
		}
		if err := json.Unmarshal(raw, &cm); err != nil {
			return false, err
		}
		ca = cm.Data["ca.crt"]
		return ca != "", nil
	})
	if err != nil {
		return Pod{}, err
	}

	req := map[string]any{
		"apiVersion": "authentication.k8s.io/v1",
		"kind":       "TokenRequest",
		"spec":       map[string]any{"expirationSeconds": 3600},
	}
	body, _ := json.Marshal(req)
	raw, err := c.Post().AbsPath("/api/v1/namespaces", ns, "serviceaccounts", name, "token").Body(body).DoRaw(ctx)
	if err != nil {
		return Pod{}, fmt.Errorf("token for ServiceAccount %s/%s: %w", ns, name, err)
	}
	var tr struct {
		Status struct {
			Token string `json:"token"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &tr); err != nil || tr.Status.Token == "" {
		return Pod{}, fmt.Errorf("token for ServiceAccount %s/%s: no token in %s", ns, name, raw)
	}

	for file, content := range map[string]string{"token": tr.Status.Token, "ca.crt": ca, "namespace": ns} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o600); err != nil {
			return Pod{}, err
		}
	}
	return Pod{
		User:      "system:serviceaccount:" + ns + ":" + name,
		Namespace: ns,
		Dir:       dir,
		Env: []string{
			"KUBERNETES_SERVICE_HOST=" + host,
			"KUBERNETES_SERVICE_PORT=" + port,
			kubeconfig.ServiceAccountDirEnv + "=" + dir,
		},
	}, nil
}
