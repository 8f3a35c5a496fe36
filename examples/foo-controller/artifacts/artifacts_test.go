package artifacts

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
)

// documents splits a multi-document YAML file.
func documents(t *testing.T, manifest []byte) [][]byte {
	t.Helper()
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		require.NoError(t, err)
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

// strict decodes YAML into out, failing on any field out does not have (a typo).
func strict(t *testing.T, doc []byte, out any) {
	t.Helper()
	require.NoError(t, yaml.UnmarshalStrict(doc, out))
}

func TestCRD(t *testing.T) {
	docs := documents(t, CRD())
	require.Len(t, docs, 1)
	u := &unstructured.Unstructured{}
	strict(t, docs[0], &u.Object)

	str := func(path ...string) string {
		v, _, err := unstructured.NestedString(u.Object, path...)
		require.NoError(t, err)
		return v
	}
	t.Run("it defines foos.samplecontroller.k8s.io as a namespaced Foo", func(t *testing.T) {
		assert.Equal(t, "apiextensions.k8s.io/v1", u.GetAPIVersion())
		assert.Equal(t, "CustomResourceDefinition", u.GetKind())
		assert.Equal(t, "foos.samplecontroller.k8s.io", u.GetName())
		assert.Equal(t, v1alpha1.GroupName, str("spec", "group"))
		assert.Equal(t, "Namespaced", str("spec", "scope"))
		assert.Equal(t, "Foo", str("spec", "names", "kind"))
		assert.Equal(t, "foos", str("spec", "names", "plural"))
	})
	t.Run("it keeps the api-approved annotation a *.k8s.io group requires", func(t *testing.T) {
		assert.Contains(t, u.GetAnnotations()["api-approved.kubernetes.io"], "unapproved")
	})

	versions, _, err := unstructured.NestedSlice(u.Object, "spec", "versions")
	require.NoError(t, err)
	require.Len(t, versions, 1)
	v := versions[0].(map[string]any)
	t.Run("v1alpha1 is the served and stored version", func(t *testing.T) {
		assert.Equal(t, v1alpha1.SchemeGroupVersion.Version, v["name"])
		assert.Equal(t, true, v["served"])
		assert.Equal(t, true, v["storage"])
	})
	t.Run("the status subresource is enabled", func(t *testing.T) {
		status, found, err := unstructured.NestedMap(v, "subresources", "status")
		require.NoError(t, err)
		assert.True(t, found)
		assert.Empty(t, status)
	})
	t.Run("spec.replicas is an integer from 1 to 10", func(t *testing.T) {
		replicas, _, err := unstructured.NestedMap(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", "replicas")
		require.NoError(t, err)
		assert.Equal(t, "integer", replicas["type"])
		assert.EqualValues(t, 1, replicas["minimum"])
		assert.EqualValues(t, 10, replicas["maximum"])
	})
	t.Run("every Go field of Foo has a schema property", func(t *testing.T) {
		props := func(path ...string) []string {
			m, _, err := unstructured.NestedMap(v, append([]string{"schema", "openAPIV3Schema", "properties"}, path...)...)
			require.NoError(t, err)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return keys
		}
		assert.Equal(t, []string{"deploymentName", "replicas"}, props("spec", "properties"))
		assert.Equal(t, []string{"availableReplicas"}, props("status", "properties"))
	})
}

func TestExampleFooDecodesStrictlyAndIsValid(t *testing.T) {
	var foo v1alpha1.Foo
	strict(t, ExampleFoo(), &foo)
	assert.Equal(t, v1alpha1.SchemeGroupVersion.String(), foo.APIVersion)
	assert.Equal(t, "Foo", foo.Kind)
	assert.Equal(t, "example-foo", foo.Spec.DeploymentName)
	require.NotNil(t, foo.Spec.Replicas)
	assert.True(t, *foo.Spec.Replicas >= 1 && *foo.Spec.Replicas <= 10)
}

func TestRBAC(t *testing.T) {
	docs := documents(t, RBAC())
	require.Len(t, docs, 6)
	var (
		ns           corev1.Namespace
		sa           corev1.ServiceAccount
		role         rbacv1.ClusterRole
		binding      rbacv1.ClusterRoleBinding
		leaseRole    rbacv1.Role
		leaseBinding rbacv1.RoleBinding
	)
	strict(t, docs[0], &ns)
	strict(t, docs[1], &sa)
	strict(t, docs[2], &role)
	strict(t, docs[3], &binding)
	strict(t, docs[4], &leaseRole)
	strict(t, docs[5], &leaseBinding)

	t.Run("the documents are a Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, Role and RoleBinding", func(t *testing.T) {
		assert.Equal(t, []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"},
			[]string{ns.Kind, sa.Kind, role.Kind, binding.Kind, leaseRole.Kind, leaseBinding.Kind})
		assert.Equal(t, ns.Name, sa.Namespace, "the ServiceAccount lives in the namespace created first")
	})
	t.Run("leader election may get, update and create its own Lease, and nothing else", func(t *testing.T) {
		assert.Equal(t, ns.Name, leaseRole.Namespace, "a Role in the controller's namespace, not a ClusterRole")
		assert.Equal(t, []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"foo-controller"}, Verbs: []string{"get", "update"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		}, leaseRole.Rules)
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: leaseRole.Name}, leaseBinding.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}}, leaseBinding.Subjects)
		assert.Equal(t, ns.Name, leaseBinding.Namespace)
	})
	t.Run("the namespace enforces the restricted Pod Security Standard", func(t *testing.T) {
		assert.Equal(t, "restricted", ns.Labels["pod-security.kubernetes.io/enforce"])
	})
	t.Run("the binding gives the ClusterRole to the ServiceAccount", func(t *testing.T) {
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}, binding.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: sa.Namespace}}, binding.Subjects)
	})

	allows := func(group, resource, verb string) bool {
		for _, r := range role.Rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
				return true
			}
		}
		return false
	}
	needed := []struct{ group, resource, verb string }{
		{"samplecontroller.k8s.io", "foos", "get"},
		{"samplecontroller.k8s.io", "foos", "list"},
		{"samplecontroller.k8s.io", "foos", "watch"},
		{"samplecontroller.k8s.io", "foos/status", "update"},
		{"apps", "deployments", "get"},
		{"apps", "deployments", "list"},
		{"apps", "deployments", "watch"},
		{"apps", "deployments", "create"},
		{"apps", "deployments", "update"},
		{"events.k8s.io", "events", "create"},
		{"events.k8s.io", "events", "patch"},
	}
	for _, n := range needed {
		t.Run("the role allows "+n.verb+" on "+n.group+"/"+n.resource, func(t *testing.T) {
			assert.True(t, allows(n.group, n.resource, n.verb))
		})
	}
	t.Run("the role grants nothing beyond what the controller needs", func(t *testing.T) {
		count := 0
		for _, r := range role.Rules {
			count += len(r.APIGroups) * len(r.Resources) * len(r.Verbs)
		}
		assert.Equal(t, len(needed), count)
		assert.False(t, allows("apps", "deployments", "delete"), "the garbage collector deletes Deployments")
		assert.False(t, allows("samplecontroller.k8s.io", "foos", "update"), "the controller writes only status")
	})
}

func TestDeploymentRunsAsTheServiceAccount(t *testing.T) {
	var sa corev1.ServiceAccount
	strict(t, documents(t, RBAC())[1], &sa)
	var d appsv1.Deployment
	strict(t, Deployment(), &d)

	assert.Equal(t, sa.Namespace, d.Namespace)
	assert.Equal(t, sa.Name, d.Spec.Template.Spec.ServiceAccountName)
	require.NotNil(t, d.Spec.Replicas)
	assert.Equal(t, int32(2), *d.Spec.Replicas, "two replicas: one leads, one stands by")
	assert.Contains(t, d.Spec.Template.Spec.Containers[0].Args, "-leader-elect", "two replicas would both act without it")
	assert.Equal(t, d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	require.Len(t, d.Spec.Template.Spec.Containers, 1)
	assert.Equal(t, corev1.PullIfNotPresent, d.Spec.Template.Spec.Containers[0].ImagePullPolicy, "kind load needs IfNotPresent")
}

func TestAccessorsReturnIndependentCopies(t *testing.T) {
	a := CRD()
	a[0] = '!'
	assert.NotEqual(t, byte('!'), CRD()[0])
}
