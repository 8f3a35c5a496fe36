package testenv

import (
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig for one identity (its bearer token; the server
// certificate is not verified: kube-apiserver generated it for loopback) to
// dir/<id.kubeconfig> and returns its path.
func writeKubeconfig(dir, host string, id identity, token string) (string, error) {
	path := filepath.Join(dir, id.kubeconfig)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubeinternals"] = &clientcmdapi.Cluster{Server: host, InsecureSkipTLSVerify: true}
	kc.AuthInfos[id.user] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["kubeinternals"] = &clientcmdapi.Context{Cluster: "kubeinternals", AuthInfo: id.user, Namespace: "default"}
	kc.CurrentContext = "kubeinternals"
	return path, clientcmd.WriteToFile(*kc, path)
}
