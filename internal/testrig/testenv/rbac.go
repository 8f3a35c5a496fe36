package testenv

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// kwokUser is the user kwok runs as.
const kwokUser = "kwok-controller"

// bindClusterAdmins makes the admin identity a cluster-admin, as kubeadm does on `init`:
// a ClusterRoleBinding from the group kubeadm:cluster-admins to the ClusterRole
// cluster-admin, created by the super-admin. It waits until RBAC lets the admin in (the
// authorizer learns of new bindings through a watch, a moment later).
//
// kubeadm: cmd/kubeadm/app/phases/kubeconfig EnsureAdminClusterRoleBinding
func (e *Env) bindClusterAdmins(ctx context.Context) error {
	binding := clusterRoleBinding("kubeadm:cluster-admins", "cluster-admin", subject{Kind: "Group", Name: admin.groups[0]})
	if _, err := e.doAs(ctx, superAdmin, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding); err != nil {
		return fmt.Errorf("binding %s to cluster-admin: %w", admin.groups[0], err)
	}
	return e.waitAllowed(ctx, admin, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/kubeadm:cluster-admins")
}

// grantKwok gives kwok the ClusterRole kwok ships for itself (its kustomize/rbac
// role.yaml, less the rules for kwok's own custom resources, which we do not install):
// what a kubelet does to its node and that node's pods, for every node kwok manages.
//
// Why not the Node authorizer's system:node:<name> identity, which a kind node's kubelet
// has: one kwok process manages nodes by annotation, not as one named node, and reads
// all pods to find theirs.
func (e *Env) grantKwok(ctx context.Context) error {
	role := map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRole",
		"metadata":   map[string]any{"name": kwokUser},
		"rules": []map[string]any{
			{"apiGroups": []string{""}, "resources": []string{"events"}, "verbs": []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
			{"apiGroups": []string{""}, "resources": []string{"nodes"}, "verbs": []string{"get", "list", "watch"}},
			{"apiGroups": []string{""}, "resources": []string{"nodes/status", "pods/status"}, "verbs": []string{"patch", "update"}},
			{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"delete", "get", "list", "patch", "update", "watch"}},
			{"apiGroups": []string{"coordination.k8s.io"}, "resources": []string{"leases"}, "verbs": []string{"create", "get", "list", "patch", "update", "watch"}},
		},
	}
	if _, err := e.doAs(ctx, admin, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterroles", role); err != nil {
		return fmt.Errorf("kwok's ClusterRole: %w", err)
	}
	binding := clusterRoleBinding(kwokUser, kwokUser, subject{Kind: "User", Name: kwokUser})
	if _, err := e.doAs(ctx, admin, http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding); err != nil {
		return fmt.Errorf("kwok's ClusterRoleBinding: %w", err)
	}
	return e.waitAllowed(ctx, kwok, "/api/v1/nodes")
}

type subject struct {
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	APIGroup string `json:"apiGroup"`
}

func clusterRoleBinding(name, role string, s subject) map[string]any {
	s.APIGroup = "rbac.authorization.k8s.io"
	return map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1",
		"kind":       "ClusterRoleBinding",
		"metadata":   map[string]any{"name": name},
		"roleRef":    map[string]string{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
		"subjects":   []subject{s},
	}
}

// waitAllowed polls GET path as id until it succeeds: until RBAC has seen the binding
// that allows it.
func (e *Env) waitAllowed(ctx context.Context, id identity, path string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := e.doAs(ctx, id, http.MethodGet, path, nil)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s still not allowed after 30s: %w", id.user, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
