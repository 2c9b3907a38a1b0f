package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

// proxy is a GOPROXY directory (served as file://dir) being filled with
// module versions, laid out as the module proxy protocol says.
type proxy struct{ dir string }

// add serves the module in src (a directory holding its go.mod) as
// path@version.
func (px *proxy) add(path, version, src string) error {
	esc, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	dir := filepath.Join(px.dir, esc, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var zbuf bytes.Buffer
	if err := modzip.CreateFromDir(&zbuf, module.Version{Path: path, Version: version}, src); err != nil {
		return fmt.Errorf("zipping %s@%s: %w", path, version, err)
	}
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return err
	}
	info, _ := json.Marshal(map[string]string{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	for name, data := range map[string][]byte{version + ".zip": zbuf.Bytes(), version + ".mod": gomod, version + ".info": info} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	list, _ := os.ReadFile(filepath.Join(dir, "list"))
	versions := strings.Fields(string(list))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	return os.WriteFile(filepath.Join(dir, "list"), []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

// url is the GOPROXY entry for the directory.
func (px *proxy) url() string { return "file://" + filepath.ToSlash(px.dir) }

// releaseTags lists, for each module directory of the plan, the versions
// tagged in the repository ("<dir>/vX.Y.Z"), oldest first.
func releaseTags(p *Plan) (map[string][]string, error) {
	out, err := exec.Command("git", "-C", p.Root, "tag", "--list").Output()
	if err != nil {
		// A tree without git history has no tags to serve.
		if _, statErr := os.Stat(filepath.Join(p.Root, ".git")); statErr != nil {
			return map[string][]string{}, nil
		}
		return nil, fmt.Errorf("git tag --list: %w", err)
	}
	tags := map[string][]string{}
	for _, tag := range strings.Fields(string(out)) {
		i := strings.LastIndex(tag, "/")
		if i < 0 {
			continue
		}
		dir, v := tag[:i], tag[i+1:]
		if semver.IsValid(v) && slices.ContainsFunc(p.Modules, func(m *Module) bool { return m.Dir == dir }) {
			tags[dir] = append(tags[dir], v)
		}
	}
	for dir := range tags {
		semver.Sort(tags[dir])
	}
	return tags, nil
}

// extractTag writes the tree of m at tag into dest and returns the
// module's directory inside it.
func extractTag(p *Plan, m *Module, version, dest string) (string, error) {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	archive := exec.Command("git", "-C", p.Root, "archive", "--format=tar", m.Tag(version), "--", m.Dir)
	untar := exec.Command("tar", "-x", "-C", dest)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err
	}
	untar.Stdin = pipe
	// One buffer each: the two processes' output is copied concurrently.
	var archiveErr, untarErr bytes.Buffer
	archive.Stderr, untar.Stderr = &archiveErr, &untarErr
	if err := untar.Start(); err != nil {
		return "", err
	}
	if err := archive.Run(); err != nil {
		untar.Wait()
		return "", fmt.Errorf("git archive %s: %v: %s", m.Tag(version), err, archiveErr.String())
	}
	if err := untar.Wait(); err != nil {
		return "", fmt.Errorf("untar %s: %v: %s", m.Tag(version), err, untarErr.String())
	}
	return filepath.Join(dest, filepath.FromSlash(m.Dir)), nil
}
