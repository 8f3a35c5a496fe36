package kube_test

import (
	"fmt"
	"os"

	"github.com/kubeinternals/informers/examples/internal/kube"
)

// Resolve shows the order the examples look for a kubeconfig in.
func ExampleResolve() {
	inHome := func(p string) bool { return p == "/home/me/.kube/config" }

	paths, src := kube.Resolve(kube.Lookup{Flag: "/tmp/kind.yaml", KubeconfigEnv: "/etc/kube.yaml", Home: "/home/me", FileExists: inHome})
	fmt.Println(src, paths)
	paths, src = kube.Resolve(kube.Lookup{KubeconfigEnv: "/etc/kube.yaml", Home: "/home/me", FileExists: inHome})
	fmt.Println(src, paths)
	paths, src = kube.Resolve(kube.Lookup{Home: "/home/me", FileExists: inHome})
	fmt.Println(src, paths)
	_, src = kube.Resolve(kube.Lookup{})
	fmt.Println(src)
	// Output:
	// -kubeconfig flag [/tmp/kind.yaml]
	// $KUBECONFIG [/etc/kube.yaml]
	// ~/.kube/config [/home/me/.kube/config]
	// in-cluster service account
}

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
