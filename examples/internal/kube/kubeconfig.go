package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Source names where a rest.Config came from.
type Source int

const (
	// SourceFlag: the path given with -kubeconfig.
	SourceFlag Source = iota + 1
	// SourceEnv: the files listed in $KUBECONFIG.
	SourceEnv
	// SourceHome: ~/.kube/config.
	SourceHome
	// SourceInCluster: the pod's service account (InClusterConfig).
	SourceInCluster
)

// String returns a short human name, for log lines.
func (s Source) String() string {
	switch s {
	case SourceFlag:
		return "-kubeconfig flag"
	case SourceEnv:
		return "$KUBECONFIG"
	case SourceHome:
		return "~/.kube/config"
	case SourceInCluster:
		return "in-cluster service account"
	default:
		return fmt.Sprintf("Source(%d)", int(s))
	}
}

// ErrNoConfig is returned (wrapped) when no kubeconfig is found and the process is not
// running in a pod either.
var ErrNoConfig = errors.New("no kubeconfig found")

// Lookup is everything Resolve needs from the environment, passed in so that Resolve is a
// pure function a test can drive.
type Lookup struct {
	// Flag is the value of -kubeconfig ("" when not given).
	Flag string
	// KubeconfigEnv is the value of $KUBECONFIG: one path, or several joined by the OS
	// list separator (':' on Unix).
	KubeconfigEnv string
	// Home is the user's home directory ("" when unknown).
	Home string
	// FileExists reports whether a path exists; nil means "check the real file system".
	FileExists func(path string) bool
}

// Resolve picks the kubeconfig files to load, in the order flag, $KUBECONFIG,
// ~/.kube/config. It returns SourceInCluster and no paths when none applies.
//
// Why ~/.kube/config must exist to be chosen, while a flag or $KUBECONFIG path is taken
// as given: an explicit path that is missing is a user mistake worth an error, but a
// missing default file only means "not configured here, try in-cluster".
func Resolve(in Lookup) (paths []string, src Source) {
	if in.Flag != "" {
		return []string{in.Flag}, SourceFlag
	}
	if in.KubeconfigEnv != "" {
		for _, p := range filepath.SplitList(in.KubeconfigEnv) {
			if p != "" {
				paths = append(paths, p)
			}
		}
		if len(paths) > 0 {
			return paths, SourceEnv
		}
	}
	if in.Home != "" {
		home := filepath.Join(in.Home, ".kube", "config")
		exists := in.FileExists
		if exists == nil {
			exists = fileExists
		}
		if exists(home) {
			return []string{home}, SourceHome
		}
	}
	return nil, SourceInCluster
}

// LoadConfig resolves the kubeconfig for this process (flag value, then the real
// $KUBECONFIG and home directory) and loads it into a *rest.Config.
//
// client-go: tools/clientcmd/client_config.go BuildConfigFromFlags (see "Differences" in
// doc.go for the changed order).
func LoadConfig(kubeconfigFlag string) (*rest.Config, Source, error) {
	home, _ := os.UserHomeDir() // Why ignore: no home simply means no ~/.kube/config.
	return loadConfig(Lookup{Flag: kubeconfigFlag, KubeconfigEnv: os.Getenv("KUBECONFIG"), Home: home}, inClusterFromEnv)
}

// loadConfig is LoadConfig with the environment and the in-cluster loader injected.
func loadConfig(in Lookup, inCluster func() (*rest.Config, error)) (*rest.Config, Source, error) {
	paths, src := Resolve(in)
	if src == SourceInCluster {
		cfg, err := inCluster()
		if err != nil {
			return nil, src, fmt.Errorf("%w: no -kubeconfig, $KUBECONFIG or ~/.kube/config, and not in a pod: %w", ErrNoConfig, err)
		}
		return cfg, src, nil
	}
	// Why Precedence and not ExplicitPath for $KUBECONFIG: kubectl merges every file in
	// the list (first one wins per key); users expect the same cluster kubectl talks to.
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: paths}
	if src == SourceFlag {
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: paths[0]}
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, src, fmt.Errorf("load kubeconfig from %s %v: %w", src, paths, err)
	}
	return cfg, src, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
