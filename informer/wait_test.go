package informer_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeinternals/informers/informer"
	"github.com/kubeinternals/informers/internal/testrig/fakeapi"
)

func TestWaitForCacheSyncWithOptionsKeepsWaitingWhenAsked(t *testing.T) {
	t.Run("a 404 is waited through, reported every period, and the wait ends when the list succeeds", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := fakeapi.New[*corev1.ConfigMap]()
			src.FailLists(fakeapi.StatusError(404, "the server could not find the requested resource"))
			inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{Name: "configmaps"})
			running(t, inf)

			reportCh := make(chan informer.Waiting, 10)
			done := make(chan error, 1)
			go func() {
				done <- informer.WaitForCacheSyncWithOptions(context.Background(), informer.WaitOptions{
					KeepWaitingOn: apierrors.IsNotFound,
					Report:        func(w informer.Waiting) { reportCh <- w },
					ReportEvery:   5 * time.Second,
				}, inf)
			}()
			time.Sleep(12 * time.Second) // fake time: two report periods
			synctest.Wait()
			select {
			case err := <-done:
				t.Fatalf("the wait ended on a 404 it was told to wait through: %v", err)
			default:
			}
			reports := []informer.Waiting{<-reportCh, <-reportCh}
			require.Empty(t, reportCh, "two periods, two reports")
			assert.Equal(t, "informer configmaps", reports[0].Name)
			assert.True(t, apierrors.IsNotFound(reports[0].Err), "the report says why: %v", reports[0].Err)
			assert.Equal(t, 10*time.Second, reports[1].Since)

			src.FailLists(nil) // the CRD is installed
			require.NoError(t, <-done)
			assert.True(t, inf.HasSynced())
		})
	})
	t.Run("an error the caller did not choose to wait through still ends the wait at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := fakeapi.New[*corev1.ConfigMap]()
			src.FailLists(fakeapi.StatusError(404, "not found"))
			inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{Name: "configmaps"})
			running(t, inf)
			done := make(chan error, 1)
			go func() {
				done <- informer.WaitForCacheSyncWithOptions(context.Background(), informer.WaitOptions{KeepWaitingOn: apierrors.IsNotFound}, inf)
			}()
			time.Sleep(time.Minute)
			synctest.Wait()
			require.Empty(t, done, "still waiting through the 404")

			src.FailLists(fakeapi.StatusError(403, "configmaps is forbidden")) // the CRD came, the RBAC did not
			err := <-done
			require.ErrorIs(t, err, informer.ErrNotSynced)
			assert.True(t, apierrors.IsForbidden(errors.Unwrap(err)) || apierrors.IsForbidden(err), "%v", err)
			assert.Contains(t, err.Error(), "informer configmaps")
		})
	})
	t.Run("the zero WaitOptions fail fast on a 404, like WaitForCacheSync", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := fakeapi.New[*corev1.ConfigMap]()
			src.FailLists(fakeapi.StatusError(404, "not found"))
			inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{})
			running(t, inf)
			start := time.Now()
			err := informer.WaitForCacheSyncWithOptions(context.Background(), informer.WaitOptions{}, inf)
			require.ErrorIs(t, err, informer.ErrNotSynced)
			assert.True(t, apierrors.IsNotFound(err))
			assert.Less(t, time.Since(start), time.Second)
		})
	})
	t.Run("a slow list is reported with no error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			src := fakeapi.New[*corev1.ConfigMap]()
			inf := newInformer(classic, src, informer.Options[*corev1.ConfigMap]{Name: "configmaps"})
			// Not running: nothing lists, so the wait can only report and time out.
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
			defer cancel()
			var reports []informer.Waiting
			err := informer.WaitForCacheSyncWithOptions(ctx, informer.WaitOptions{
				Report: func(w informer.Waiting) { reports = append(reports, w) },
			}, inf)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Len(t, reports, 1, "one report at the default 5s period")
			assert.NoError(t, reports[0].Err)
		})
	})
}
