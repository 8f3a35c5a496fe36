package main

import (
	"fmt"
	"io"
	"strings"
)

// writeTable ends `make lab`: one row per scenario — its name, the question, the
// answer this run observed, and whether every claim held (✓) or not (✗).
func writeTable(w io.Writer, results []result) {
	fmt.Fprintf(w, "\n| scenario | question | answer (observed in this run) | observed |\n|---|---|---|---|\n")
	for _, r := range results {
		answer, mark := "", "✓"
		switch {
		case r.skipped != "":
			answer, mark = "skipped: "+r.skipped, "–"
		case r.err != nil:
			answer, mark = "could not run: "+r.err.Error(), "✗"
		default:
			answer = r.report.Answer
			if !r.report.Observed() {
				mark = "✗"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.scenario.Name, cell(r.scenario.Question), cell(answer), mark)
	}
}

// cell keeps a table cell on one line.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// printList prints every scenario's name and question.
func printList(w io.Writer) {
	for _, s := range scenarios() {
		fault := ""
		if s.Fault != "" {
			fault = " [fault: " + s.Fault + "]"
		}
		fmt.Fprintf(w, "  %-22s %s%s\n", s.Name, s.Question, fault)
	}
}

// selectScenarios returns the scenarios named, in the order given, or all of them.
func selectScenarios(names []string) ([]Scenario, error) {
	all := scenarios()
	if len(names) == 0 {
		return all, nil
	}
	var out []Scenario
	for _, n := range names {
		found := false
		for _, s := range all {
			if s.Name == n {
				out, found = append(out, s), true
			}
		}
		if !found {
			return nil, fmt.Errorf("lab: no scenario %q", n)
		}
	}
	return out, nil
}
