package testenv

import (
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for cfg (bearer token, server cert not verified:
// kube-apiserver generated it for loopback) to dir/kubeconfig and returns its path.
func writeKubeconfig(dir string, cfg *rest.Config) (string, error) {
	path := filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubeinternals"] = &clientcmdapi.Cluster{Server: cfg.Host, InsecureSkipTLSVerify: true}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["kubeinternals"] = &clientcmdapi.Context{Cluster: "kubeinternals", AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = "kubeinternals"
	return path, clientcmd.WriteToFile(*kc, path)
}
