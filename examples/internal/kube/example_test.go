package kube_test

import (
	"fmt"
	"os"

	"github.com/kubeinternals/informers/examples/internal/kube"
)

// NewLogger builds the logger every example passes to the packages it runs; a bad flag
// value is reported, not guessed at.
func ExampleNewLogger() {
	log, err := kube.NewLogger(os.Stdout, "warn", "json")
	if err != nil {
		fmt.Println(err)
		return
	}
	log.Info("below the level: not printed")
	_, err = kube.NewLogger(os.Stdout, "chatty", "text")
	fmt.Println(err)
	// Output:
	// bad logging flag: log level "chatty" (want debug, info, warn or error)
}
