package testenv_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

func init() {
	_ = authenticationv1.AddToScheme(scheme)
}

// TestClusterProfileAuthorizesAndAdmitsLikeKind checks what kind users rely on without
// knowing it: RBAC decides (an identity with no binding is refused), the admin is a
// cluster-admin through a binding, and the default admission chain runs — the
// ServiceAccount and PodSecurity plugins included.
func TestClusterProfileAuthorizesAndAdmitsLikeKind(t *testing.T) {
	env := testenv.Start(t, testenv.Options{Profile: testenv.Cluster})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	core := restClient(t, env.Config, corev1.SchemeGroupVersion)
	authn := restClient(t, env.Config, authenticationv1.SchemeGroupVersion)

	t.Run("the admin is kubernetes-admin in kubeadm:cluster-admins, as in kind's kubeconfig", func(t *testing.T) {
		var review authenticationv1.SelfSubjectReview
		require.NoError(t, authn.Post().Resource("selfsubjectreviews").Body(&authenticationv1.SelfSubjectReview{}).Do(ctx).Into(&review))
		assert.Equal(t, "kubernetes-admin", review.Status.UserInfo.Username)
		assert.Contains(t, review.Status.UserInfo.Groups, "kubeadm:cluster-admins")
		assert.NotContains(t, review.Status.UserInfo.Groups, "system:masters", "RBAC is in the admin's path")
	})

	t.Run("a ServiceAccount with no binding is refused with 403", func(t *testing.T) {
		var token authenticationv1.TokenRequest
		eventually(t, ctx, "kube-controller-manager creates default/default", func() bool {
			return core.Post().Namespace("default").Resource("serviceaccounts").Name("default").SubResource("token").
				Body(&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}).
				Do(ctx).Into(&token) == nil
		})
		cfg := rest.AnonymousClientConfig(env.Config)
		cfg.BearerToken = token.Status.Token
		err := restClient(t, cfg, corev1.SchemeGroupVersion).Get().Resource("namespaces").Do(ctx).Error()
		require.True(t, apierrors.IsForbidden(err), "want 403, got %v", err)
		assert.Contains(t, err.Error(), `User "system:serviceaccount:default:default" cannot list resource "namespaces"`)
	})

	t.Run("ServiceAccount admission refuses a pod whose ServiceAccount does not exist", func(t *testing.T) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "orphan"},
			Spec: corev1.PodSpec{ServiceAccountName: "missing",
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}
		err := core.Post().Namespace("default").Resource("pods").Body(pod).Do(ctx).Error()
		require.True(t, apierrors.IsForbidden(err), "want 403, got %v", err)
		assert.Contains(t, err.Error(), `serviceaccount "missing" not found`)
	})

	t.Run("PodSecurity admission enforces a namespace's level", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "restricted",
			Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}}}
		require.NoError(t, core.Post().Resource("namespaces").Body(ns).Do(ctx).Error())
		eventually(t, ctx, "the namespace's default ServiceAccount exists", func() bool {
			return core.Get().Namespace("restricted").Resource("serviceaccounts").Name("default").Do(ctx).Error() == nil
		})
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "privileged"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}},
		}
		err := core.Post().Namespace("restricted").Resource("pods").Body(pod).Do(ctx).Error()
		require.True(t, apierrors.IsForbidden(err), "want 403, got %v", err)
		assert.Contains(t, err.Error(), `violates PodSecurity "restricted:latest"`)
	})

	t.Run("the admission plugins that run are the ones docs/local-cluster.md lists", func(t *testing.T) {
		log, err := os.ReadFile(filepath.Join(env.Dir, "kube-apiserver.log"))
		require.NoError(t, err)
		// kube-apiserver logs, once each for mutating and validating plugins:
		// "Loaded 13 mutating admission controller(s) successfully in the following order: A,B,…."
		loaded := regexp.MustCompile(`Loaded \d+ (?:mutating|validating) admission controller\(s\) successfully in the following order: ([A-Za-z,]+)\.`)
		running := map[string]bool{}
		for _, m := range loaded.FindAllSubmatch(log, -1) {
			for _, name := range strings.Split(string(m[1]), ",") {
				running[name] = true
			}
		}
		require.NotEmpty(t, running, "the log names the admission plugins")
		page, err := os.ReadFile("../../../docs/local-cluster.md")
		require.NoError(t, err)
		listed := regexp.MustCompile(`(?s)The admission plugins that run, on both \([^)]*\): (.*?)\. PodSecurity has`).FindSubmatch(page)
		require.NotNil(t, listed, "docs/local-cluster.md lists the admission plugins")
		documented := map[string]bool{}
		for _, name := range strings.Split(string(listed[1]), ",") {
			documented[strings.TrimSpace(name)] = true
		}
		assert.Equal(t, sortedKeys(running), sortedKeys(documented))
	})

	t.Run("kube-controller-manager's controllers act as their own ServiceAccounts", func(t *testing.T) {
		// --use-service-account-credentials: the manager creates one per controller.
		for _, sa := range []string{"replicaset-controller", "deployment-controller", "generic-garbage-collector"} {
			eventually(t, ctx, "kube-system/"+sa+" exists", func() bool {
				return core.Get().Namespace("kube-system").Resource("serviceaccounts").Name(sa).Do(ctx).Error() == nil
			})
		}
	})
}

// TestAPIServerProfileAdmitsPodsWithoutServiceAccounts: with no controller manager to
// create "default" ServiceAccounts, the APIServer profile turns the ServiceAccount
// admission plugin off, so tests can write Pods anywhere.
func TestAPIServerProfileAdmitsPodsWithoutServiceAccounts(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	core := restClient(t, env.Config, schema.GroupVersion{Version: "v1"})
	require.NoError(t, core.Post().Namespace("default").Resource("pods").Body(pod).Do(ctx).Error())
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
