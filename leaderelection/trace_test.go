package leaderelection

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/kubeinternals/informers/trace"
)

// recordSentences returns a tracer that appends each leader-election event's sentence
// to out.
func recordSentences(out *[]string) *trace.Tracer {
	var mu sync.Mutex
	return trace.New(func(e trace.Event) {
		mu.Lock()
		defer mu.Unlock()
		*out = append(*out, e.String())
	})
}

func TestTheTraceTellsATakeoverAfterACrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0, s := time.Now(), newLeaseStore()
		var mu sync.Mutex
		var got []string
		tracer := trace.New(func(e trace.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Source == "b" {
				got = append(got, fmt.Sprintf("%5.1fs %s %s", e.Time.Sub(t0).Seconds(), e.Stage, e))
			}
		})
		a := run(t, t0, testConfig(s.lock("a")), 0, 0)
		time.Sleep(time.Second)
		cfg := testConfig(s.lock("b"))
		cfg.Tracer = tracer
		run(t, t0, cfg, 0, 0)
		time.Sleep(3500 * time.Millisecond) // 4.5s
		a.stop()
		time.Sleep(18 * time.Second)
		synctest.Wait()

		want := []string{"  1.0s leaderelection new leader a of default/lease"}
		for at := 1; at <= 19; at += 2 {
			want = append(want, fmt.Sprintf("%5.1fs leaderelection tried default/lease (A2): held by a, not expired on this candidate's clock", float64(at)))
		}
		want = append(want,
			" 21.0s leaderelection new leader b of default/lease",
			" 21.0s leaderelection acquired default/lease (A3): took over from a, expired (transition 1)",
			" 21.0s leaderelection renewed default/lease (R1) 0.000ms after the last",
		)
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, want, got, "a's last renewal (4s) seen at 5, expired at 20, taken at 21")
	})
}
