package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kubeinternals/informers/trace"
)

// Scenario is one question a reader asks, answered by an experiment on a real
// cluster. Run sets up, acts, and returns what it observed; `make lab` prints the
// Report and the integration test asserts its Checks, so the narration is the
// assertion and cannot drift from what happened.
type Scenario struct {
	// Name is how `go run ./examples/lab NAME` selects it: the question in a few words.
	Name string
	// Question is what a reader asks.
	Question string
	// Why explains the observation in two or three sentences.
	Why string
	// Read lists where the book and the code explain it: a chapter (docs/…), and
	// file: Function pairs.
	Read []string
	// Pipeline, if not empty, says which informer pipeline the scenario chooses by
	// name instead of the default one (client-go 1.37's: a RealFIFO fed by a
	// watch-list), and why. Empty: every informer of the scenario has the default.
	Pipeline string
	// Fault, if not empty, is the fault the scenario injects. It needs the local
	// control plane; on a $KUBECONFIG cluster the scenario is skipped with this reason.
	Fault string
	// Run performs the experiment. An error means the experiment could not be done
	// (the cluster refused a request, a wait timed out); a wrong observation is a
	// failed Check instead.
	Run func(ctx context.Context, lab *Lab) (*Report, error)
	// Recorded checks a recording of a run (docs/recordings/NAME.jsonl.gz) for the
	// heart of what Answer claims, from the trace alone (recorded.go). The lab's
	// tests run it on the recording of every integration run and on the committed
	// recordings.
	Recorded func(recorded) Check
}

// Report is what one run of a scenario did and saw.
type Report struct {
	// Did lists the exact API calls and faults, in order.
	Did []string
	// Saw holds the trace excerpts and counts measured in this run.
	Saw []string
	// Answer is the answer in one line, built from what was observed.
	Answer string
	// Checks are the claims the answer makes, each with what was measured.
	Checks []Check

	// actions marks each Do and Fault in the scenario's recording (nil: the lab does
	// not record).
	actions *trace.Tracer
}

// Check is one claim and whether this run bore it out.
type Check struct {
	Claim string // what must hold, e.g. "both processes reconciled default/a"
	OK    bool
	Got   string // what was measured
}

// Do records an API call or a step, formatted like fmt.Sprintf.
func (r *Report) Do(format string, args ...any) { r.did(false, format, args...) }

// Fault records a fault the scenario injects, formatted like fmt.Sprintf: a cut
// connection, a compaction, a restart, a killed process. A recording marks it as
// one, and the explorer's plots draw it on the time axis.
func (r *Report) Fault(format string, args ...any) { r.did(true, format, args...) }

func (r *Report) did(fault bool, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.Did = append(r.Did, line)
	r.actions.Action(line, fault)
}

// See records an observation line, formatted like fmt.Sprintf.
func (r *Report) See(format string, args ...any) { r.Saw = append(r.Saw, fmt.Sprintf(format, args...)) }

// Timeline records events as a trace timeline (offsets from the first).
func (r *Report) Timeline(events []trace.Event) {
	var b strings.Builder
	_ = trace.WriteTimeline(&b, events)
	for line := range strings.Lines(b.String()) {
		r.Saw = append(r.Saw, "  "+strings.TrimRight(line, "\n"))
	}
}

// Check records a claim; got says what was measured, formatted like fmt.Sprintf.
func (r *Report) Check(claim string, ok bool, got string, args ...any) {
	r.Checks = append(r.Checks, Check{Claim: claim, OK: ok, Got: fmt.Sprintf(got, args...)})
}

// Observed reports whether the run bore out every claim (and made at least one).
func (r *Report) Observed() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

// print writes the scenario's four parts: Question, What we do, What we saw, Why.
func (s Scenario) print(w io.Writer, r *Report) {
	fmt.Fprintf(w, "\n━━ %s ━━\n\nQuestion\n  %s\n\n", s.Name, s.Question)
	if s.Pipeline != "" {
		fmt.Fprintf(w, "Pipeline\n  %s\n\n", s.Pipeline)
	}
	fmt.Fprintf(w, "What we do\n")
	for _, d := range r.Did {
		fmt.Fprintf(w, "  • %s\n", d)
	}
	fmt.Fprintf(w, "\nWhat we saw\n")
	for _, l := range r.Saw {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, c := range r.Checks {
		mark := "✓"
		if !c.OK {
			mark = "✗"
		}
		fmt.Fprintf(w, "  %s %s (%s)\n", mark, c.Claim, c.Got)
	}
	fmt.Fprintf(w, "\nAnswer\n  %s\n\nWhy\n  %s\n", r.Answer, s.Why)
	for _, l := range s.Read {
		fmt.Fprintf(w, "  → %s\n", l)
	}
}
