package browser

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// InstallCommand is what a person runs (as root) on Debian to get both binaries.
const InstallCommand = "apt-get install chromium chromium-driver"

// Environment variables that point Find at specific binaries instead of $PATH.
const (
	ChromiumEnv     = "KUBEINTERNALS_CHROMIUM"
	ChromedriverEnv = "KUBEINTERNALS_CHROMEDRIVER"
)

// ErrNoBrowser is wrapped by every error that means "chromium or chromedriver is not
// installed here": callers skip instead of fail on it (see ForTest).
var ErrNoBrowser = errors.New("chromium or chromedriver not found (install with: " + InstallCommand + ")")

// Find returns the paths of the chromium and chromedriver executables, or an error
// wrapping ErrNoBrowser when either is missing. Each comes from its environment
// variable (KUBEINTERNALS_CHROMIUM, KUBEINTERNALS_CHROMEDRIVER) when set, else from
// $PATH, else from /usr/bin where Debian's packages put them.
func Find() (chromium, chromedriver string, err error) {
	chromium, err = findOne("chromium", ChromiumEnv)
	if err != nil {
		return "", "", err
	}
	chromedriver, err = findOne("chromedriver", ChromedriverEnv)
	if err != nil {
		return "", "", err
	}
	return chromium, chromedriver, nil
}

// findOne locates one executable by its environment variable, $PATH or /usr/bin.
//
// Why an explicit variable wins and is not followed by a search: a path set on purpose
// that does not work is a mistake to report, not a reason to silently test another
// browser.
func findOne(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if err := executable(p); err != nil {
			return "", fmt.Errorf("%w: %s=%s: %v", ErrNoBrowser, env, p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	// Why: `go test` may run with a reduced $PATH (an IDE, a CI step) that lacks
	// /usr/bin, where Debian installs both programs.
	p := "/usr/bin/" + name
	if err := executable(p); err != nil {
		return "", fmt.Errorf("%w: %s is neither in $PATH nor at %s (or set %s)", ErrNoBrowser, name, p, env)
	}
	return p, nil
}

// executable returns nil if path is a regular file with an execute bit set.
func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}
