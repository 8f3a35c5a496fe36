package kubeconfig_test

import (
	"fmt"

	"github.com/kubeinternals/informers/kubeconfig"
)

// Resolve shows the order Load looks for a kubeconfig in.
func ExampleResolve() {
	inHome := func(p string) bool { return p == "/home/me/.kube/config" }

	paths, src := kubeconfig.Resolve(kubeconfig.Lookup{Flag: "/tmp/kind.yaml", KubeconfigEnv: "/etc/kube.yaml", Home: "/home/me", FileExists: inHome})
	fmt.Println(src, paths)
	paths, src = kubeconfig.Resolve(kubeconfig.Lookup{KubeconfigEnv: "/etc/kube.yaml", Home: "/home/me", FileExists: inHome})
	fmt.Println(src, paths)
	paths, src = kubeconfig.Resolve(kubeconfig.Lookup{Home: "/home/me", FileExists: inHome})
	fmt.Println(src, paths)
	_, src = kubeconfig.Resolve(kubeconfig.Lookup{})
	fmt.Println(src)
	// Output:
	// -kubeconfig flag [/tmp/kind.yaml]
	// $KUBECONFIG [/etc/kube.yaml]
	// ~/.kube/config [/home/me/.kube/config]
	// in-cluster service account
}
