package artifacts_test

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/kubeinternals/informers/examples/foo-controller/apis/samplecontroller/v1alpha1"
	"github.com/kubeinternals/informers/examples/foo-controller/artifacts"
)

// The embedded manifests are the files in this directory; here example-foo.yaml is
// decoded into the Go type it describes.
func ExampleExampleFoo() {
	var foo v1alpha1.Foo
	if err := yaml.UnmarshalStrict(artifacts.ExampleFoo(), &foo); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(foo.Kind, foo.Name, "→ Deployment", foo.Spec.DeploymentName, "with", *foo.Spec.Replicas, "replica")
	// Output:
	// Foo example-foo → Deployment example-foo with 1 replica
}
