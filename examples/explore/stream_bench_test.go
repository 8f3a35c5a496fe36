package main

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubeinternals/informers/trace"
)

// BenchmarkRecord is the price a traced pipeline pays per event for the explorer:
// the hub's Sink (ring write, fold into the boxes, wake the streams), with one stream
// subscribed.
func BenchmarkRecord(b *testing.B) {
	h := testHub(ringSize)
	_, cancel := h.subscribe()
	defer cancel()
	e := trace.Event{Stage: trace.Workqueue, Kind: trace.Added, Source: "foos", Key: "explore/demo", Reason: "new", QueueLen: 1}
	b.ReportAllocs()
	for b.Loop() {
		h.Record(e)
	}
}

// BenchmarkStream is the rate one page's stream sustains. For each rate, b.N events
// are recorded at that pace (in batches every millisecond; "max" records as fast as
// one goroutine can) while a client reads /events. It reports missed/op: the
// fraction of events that left the ring before the stream sent them — 0 means the
// stream kept up at that rate.
func BenchmarkStream(b *testing.B) {
	for _, rate := range []int{10_000, 50_000, 100_000, 200_000, 400_000, 0} {
		name := "rate=max"
		if rate > 0 {
			name = "rate=" + strconv.Itoa(rate/1000) + "k/s"
		}
		b.Run(name, func(b *testing.B) { benchStream(b, rate) })
	}
}

func benchStream(b *testing.B, rate int) {
	h := testHub(ringSize)
	ts := startTestServer(b, true, h)
	resp, err := http.Get(ts.URL + "/events")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	if _, err := r.ReadString('\n'); err != nil { // the first state message has begun
		b.Fatal(err)
	}
	e := trace.Event{Stage: trace.Listener, Kind: trace.Buffered, Source: "enqueueFoo", Type: "update", Key: "explore/demo", Backlog: 1}
	b.ResetTimer()
	// Goroutine owned by the benchmark: the pipeline's side, recording b.N events; it
	// ends when they are recorded.
	go func() {
		if rate == 0 {
			for range b.N {
				h.Record(e)
			}
			return
		}
		perTick := max(rate/1000, 1)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for sent := 0; sent < b.N; {
			<-tick.C
			for i := 0; i < perTick && sent < b.N; i++ {
				h.Record(e)
				sent++
			}
		}
	}()
	var missed, last uint64
	for last < uint64(b.N) {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		switch {
		case strings.HasPrefix(line, "id: "):
			last, _ = strconv.ParseUint(strings.TrimSpace(line[4:]), 10, 64)
		case strings.HasPrefix(line, `data: {"missed":`):
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(line[len(`data: {"missed":`):]), "}"), 10, 64)
			missed += n
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(missed)/float64(b.N), "missed/op")
}
