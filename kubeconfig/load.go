package kubeconfig

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
	// SourceFlag: the path given to Load (usually from a -kubeconfig flag).
	SourceFlag Source = iota + 1
	// SourceEnv: the files listed in $KUBECONFIG.
	SourceEnv
	// SourceHome: ~/.kube/config.
	SourceHome
	// SourceInCluster: the pod's service account (InCluster).
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

// FlagUsage is the help text for a -kubeconfig flag whose value is passed to Load:
//
//	path := flag.String("kubeconfig", "", kubeconfig.FlagUsage)
const FlagUsage = "path to a kubeconfig file; default $KUBECONFIG, then ~/.kube/config, then the in-cluster service account"

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

// Load returns the *rest.Config kubectl would use, and where it came from: the file
// kubeconfigFlag names when it is not empty, else the files in $KUBECONFIG (merged as
// kubectl merges them), else ~/.kube/config if it exists, else the pod's service account
// (InCluster, from $KUBEINTERNALS_SERVICEACCOUNT_DIR when set). The config uses the
// kubeconfig's current context. The error wraps ErrNoConfig when nothing applies.
//
// client-go: tools/clientcmd/client_config.go BuildConfigFromFlags (see "Differences" in
// doc.go for the changed order).
func Load(kubeconfigFlag string) (*rest.Config, Source, error) {
	home, _ := os.UserHomeDir() // Why ignore: no home simply means no ~/.kube/config.
	return load(Lookup{Flag: kubeconfigFlag, KubeconfigEnv: os.Getenv("KUBECONFIG"), Home: home}, inClusterFromEnv)
}

// load is Load with the environment and the in-cluster loader injected.
func load(in Lookup, inCluster func() (*rest.Config, error)) (*rest.Config, Source, error) {
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
