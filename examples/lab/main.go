// Command lab is `make lab`: every question our readers ask about informers, answered
// by an experiment on a real cluster. Each scenario prints its Question, What we do
// (the exact API calls or fault), What we saw (trace excerpts and counts measured in
// this run), the Answer built from those observations, and Why. The run ends with a
// table of every scenario and whether the observation held.
//
//	go run ./examples/lab            # every scenario
//	go run ./examples/lab NAME…      # the named ones
//	go run ./examples/lab -list      # names and questions
//	go run ./examples/lab -docs      # docs/lab.md, generated from the scenarios
//
// Without $KUBECONFIG it starts the embedded local cluster (and stops it at the end);
// with $KUBECONFIG it uses that cluster and skips the scenarios that inject faults
// (cutting connections, compacting etcd, restarting the apiserver). It exits 1 if any
// scenario failed to observe what its answer claims.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/kubeinternals/informers/examples/internal/cluster"
	"github.com/kubeinternals/informers/examples/internal/kube"
)

func main() {
	list := flag.Bool("list", false, "print the scenarios' names and questions, and exit")
	docs := flag.Bool("docs", false, "print docs/lab.md (generated from the scenarios), and exit")
	record := flag.String("record", "", "write each scenario's trace to DIR/NAME.jsonl.gz, a recording the explorer replays (docs/recordings/README.md)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: lab [-list] [-docs] [-record DIR] [NAME…]\n\n")
		flag.PrintDefaults()
		fmt.Fprintf(flag.CommandLine.Output(), "\nScenarios:\n")
		printList(flag.CommandLine.Output())
	}
	flag.Parse()
	if *list {
		printList(os.Stdout)
		return
	}
	if *docs {
		writeDocs(os.Stdout)
		return
	}
	selected, err := selectScenarios(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		flag.Usage()
		os.Exit(2)
	}
	if *record != "" {
		// Why before the cluster starts: a bad directory should not cost its start-up.
		if err := prepareRecordDir(*record); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	ctx, stop := kube.SignalContext(context.Background())
	defer stop()
	lines := &logLines{}
	log := lines.logger(slog.NewTextHandler(os.Stderr, nil), slog.LevelInfo)
	// Why: a component given no Logger logs through slog.Default(); this way its lines
	// read like the rest of this program's, and are recorded with them.
	slog.SetDefault(log)
	lab, cleanup, err := startLab(ctx, log, lines)
	if err != nil {
		log.Error("starting the lab", "err", err)
		stop()
		os.Exit(1)
	}
	lab.recordDir = *record
	if err := lab.prepare(ctx); err != nil {
		log.Error("preparing the cluster", "err", err)
		cleanup()
		stop()
		os.Exit(1)
	}
	results := runAll(ctx, lab, selected, os.Stdout)
	cleanup()
	writeTable(os.Stdout, results)
	for _, r := range results {
		if !r.passed() {
			stop()
			os.Exit(1)
		}
	}
}

// scenarioTimeout bounds one scenario.
const scenarioTimeout = 3 * time.Minute

// result is one scenario's outcome.
type result struct {
	scenario Scenario
	report   *Report
	err      error  // the experiment could not be done
	skipped  string // why it did not run
}

func (r result) passed() bool {
	return r.skipped != "" || (r.err == nil && r.report.Observed())
}

// runAll runs the scenarios in order, printing each report to w.
func runAll(ctx context.Context, lab *Lab, scenarios []Scenario, w io.Writer) []result {
	var results []result
	for _, s := range scenarios {
		if ctx.Err() != nil {
			break
		}
		r := run(ctx, lab, s)
		switch {
		case r.skipped != "":
			fmt.Fprintf(w, "\n━━ %s ━━ skipped: %s\n", s.Name, r.skipped)
		case r.err != nil:
			fmt.Fprintf(w, "\n━━ %s ━━ could not run: %v\n", s.Name, r.err)
		default:
			s.print(w, r.report)
		}
		results = append(results, r)
	}
	return results
}

// run runs one scenario with its own timeout and cleans up the namespaces it made.
func run(ctx context.Context, lab *Lab, s Scenario) result {
	if s.Fault != "" && !lab.Local {
		return result{scenario: s, skipped: s.Fault + " " + cluster.ErrNeedsLocalControlPlane.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, scenarioTimeout)
	defer cancel()
	defer lab.cleanUp()
	lab.startRecording()
	rep, err := s.Run(ctx, lab)
	if err == nil && rep == nil {
		err = fmt.Errorf("scenario %s returned no report", s.Name)
	}
	// Why a failed run is saved too: its recording is how to see what went wrong.
	path, errRec := lab.saveRecording(s)
	if errRec != nil {
		err = errors.Join(err, errRec)
	} else if path != "" {
		lab.log.Info("recorded", "scenario", s.Name, "file", path)
	}
	return result{scenario: s, report: rep, err: err}
}
