package usermodule

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// WriteProxy lays out, under proxyDir, a file-based Go module proxy serving the module
// rooted at modRoot as version: the @v/list, .info, .mod and .zip files the go command
// fetches (GOPROXY=file://<proxyDir>). It returns the module path read from go.mod.
//
// The zip holds what `go mod download` would put in one: every regular file under
// modRoot with paths prefixed by "<module>@<version>/", without .git, without any
// directory that has a go.mod of its own (a nested module), and without vendor/.
func WriteProxy(proxyDir, modRoot, version string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(modRoot, "go.mod"))
	if err != nil {
		return "", err
	}
	module := modulePath(gomod)
	if module == "" {
		return "", fmt.Errorf("%s/go.mod has no module line", modRoot)
	}
	dir := filepath.Join(proxyDir, filepath.FromSlash(escape(module)), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	info, _ := json.Marshal(struct{ Version, Time string }{version, time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return "", err
		}
	}
	return module, writeZip(filepath.Join(dir, version+".zip"), modRoot, module+"@"+version)
}

// modulePath returns the path on go.mod's module line.
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// escape is the module proxy's case encoding: each upper-case letter becomes '!'
// followed by its lower-case form.
func escape(module string) string {
	var b strings.Builder
	for _, r := range module {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func writeZip(zipPath, modRoot, prefix string) (err error) {
	f, err := os.Create(zipPath)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	zw := zip.NewWriter(f)
	walkErr := filepath.WalkDir(modRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(modRoot, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if d.Name() == ".git" || d.Name() == "vendor" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module is not part of this one
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return addFile(zw, p, path.Join(prefix, filepath.ToSlash(rel)))
	})
	return errors.Join(walkErr, zw.Close())
}

func addFile(zw *zip.Writer, src, name string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	w, err := zw.Create(name)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, in)
	return err
}
