package controller

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

func TestAConflictIsRetriedAndLoggedAsWhatItIs(t *testing.T) {
	foos := schema.GroupResource{Group: "samplecontroller.k8s.io", Resource: "foos"}
	tests := []struct {
		name      string
		err       error
		wantLevel string
		wantMsg   string
	}{
		{
			"a 409 Conflict is optimistic concurrency at work: INFO",
			fmt.Errorf("update foo status: %w", apierrors.NewConflict(foos, "web", errors.New("the object has been modified"))),
			"INFO", "sync conflicted with a newer write; retrying with the newer copy",
		},
		{
			"any other failure is an ERROR",
			errors.New("connection refused"),
			"ERROR", "sync failed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{
				Logger: slog.New(slog.NewTextHandler(&out, nil)),
				Hooks:  Hooks{BeforeSync: func(context.Context, Key) error { return tc.err }},
			})
			require.NoError(t, err)
			t.Cleanup(c.queue.ShutDown)
			key := Key{Namespace: "team-a", Name: "web"}
			c.queue.Add(key)

			require.True(t, c.processNextWorkItem(t.Context()))
			assert.Equal(t, 1, c.queue.NumRequeues(key), "retried with backoff either way")
			assert.Contains(t, out.String(), "level="+tc.wantLevel+` msg="`+tc.wantMsg+`"`)
		})
	}
}
