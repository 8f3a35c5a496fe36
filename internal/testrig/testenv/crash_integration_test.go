package testenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

// TestIntegrationKilledProgramsComeBackWithTheirData kills etcd, then kube-apiserver,
// with SIGKILL, and starts each again: the process is gone at once (its pid no longer
// runs), a write fails while etcd is down, and what was written before is read
// back afterwards.
func TestIntegrationKilledProgramsComeBackWithTheirData(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	core := restClient(t, env.Config, corev1.SchemeGroupVersion)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-the-crash"}}
	require.NoError(t, core.Post().Namespace("default").Resource("configmaps").Body(cm).Do(ctx).Error())
	get := func(ctx context.Context) error {
		return core.Get().Namespace("default").Resource("configmaps").Name("before-the-crash").Do(ctx).Error()
	}

	etcdPID, apiPID := env.PIDs()[0], env.PIDs()[1]
	require.NoError(t, env.KillEtcd())
	require.False(t, processAlive(etcdPID), "etcd still runs after KillEtcd")
	short, stop := context.WithTimeout(ctx, 5*time.Second)
	during := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "during-the-crash"}}
	err := core.Post().Namespace("default").Resource("configmaps").Body(during).Do(short).Error()
	stop()
	require.Error(t, err, "a write with etcd down")
	require.NoError(t, env.StartEtcd(ctx))
	require.NoError(t, get(ctx), "read back after etcd's restart")

	require.NoError(t, env.KillAPIServer())
	require.False(t, processAlive(apiPID), "kube-apiserver still runs after KillAPIServer")
	require.Error(t, get(ctx), "a request with kube-apiserver down")
	require.NoError(t, env.StartAPIServer(ctx))
	require.NoError(t, get(ctx), "read back after kube-apiserver's restart")
}
