package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
)

// FakeNodeName is the node kwok manages in the Cluster profile.
const FakeNodeName = "kwok-node-0"

// startClusterComponents starts kube-controller-manager, kube-scheduler and kwok, each
// as its own identity under RBAC, then registers one fake node and waits until kwok
// reports it Ready.
func (e *Env) startClusterComponents(ctx context.Context) error {
	if err := e.grantKwok(ctx); err != nil {
		return err
	}
	conf := map[string]string{} // user → kubeconfig path
	for _, id := range []identity{controllerManager, scheduler, kwok} {
		path, err := writeKubeconfig(e.Dir, e.Config.Host, id, e.creds.tokens[id.user])
		if err != nil {
			return err
		}
		conf[id.user] = path
	}
	// kubeadm: cmd/kubeadm/app/phases/controlplane/manifests.go getControllerManagerCommand
	// and getSchedulerCommand, less leader election (one replica), the serving endpoints
	// and the certificate signer (we have no CA).
	components := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{
			"--kubeconfig=" + conf[controllerManager.user],
			// Why: each controller then acts as its own ServiceAccount in kube-system
			// (replicaset-controller, generic-garbage-collector, …) with its own
			// bootstrap ClusterRole, as on kind, instead of as the manager's identity.
			"--use-service-account-credentials=true",
			"--controllers=*,bootstrapsigner,tokencleaner",
			"--leader-elect=false",
			"--secure-port=0", // no metrics/health endpoint: nothing reads it, and no port to collide
			"--service-account-private-key-file=" + e.creds.saKeyFile,
			// Published to every namespace as the ConfigMap kube-root-ca.crt: what a pod
			// verifies the apiserver with.
			"--root-ca-file=" + filepath.Join(e.creds.certDir, "apiserver.crt"),
		}},
		{"kube-scheduler", []string{
			"--kubeconfig=" + conf[scheduler.user],
			"--leader-elect=false",
			"--secure-port=0",
		}},
		// kwok plays the kubelet for nodes annotated kwok.x-k8s.io/node=fake: it keeps
		// them Ready and moves their pods to Running, with its built-in default stages.
		{"kwok", []string{
			"--kubeconfig=" + conf[kwok.user],
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
			"--cidr=10.0.0.1/24",
			"--node-ip=10.0.0.1",
			"--node-port=0", // no kubelet-API server: logs/exec are not needed
			"--node-lease-duration-seconds=40",
		}},
	}
	for _, c := range components {
		p, err := startProcess(c.name, e.Dir, filepath.Join(e.binDir, c.name), c.args, e.opts.Detached)
		if err != nil {
			return err
		}
		e.others = append(e.others, p)
	}
	if err := e.createFakeNode(ctx); err != nil {
		return err
	}
	return e.waitNodeReady(ctx, 60*time.Second)
}

func (e *Env) createFakeNode(ctx context.Context) error {
	node := map[string]any{
		"apiVersion": "v1",
		"kind":       "Node",
		"metadata": map[string]any{
			"name":        FakeNodeName,
			"annotations": map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			"labels":      map[string]string{"type": "kwok", "kubernetes.io/hostname": FakeNodeName, "kubernetes.io/os": "linux"},
		},
		"status": map[string]any{
			"allocatable": map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"},
			"capacity":    map[string]string{"cpu": "32", "memory": "256Gi", "pods": "110"},
		},
	}
	_, err := e.doAs(ctx, admin, http.MethodPost, "/api/v1/nodes", node)
	return err
}

func (e *Env) waitNodeReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		for _, p := range append([]*process{e.etcd, e.apiserver}, e.others...) {
			if err := p.exitedEarly(); err != nil {
				return err
			}
		}
		body, err := e.doAs(ctx, admin, http.MethodGet, "/api/v1/nodes/"+FakeNodeName, nil)
		if err == nil {
			var n struct {
				Status struct {
					Conditions []struct{ Type, Status string } `json:"conditions"`
				} `json:"status"`
			}
			if json.Unmarshal(body, &n) == nil {
				for _, c := range n.Status.Conditions {
					if c.Type == "Ready" && c.Status == "True" {
						return nil
					}
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fake node %s not Ready after %s (kwok log: %s)", FakeNodeName, timeout, filepath.Join(e.Dir, "kwok.log"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// doAs sends one JSON request to the apiserver as id.
func (e *Env) doAs(ctx context.Context, id identity, method, path string, body any) ([]byte, error) {
	cfg := rest.CopyConfig(e.Config)
	cfg.BearerToken = e.creds.tokens[id.user]
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	defer client.CloseIdleConnections()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, e.Config.Host+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(out))
	}
	return out, nil
}
