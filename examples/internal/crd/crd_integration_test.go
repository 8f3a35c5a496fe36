package crd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
	"github.com/kubeinternals/informers/examples/internal/crd"
	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

func TestInstallCRDAgainstAnAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	t.Run("the Foo CRD is Established and its resource can be listed at once", func(t *testing.T) {
		names, err := crd.InstallCRD(ctx, env.Config, artifacts.CRD(), crd.Options{})
		require.NoError(t, err)
		assert.Equal(t, []string{"foos.samplecontroller.k8s.io"}, names)

		rc, _, err := kube.NewRESTClient(env.Config, schema.GroupVersion{Group: "samplecontroller.k8s.io", Version: "v1alpha1"}, nil)
		require.NoError(t, err)
		raw, err := rc.Get().Resource("foos").Do(ctx).Raw()
		require.NoError(t, err)
		assert.Contains(t, string(raw), `"kind":"FooList"`)
	})

	t.Run("installing the same CRD again succeeds", func(t *testing.T) {
		names, err := crd.InstallCRD(ctx, env.Config, artifacts.CRD(), crd.Options{})
		require.NoError(t, err)
		assert.Equal(t, []string{"foos.samplecontroller.k8s.io"}, names)
	})

	t.Run("a *.k8s.io CRD without the api-approved annotation is refused", func(t *testing.T) {
		manifest := strings.Replace(string(artifacts.CRD()), "foos.samplecontroller.k8s.io", "widgets.samplecontroller.k8s.io", 1)
		manifest = strings.NewReplacer("kind: Foo\n", "kind: Widget\n", "listKind: FooList", "listKind: WidgetList",
			"plural: foos", "plural: widgets", "singular: foo", "singular: widget").Replace(manifest)
		var kept []string
		for _, line := range strings.Split(manifest, "\n") {
			if !strings.Contains(line, "api-approved.kubernetes.io") && strings.TrimSpace(line) != "annotations:" {
				kept = append(kept, line)
			}
		}
		_, err := crd.InstallCRD(ctx, env.Config, []byte(strings.Join(kept, "\n")), crd.Options{})
		require.Error(t, err)
		assert.True(t, apierrors.IsInvalid(err), "%v", err)
		assert.Contains(t, err.Error(), "api-approved.kubernetes.io")
	})

	t.Run("a CRD whose kind is taken in the group fails with ErrNamesNotAccepted", func(t *testing.T) {
		clash := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: bars.samplecontroller.k8s.io
  annotations:
    api-approved.kubernetes.io: "unapproved, test only"
spec:
  group: samplecontroller.k8s.io
  scope: Namespaced
  names: {kind: Foo, listKind: FooList, plural: bars, singular: bar}
  versions:
    - name: v1alpha1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`
		_, err := crd.InstallCRD(ctx, env.Config, []byte(clash), crd.Options{})
		require.ErrorIs(t, err, crd.ErrNamesNotAccepted)
		assert.Contains(t, err.Error(), "Foo")
	})
}
