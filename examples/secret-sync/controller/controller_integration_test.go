package controller_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/examples/secret-sync/controller"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

const (
	source  = "vault"
	waitFor = 30 * time.Second
	tick    = 50 * time.Millisecond
)

type api struct{ core rest.Interface }

func (a api) namespace(t *testing.T, ctx context.Context, name string, optIn bool) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if optIn {
		ns.Annotations = map[string]string{controller.DefaultAnnotation: "true"}
	}
	require.NoError(t, a.core.Post().Resource("namespaces").Body(ns).Do(ctx).Error())
}

func (a api) putSecret(t *testing.T, ctx context.Context, ns, name, value string) {
	t.Helper()
	a.putLabelledSecret(t, ctx, ns, name, value, nil)
}

func (a api) putLabelledSecret(t *testing.T, ctx context.Context, ns, name, value string, labels map[string]string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Data: map[string][]byte{"v": []byte(value)}}
	err := a.core.Post().Namespace(ns).Resource("secrets").Body(s).Do(ctx).Error()
	if apierrors.IsAlreadyExists(err) {
		err = a.core.Put().Namespace(ns).Resource("secrets").Name(name).Body(s).Do(ctx).Error()
	}
	require.NoError(t, err)
}

func (a api) secretValue(ctx context.Context, ns, name string) (string, error) {
	s := &corev1.Secret{}
	if err := a.core.Get().Namespace(ns).Resource("secrets").Name(name).Do(ctx).Into(s); err != nil {
		return "", err
	}
	return string(s.Data["v"]), nil
}

// eventuallyValue waits until ns/name holds value ("" means: does not exist).
func (a api) eventuallyValue(t *testing.T, ctx context.Context, ns, name, value string) {
	t.Helper()
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		got, err := a.secretValue(ctx, ns, name)
		if value == "" {
			assert.True(ct, apierrors.IsNotFound(err), "want %s/%s gone, got %q, %v", ns, name, got, err)
			return
		}
		require.NoError(ct, err)
		assert.Equal(ct, value, got)
	}, waitFor, tick)
}

func TestSecretSyncAgainstAnAPIServer(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	core, _, err := kube.NewRESTClient(env.Config, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	a := api{core}
	a.namespace(t, ctx, source, false)
	a.namespace(t, ctx, "early", true)
	a.namespace(t, ctx, "bystander", false)
	a.putSecret(t, ctx, source, "db", "v1")

	// Resync off: every sync below is caused by a watch event.
	c, err := controller.New(env.Config, controller.Options{SourceNamespace: source,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	// Goroutine owned by this test: the controller, until stop; the end of the test
	// waits for it.
	go func() { done <- c.Run(runCtx) }()
	defer func() {
		stop()
		assert.NoError(t, <-done, "Run returns nil after a graceful stop")
	}()

	t.Run("a namespace that opted in before start gets the copies; others do not", func(t *testing.T) {
		a.eventuallyValue(t, ctx, "early", "db", "v1")
		_, err := a.secretValue(ctx, "bystander", "db")
		assert.True(t, apierrors.IsNotFound(err), "%v", err)
	})
	t.Run("a namespace created after start with the annotation gets the copies", func(t *testing.T) {
		a.namespace(t, ctx, "late", true)
		a.eventuallyValue(t, ctx, "late", "db", "v1")
	})
	t.Run("a changed source Secret updates every copy", func(t *testing.T) {
		a.putSecret(t, ctx, source, "db", "v2")
		a.eventuallyValue(t, ctx, "early", "db", "v2")
		a.eventuallyValue(t, ctx, "late", "db", "v2")
	})
	t.Run("a new source Secret is copied everywhere", func(t *testing.T) {
		a.putSecret(t, ctx, source, "api-key", "k1")
		a.eventuallyValue(t, ctx, "early", "api-key", "k1")
		a.eventuallyValue(t, ctx, "late", "api-key", "k1")
	})
	t.Run("a copy edited by hand is put back: the copies informer sees the edit", func(t *testing.T) {
		a.putSecret(t, ctx, "early", "db", "tampered")
		a.eventuallyValue(t, ctx, "early", "db", "v2")
	})
	t.Run("a copy deleted by hand is recreated", func(t *testing.T) {
		require.NoError(t, core.Delete().Namespace("late").Resource("secrets").Name("api-key").Do(ctx).Error())
		a.eventuallyValue(t, ctx, "late", "api-key", "k1")
	})
	t.Run("a deleted source Secret's copies are removed", func(t *testing.T) {
		require.NoError(t, core.Delete().Namespace(source).Resource("secrets").Name("api-key").Do(ctx).Error())
		a.eventuallyValue(t, ctx, "early", "api-key", "")
		a.eventuallyValue(t, ctx, "late", "api-key", "")
	})
	t.Run("a source Secret that carries the copy label is neither pruned nor loses its copies", func(t *testing.T) {
		// As if applied from YAML exported from another namespace's copy: the copies
		// informer sees it too, but the source namespace is never a target.
		a.putLabelledSecret(t, ctx, source, "exported", "e1", map[string]string{controller.LabelSourceNamespace: source})
		a.eventuallyValue(t, ctx, "early", "exported", "e1")
		a.eventuallyValue(t, ctx, "late", "exported", "e1")
		waitQuiet(t, c)
		for _, ns := range []string{source, "early", "late"} {
			got, err := a.secretValue(ctx, ns, "exported")
			require.NoError(t, err, "%s/exported must still exist after the controller went quiet", ns)
			assert.Equal(t, "e1", got)
		}
	})
	t.Run("once in step, the loop goes quiet: its own no-op updates cause no further syncs", func(t *testing.T) {
		waitQuiet(t, c)
		before := c.Stats()
		assert.Never(t, func() bool { return c.Stats().Syncs != before.Syncs }, 2*time.Second, tick)
		t.Logf("stats when quiet: %+v", before)
		assert.Positive(t, before.Updates, "the syncs did PUT existing copies (no-ops on the server)")
		// Seven copies were ever created: db in early and late, api-key in both, late's
		// api-key again after it was deleted by hand, exported in both. Every other POST
		// met AlreadyExists and is not counted.
		assert.EqualValues(t, 7, before.Creates, "Creates counts the copies created, not the POSTs sent")
	})
}

// waitQuiet waits until two reads of the sync count 500ms apart agree: the
// controller has handled every event so far.
func waitQuiet(t *testing.T, c *controller.Controller) {
	t.Helper()
	var last int64 = -1
	require.Eventually(t, func() bool {
		n := c.Stats().Syncs
		quiet := n == last
		last = n
		return quiet
	}, waitFor, 500*time.Millisecond)
}
