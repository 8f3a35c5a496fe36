package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeinternals/informers/examples/internal/kube"
	"github.com/kubeinternals/informers/internal/testrig/testenv"
)

func TestRawListThenWatchShowsTheWireAndTheDecodedEvents(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	core, _, err := kube.NewRESTClient(env.Config, corev1.SchemeGroupVersion, nil, corev1.AddToScheme)
	require.NoError(t, err)
	const ns = "raw-watch"
	require.NoError(t, core.Post().Resource("namespaces").Body(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}).Do(ctx).Error())
	createCM := func(name string) {
		require.NoError(t, core.Post().Namespace(ns).Resource("configmaps").
			Body(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": "v"}}).Do(ctx).Error())
	}
	createCM("before")

	// Run the program with its output in a pipe, and act when it reaches the WATCH.
	pr, pw := io.Pipe()
	defer pr.Close() // if an assertion stops the test early, the program's writes fail instead of blocking
	done := make(chan error, 1)
	// Goroutine owned by this test: it runs the program, which returns after its 3s
	// timeout; closing the pipe then ends the reading loop below.
	go func() {
		err := run(ctx, pw, env.Config, ns, 3*time.Second)
		pw.Close()
		done <- err
	}()

	var output []string
	scanner := bufio.NewScanner(pr)
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		output = append(output, line)
		if strings.HasPrefix(line, "WATCH ") {
			createCM("during")
			require.NoError(t, core.Delete().Namespace(ns).Resource("configmaps").Name("during").Do(ctx).Error())
		}
	}
	require.NoError(t, <-done)
	text := strings.Join(output, "\n")
	t.Logf("program output:\n%s", text)

	t.Run("the LIST shows the existing ConfigMap and the list's resourceVersion", func(t *testing.T) {
		assert.Regexp(t, `(?m)^LIST 1 configmaps at resourceVersion \d+\n  before \(rv \d+\)$`, text)
	})
	t.Run("the WATCH URL asks for a watch from the list's resourceVersion", func(t *testing.T) {
		assert.Regexp(t, `(?m)^WATCH https?://.*/api/v1/namespaces/raw-watch/configmaps\?allowWatchBookmarks=true&resourceVersion=\d+&timeoutSeconds=3&watch=true$`, text)
	})
	t.Run("each event is printed raw, as one JSON line, then decoded", func(t *testing.T) {
		assert.Regexp(t, `(?m)^wire: \{"type":"ADDED","object":\{"kind":"ConfigMap","apiVersion":"v1","metadata":\{"name":"during".*\}\}$\n^  → ADDED configmap "during" rv=\d+$`, text)
		assert.Regexp(t, `(?m)^wire: \{"type":"DELETED",.*"name":"during".*$\n^  → DELETED configmap "during" rv=\d+$`, text)
	})
	t.Run("the ConfigMap from before the LIST is not replayed by the WATCH", func(t *testing.T) {
		assert.NotContains(t, text, `ADDED configmap "before"`)
	})
	t.Run("the program ends by itself after the timeout", func(t *testing.T) {
		assert.Equal(t, "watch ended", output[len(output)-1])
	})
}
