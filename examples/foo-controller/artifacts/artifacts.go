package artifacts

import _ "embed"

// Why unexported strings behind functions: a string cannot be modified, and each call
// returns a fresh []byte, so no caller can change what another caller reads.
var (
	//go:embed crd.yaml
	crdYAML string
	//go:embed example-foo.yaml
	exampleFooYAML string
	//go:embed rbac.yaml
	rbacYAML string
	//go:embed deployment.yaml
	deploymentYAML string
)

// CRD returns crd.yaml.
func CRD() []byte { return []byte(crdYAML) }

// ExampleFoo returns example-foo.yaml.
func ExampleFoo() []byte { return []byte(exampleFooYAML) }

// RBAC returns rbac.yaml (several documents separated by "---").
func RBAC() []byte { return []byte(rbacYAML) }

// Deployment returns deployment.yaml.
func Deployment() []byte { return []byte(deploymentYAML) }
