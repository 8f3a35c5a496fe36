// Package incluster runs an example program in a test the way it runs in a pod on kind,
// short of a container: built with its Dockerfile's go build line, its RBAC manifest
// applied, and started as its ServiceAccount through the in-cluster config path — a
// token from the TokenRequest API and the CA from the kube-root-ca.crt ConfigMap, in the
// files a kubelet mounts, plus the KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT
// variables. The program finds no kubeconfig, so it takes the in-cluster path, and every
// request it makes is authorized by RBAC with only what its manifest grants.
//
// Reading order: build.go (DockerfileBuild), manifest.go (Parse, Apply), serviceaccount.go
// (MountServiceAccount), process.go (Start, a program and its output), access.go (Pod.Can), poll.go.
//
// What it cannot check without a container runtime: the image's base, its user (65532)
// and the pod's securityContext at run time. The Deployment manifest is still applied on
// the embedded cluster, where PodSecurity admission judges its securityContext.
package incluster
